package framework

import (
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

// The session and connection timeouts of NewBuilder and NewClient, as in
// Curator.
const (
	DefaultSessionTimeout    = 60 * time.Second
	DefaultConnectionTimeout = 15 * time.Second
)

// Builder builds a Client fluently, as CuratorFrameworkFactory.builder()
// does. Its methods record settings; Build checks them. NewBuilder lists
// the default of every setting.
type Builder struct {
	connectString     string
	sessionTimeout    time.Duration
	connectionTimeout time.Duration
	policy            retry.Policy
	namespace         string
	logger            *slog.Logger
	defaultData       []byte
	hasDefaultData    bool
	errorPolicy       ErrorPolicy
	listeners         []Listener
	dialer            zk.Dialer
	conn              connOptions // authentication, ACL provider, TLS (security.go)
	obs               obsOptions  // metrics hook (observe.go)
	timing            *ensembleTiming

	// Options of create.go and compress.go.
	noContainerParents bool
	compression        CompressionProvider
	compressAll        bool
	tracker            trackerOption // EnsembleTracker (ensemble.go)

	circuit circuitOption // CircuitBreaking (circuit_client.go)
}

// ensembleTiming is the ensemble's timing as EnsembleTiming states it.
type ensembleTiming struct {
	tick      time.Duration
	syncLimit int
}

// NewBuilder returns a Builder with these defaults, Curator's unless said:
//
//   - ConnectString: none; Build fails with ErrInvalidArgument without one.
//   - SessionTimeout: 60 s ([DefaultSessionTimeout]), the timeout asked
//     of the server, which grants one within [2, 20] × its tickTime by
//     default (Client.NegotiatedSessionTimeout).
//   - ConnectionTimeout: 15 s ([DefaultConnectionTimeout]).
//   - RetryPolicy: retry.NewExponentialBackoff(time.Second, 3), backoff
//     from 1 s with at most 3 retries. Curator has no default: its builder
//     needs a policy.
//   - ConnectionStateErrorPolicy: SessionErrorPolicy, where Curator's is
//     StandardErrorPolicy: the session's lease ends holds before the server
//     can expire the session, so a connection blip shorter than the lease
//     need not end them (see "Error policy" in the package doc).
//   - Namespace: none.
//   - ACL and ACLProvider: world:anyone with every permission.
//   - Authorization: none. TLSConfig: nil, plain TCP. Dialer:
//     net.DialTimeout.
//   - DefaultData: the local IP address as text (the first non-loopback
//     IPv4 address, else "127.0.0.1").
//   - Listener: none. Logger: none, the client is silent. Metrics: no hook.
//   - EnsembleTiming: not stated, so a reply counts toward the session's
//     lease only if it arrives within 0.65 of the session timeout.
//   - EnsembleTracker: on when the connect string names two or more
//     servers, off for one.
//   - CircuitBreaking: off; listeners see every state change.
//   - DontUseContainerParents: not set; CreatingParentContainersIfNeeded
//     creates containers.
//   - CompressionProvider: GzipCompression. EnableCompression: off; only
//     operations that ask with Compressed or Decompressed use it.
func NewBuilder() *Builder {
	return &Builder{sessionTimeout: DefaultSessionTimeout, connectionTimeout: DefaultConnectionTimeout,
		errorPolicy: SessionErrorPolicy}
}

// ConnectString sets the servers, "host:port[,host:port...]", with an
// optional chroot suffix, "host:port,host:port/services", as ZooKeeper's
// and Curator's: every path the client is given is then relative to it,
// and so are the paths it returns and those of watch events. A chroot is
// never created by the client; one that does not exist makes operations
// fail with an error matching both zk.ErrNoNode and ErrNoChroot. With a
// Namespace as well, the chroot comes first: "/services" and "shop" put
// "/a" at "/services/shop/a" on the server.
func (b *Builder) ConnectString(s string) *Builder { b.connectString = s; return b }

// SessionTimeout sets the session timeout the client asks for; 60 s
// ([DefaultSessionTimeout]) by default. Build fails with
// ErrInvalidArgument unless d > 0.
func (b *Builder) SessionTimeout(d time.Duration) *Builder { b.sessionTimeout = d; return b }

// ConnectionTimeout sets how long an operation waits for a connection,
// and how long Start waits for a first one when its ctx cannot end; 15 s
// ([DefaultConnectionTimeout]) by default. Build fails with
// ErrInvalidArgument unless d > 0.
func (b *Builder) ConnectionTimeout(d time.Duration) *Builder { b.connectionTimeout = d; return b }

// RetryPolicy sets the policy of the retry loop. nil, the default, is
// retry.NewExponentialBackoff(time.Second, 3).
func (b *Builder) RetryPolicy(p retry.Policy) *Builder { b.policy = p; return b }

// Namespace prefixes every path with "/" + ns; "", the default, is none.
// Build fails with an error matching ErrInvalidArgument if "/" + ns is not
// a valid path.
func (b *Builder) Namespace(ns string) *Builder { b.namespace = ns; return b }

// Logger sets a structured logger. The client is silent by default.
func (b *Builder) Logger(l *slog.Logger) *Builder { b.logger = l; return b }

// DefaultData sets the data recipes write to their nodes when given none.
// Curator's default, and ours, is the local IP address as text.
func (b *Builder) DefaultData(d []byte) *Builder {
	b.defaultData = append([]byte(nil), d...)
	b.hasDefaultData = true
	return b
}

// ConnectionStateErrorPolicy sets which states end the trust in locks:
// SessionErrorPolicy by default, where Curator's is StandardErrorPolicy
// (see NewBuilder).
func (b *Builder) ConnectionStateErrorPolicy(p ErrorPolicy) *Builder { b.errorPolicy = p; return b }

// ACL sets the ACL of every node created without WithACL: the simple form
// of ACLProvider, which it replaces (and which replaces it). The default,
// and ACL with no argument, is world:anyone with all permissions.
func (b *Builder) ACL(acl ...zk.ACL) *Builder {
	b.conn.acls, b.conn.aclErr = nil, nil
	if len(acl) > 0 {
		b.conn.acls = staticACL(append([]zk.ACL(nil), acl...))
		b.conn.aclErr = checkACL(acl)
	}
	return b
}

// Listener adds a connection state listener before Start, so that it sees
// the first state. There is none by default. Build fails with
// ErrInvalidArgument for a nil l.
func (b *Builder) Listener(l Listener) *Builder { b.listeners = append(b.listeners, l); return b }

// Dialer sets the function that opens connections to the servers (tests use
// it to go through a fault proxy); net.DialTimeout by default.
func (b *Builder) Dialer(d zk.Dialer) *Builder { b.dialer = d; return b }

// EnsembleTiming states the tickTime and syncLimit of the ensemble's
// servers (zoo.cfg); by default they are not stated. The session's lease needs them to count a follower's
// replies: a follower keeps answering clients for up to syncLimit ×
// tickTime without hearing from the leader, which alone expires sessions,
// so a stalled or cut-off leader can expire a session its follower still
// answers. With the timing stated, Lost comes before the leader can have
// expired the session through such a stall or cut of up to syncLimit ×
// tickTime; without it, the lease covers none beyond tickTime/2. See "When
// Lost comes" in the package doc for the rule, which stalls it covers, and
// what it costs when syncLimit × tickTime is long next to the session
// timeout. State the largest values of any server. Build fails with
// ErrInvalidArgument unless tickTime > 0 and syncLimit >= 1.
func (b *Builder) EnsembleTiming(tickTime time.Duration, syncLimit int) *Builder {
	b.timing = &ensembleTiming{tick: tickTime, syncLimit: syncLimit}
	return b
}

// DontUseContainerParents (not set by default) makes
// CreatingParentContainersIfNeeded (of
// Create and CheckExists) create missing parents as persistent nodes, and
// the namespace node too, as Curator's dontUseContainerParents does: for
// servers before 3.5, which have no containers, or when empty parents must
// stay.
func (b *Builder) DontUseContainerParents() *Builder { b.noContainerParents = true; return b }

// CompressionProvider sets the provider that Compressed and Decompressed
// (and EnableCompression) use; nil, the default, is GzipCompression, as
// Curator's default is gzip.
func (b *Builder) CompressionProvider(p CompressionProvider) *Builder { b.compression = p; return b }

// EnableCompression (off by default) compresses the data of every create
// and write and
// decompresses the data of every read, as Curator 5's enableCompression
// does, whether or not the operation asks with Compressed or
// Decompressed. Reading a node whose data is not compressed then fails
// with ErrBadCompressedData. Recipes that read and write through the
// client are affected too, which breaks their interoperation with
// clients that do not compress.
func (b *Builder) EnableCompression() *Builder { b.compressAll = true; return b }

// Build checks the settings and returns an unstarted Client. It does no I/O.
func (b *Builder) Build() (*Client, error) {
	servers, chroot, err := parseConnectString(b.connectString)
	if err != nil {
		return nil, err
	}
	if b.sessionTimeout <= 0 || b.connectionTimeout <= 0 {
		return nil, fmt.Errorf("%w: session timeout %v and connection timeout %v must be positive",
			ErrInvalidArgument, b.sessionTimeout, b.connectionTimeout)
	}
	if b.errorPolicy != StandardErrorPolicy && b.errorPolicy != SessionErrorPolicy {
		return nil, fmt.Errorf("%w: unknown error policy %d", ErrInvalidArgument, b.errorPolicy)
	}
	ns := ""
	if b.namespace != "" {
		ns = "/" + b.namespace
		if err := ValidatePath(ns); err != nil {
			return nil, errtext.Errorf("framework: namespace: %w", err)
		}
	}
	if t := b.timing; t != nil && (t.tick <= 0 || t.syncLimit < 1) {
		return nil, fmt.Errorf("%w: ensemble timing: tickTime %v must be positive and syncLimit %d at least 1",
			ErrInvalidArgument, t.tick, t.syncLimit)
	}
	for i, l := range b.listeners {
		if l == nil {
			return nil, fmt.Errorf("%w: listener %d is nil", ErrInvalidArgument, i)
		}
	}
	policy := b.policy
	if policy == nil {
		if policy, err = retry.NewExponentialBackoff(time.Second, 3); err != nil {
			return nil, err
		}
	}
	logger := b.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	data := b.defaultData
	if !b.hasDefaultData {
		data = localAddress()
	}
	if err := b.conn.check(); err != nil {
		return nil, err
	}
	if err := b.obs.check(); err != nil {
		return nil, err
	}
	if err := b.circuit.check(); err != nil {
		return nil, err
	}
	c := newClient(servers, b.sessionTimeout, b.connectionTimeout, policy, chroot+ns, logger, data, b.errorPolicy, b.dialer)
	c.chroot = chroot
	c.connOpts = b.conn
	c.connOpts.auths = slices.Clone(b.conn.auths)
	c.obsOpts = b.obs
	if b.timing != nil {
		c.timing = *b.timing
	}
	c.noContainerParents = b.noContainerParents
	c.compression, c.compressAll = b.compression, b.compressAll
	c.ens.track = b.tracker.enabled(len(servers))
	c.applyCircuit(b.circuit)
	for _, l := range b.listeners {
		c.AddListener(l)
	}
	return c, nil
}

// NewClient builds a client with Curator's defaults, the given servers and
// retry policy: CuratorFrameworkFactory.newClient.
func NewClient(connectString string, policy retry.Policy) (*Client, error) {
	return NewBuilder().ConnectString(connectString).RetryPolicy(policy).Build()
}

// parseConnectString returns the servers of "host:port,...[/chroot]" and
// the chroot ("" for none or "/"), as ZooKeeper's ConnectStringParser
// reads them: the chroot is everything from the first "/", and must be a
// valid path. A chroot holding a "," (a server after the chroot) is
// refused.
func parseConnectString(s string) (servers []string, chroot string, err error) {
	if strings.TrimSpace(s) == "" {
		return nil, "", fmt.Errorf("%w: empty connect string", ErrInvalidArgument)
	}
	hosts := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hosts, chroot = s[:i], strings.TrimSpace(s[i:])
		if strings.Contains(chroot, ",") {
			return nil, "", fmt.Errorf("%w: connect string %q: the chroot suffix must follow the last server", ErrInvalidArgument, s)
		}
		if err := ValidatePath(chroot); err != nil {
			return nil, "", errtext.Errorf("%w: connect string %q: chroot: %w", ErrInvalidArgument, s, err)
		}
		if chroot == "/" {
			chroot = ""
		}
	}
	for _, hp := range strings.Split(hosts, ",") {
		hp = strings.TrimSpace(hp)
		host, port, err := net.SplitHostPort(hp)
		if err != nil {
			if hp == "" || strings.Contains(hp, ":") {
				return nil, "", fmt.Errorf("%w: connect string %q: %v", ErrInvalidArgument, s, err)
			}
			host, port, hp = hp, "2181", net.JoinHostPort(hp, "2181")
		}
		if n, err := strconv.Atoi(port); host == "" || err != nil || n < 1 || n > 65535 {
			return nil, "", fmt.Errorf("%w: connect string %q: %q needs a host and a port from 1 to 65535",
				ErrInvalidArgument, s, hp)
		}
		servers = append(servers, hp)
	}
	return servers, chroot, nil
}

// localAddress returns the first non-loopback IPv4 address, or 127.0.0.1,
// as text: Curator's default node data.
func localAddress() []byte {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				return []byte(n.IP.String())
			}
		}
	}
	return []byte("127.0.0.1")
}
