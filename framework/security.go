package framework

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Errors of the connectivity options. Match them with errors.Is.
var (
	// ErrAuthFailed reports credentials the server rejected (ZooKeeper's
	// AuthFailed, after which it closes the connection): an unknown scheme,
	// or credentials the scheme's provider refuses. A wrong digest password
	// is not rejected here: digest only names the caller, and a node whose
	// ACL does not name it answers zk.ErrNoAuth.
	ErrAuthFailed = errors.New("framework: authentication failed")
	// ErrTLSHandshake reports a TLS connection that could not be set up: a
	// certificate the client does not trust, a server that requires a client
	// certificate and got none (or one it does not trust), a server that does
	// not speak TLS on that port. The error also wraps crypto/tls's.
	ErrTLSHandshake = errors.New("framework: TLS handshake failed")
	// ErrNoChroot reports an operation that failed with zk.ErrNoNode because
	// the chroot of the connect string does not exist on the server. The
	// error also matches zk.ErrNoNode.
	ErrNoChroot = errors.New("framework: the connect string's chroot does not exist")
	// ErrTTLNotEnabled reports a TTL create on a server started without
	// extendedTypesEnabled=true (zoo.cfg, or the system property
	// zookeeper.extendedTypesEnabled), which answers Unimplemented.
	ErrTTLNotEnabled = errors.New("framework: TTL nodes need extendedTypesEnabled=true on the server")
)

// ACLProvider gives the ACL of each node the client creates, as Curator's
// ACLProvider does. ForPath is asked first, with the node's path as the
// server sees it below the chroot (namespace included, protection prefix
// included, sequence suffix not yet known); when it returns no ACL,
// DefaultACL is used, and when that is empty too, world:anyone with every
// permission. It is called for every create the client and the recipes
// make: the node itself, the parents made by CreatingParentsIfNeeded and
// CreatingParentContainersIfNeeded, the namespace node, and the creates of
// a Transaction. An explicit CreateBuilder.WithACL wins over it. It must
// be safe for concurrent use and must not block.
type ACLProvider interface {
	DefaultACL() []zk.ACL
	ForPath(path string) []zk.ACL
}

// staticACL is Builder.ACL's provider: one ACL for every node.
type staticACL []zk.ACL

func (a staticACL) DefaultACL() []zk.ACL    { return a }
func (a staticACL) ForPath(string) []zk.ACL { return a }

// auth is one Builder.Authorization.
type auth struct {
	scheme string
	data   []byte
}

// connOptions holds the Builder's connectivity settings beyond the connect
// string: authentication, the ACL provider and TLS.
type connOptions struct {
	auths  []auth
	acls   ACLProvider // nil: world:anyone, all permissions
	aclErr error       // a bad Builder.ACL, reported by Build
	tls    *tls.Config // nil: plain TCP
}

// check reports a bad connectivity setting when Build runs.
func (o *connOptions) check() error {
	for i, a := range o.auths {
		if err := checkAuth(a); err != nil {
			return fmt.Errorf("%w: authorization %d: %v", ErrInvalidArgument, i, err)
		}
	}
	return o.aclErr
}

// checkAuth checks one Authorization as far as the client can.
func checkAuth(a auth) error {
	switch {
	case a.scheme == "":
		return errors.New("empty scheme")
	case strings.ContainsFunc(a.scheme, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return fmt.Errorf("scheme %q contains a space or a control character", a.scheme)
	case len(a.data) > maxAuthLen:
		return fmt.Errorf("scheme %q: %d bytes of credentials, more than %d", a.scheme, len(a.data), maxAuthLen)
	case a.scheme == "digest":
		user, _, ok := strings.Cut(string(a.data), ":")
		if !ok || user == "" {
			return errors.New(`digest credentials must be "user:password"`)
		}
	}
	return nil
}

// maxAuthLen bounds one credential, far below the server's 1 MB packets.
const maxAuthLen = 64 << 10

// checkACL checks a static ACL as far as the client can: the server rejects
// the rest with zk.ErrInvalidACL.
func checkACL(acl []zk.ACL) error {
	for i, a := range acl {
		if a.Scheme == "" {
			return fmt.Errorf("%w: ACL entry %d has an empty scheme", ErrInvalidArgument, i)
		}
		if a.Perms&^zk.PermAll != 0 {
			return fmt.Errorf("%w: ACL entry %d: permissions %#x beyond zk.PermAll", ErrInvalidArgument, i, a.Perms)
		}
	}
	return nil
}

// Authorization adds credentials that the client sends on every connection
// it opens, before anything else: go-zookeeper's AddAuth, but in place
// before the client reports Connected (or Reconnected) and before any
// request runs, on the first session and on every later one, including the
// session the client opens after it declared the last one Lost. Call it
// several times for several identities; "digest" with "user:password" is
// the common one. Credentials the server rejects make Start fail with an
// error matching ErrAuthFailed; after Start, the client logs the rejection
// at Error and keeps trying, Suspended.
func (b *Builder) Authorization(scheme string, auth []byte) *Builder {
	b.conn.auths = append(b.conn.auths, newAuth(scheme, auth))
	return b
}

func newAuth(scheme string, data []byte) auth {
	return auth{scheme: scheme, data: append([]byte(nil), data...)}
}

// ACLProvider sets the provider of the ACL of every node the client and
// the recipes create (see ACLProvider). nil restores the default,
// world:anyone with every permission. It replaces an earlier ACL call.
func (b *Builder) ACLProvider(p ACLProvider) *Builder {
	b.conn.acls, b.conn.aclErr = p, nil
	return b
}

// TLSConfig makes the client speak TLS to the servers (their
// secureClientPort) with a clone of cfg: RootCAs for the servers'
// certificates, Certificates for a client certificate when the servers ask
// for one (ssl.clientAuth). When cfg has no ServerName, each server's host
// from the connect string is checked against its certificate (a name, or
// an IP address SAN), and the connect string's host names are resolved at
// each dial rather than once. nil means plain TCP, the default.
//
// TLS runs over the connection the Dialer returns (net.DialTimeout by
// default), so a Dialer still chooses the route, proxy or fault injection;
// the handshake is bounded by the connection timeout. A failed handshake
// makes Start fail, at the connection timeout (an ensemble may have other
// servers to try), with an error matching ErrTLSHandshake that wraps
// crypto/tls's, such as x509.UnknownAuthorityError.
func (b *Builder) TLSConfig(cfg *tls.Config) *Builder {
	if cfg == nil {
		b.conn.tls = nil
		return b
	}
	b.conn.tls = cfg.Clone()
	return b
}

// aclFor returns the ACL of a node the client creates at full, a server
// path (chroot included).
func (c *Client) aclFor(full string) []zk.ACL {
	p := full
	if c.chroot != "" {
		p = strings.TrimPrefix(full, c.chroot)
		if p == "" {
			p = "/"
		}
	}
	if c.connOpts.acls != nil {
		if acl := c.connOpts.acls.ForPath(p); len(acl) > 0 {
			return acl
		}
		if acl := c.connOpts.acls.DefaultACL(); len(acl) > 0 {
			return acl
		}
	}
	return worldACL
}

var worldACL = zk.WorldACL(zk.PermAll)

// ACLProvider returns the client's ACL provider, or nil when nodes get
// world:anyone with every permission.
func (c *Client) ACLProvider() ACLProvider {
	if c == nil {
		return nil
	}
	return c.connOpts.acls
}

// dialTLS runs the TLS handshake over nc, bounded by timeout.
func dialTLS(nc net.Conn, addr string, cfg *tls.Config, timeout time.Duration) (net.Conn, error) {
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg.ServerName = host
	}
	tc := tls.Client(nc, cfg)
	tc.SetDeadline(time.Now().Add(timeout))
	if err := tc.Handshake(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w with %s: %w", ErrTLSHandshake, addr, err)
	}
	tc.SetDeadline(time.Time{})
	return tc, nil
}

// namedHosts is the host provider of a TLS client: it keeps the connect
// string's host names, so that the dialer (and the TLS handshake, which
// checks the name) gets them, where go-zookeeper's DNSHostProvider would
// give resolved IP addresses. It tries the servers in a random order, and
// says when it has gone round them all without a connection, as
// DNSHostProvider does.
type namedHosts struct {
	mu        sync.Mutex
	servers   []string
	cur, last int
}

func (h *namedHosts) Init(servers []string) error {
	if len(servers) == 0 {
		return errors.New("framework: no servers")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.servers = append([]string(nil), servers...)
	rand.Shuffle(len(h.servers), func(i, j int) { h.servers[i], h.servers[j] = h.servers[j], h.servers[i] })
	h.cur, h.last = -1, -1
	return nil
}

func (h *namedHosts) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.servers)
}

func (h *namedHosts) Next() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cur = (h.cur + 1) % len(h.servers)
	retryStart := h.cur == h.last
	if h.last == -1 {
		h.last = 0
	}
	return h.servers[h.cur], retryStart
}

func (h *namedHosts) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = h.cur
}

// ZooKeeper's wire values for the auth packet the client sends itself.
const (
	authXid    = -4 // the Java client's AUTHPACKET_XID
	opSetAuth  = 100
	codeAuthOK = 0
)

// authXidWire is authXid as it goes on the wire.
const authXidWire uint32 = 1<<32 + authXid

// authConn is the layer under the wire (wire.go) that sends the
// credentials: on go-zookeeper's first read of a connection, which is for
// the server's connect response, it reads that response itself, sends every
// credential, reads each answer, and then hands the connect response up. So
// the credentials are in place before go-zookeeper learns of the session
// (and the client reports it), and before any request of go-zookeeper's,
// whose send loop starts after that. An expired session (ID 0) gets no
// credentials: the server closes it. It also names a TLS alert that ends
// the connection before the connect response.
type authConn struct {
	net.Conn
	auths    []auth
	isTLS    bool
	fail     func(error) // told of a rejection that retrying will not cure
	primed   bool        // the first Read has run
	pre      []byte      // the connect response, for go-zookeeper
	deadline time.Time   // the handshake's read deadline, for the writes
}

func (a *authConn) SetReadDeadline(t time.Time) error {
	if !a.primed {
		a.deadline = t
	}
	return a.Conn.SetReadDeadline(t)
}

func (a *authConn) Read(b []byte) (int, error) {
	if !a.primed {
		a.primed = true
		if err := a.prime(); err != nil {
			a.pre = nil
			return 0, a.firstReadErr(err)
		}
	}
	if len(a.pre) > 0 {
		n := copy(b, a.pre)
		a.pre = a.pre[n:]
		return n, nil
	}
	return a.Conn.Read(b)
}

// firstReadErr names a TLS alert that ends a connection before its
// connect response: with TLS 1.3 a server that rejects the client's
// certificate (or its lack of one) says so only after the client finished
// its side of the handshake, in the first read.
func (a *authConn) firstReadErr(err error) error {
	var op *net.OpError
	if !a.isTLS || errors.Is(err, ErrAuthFailed) || !errors.As(err, &op) || op.Op != "remote error" {
		return err
	}
	err = fmt.Errorf("%w: the server rejected the connection (does it require a client certificate it trusts?): %w", ErrTLSHandshake, err)
	if a.fail != nil {
		a.fail(err)
	}
	return err
}

// prime reads the connect response and sends the credentials.
func (a *authConn) prime() error {
	var lenBuf [4]byte
	if _, err := io.ReadFull(a.Conn, lenBuf[:]); err != nil {
		return err
	}
	size := binary.BigEndian.Uint32(lenBuf[:])
	if size > 1<<20 {
		return fmt.Errorf("framework: connect response of %d bytes", size)
	}
	resp := make([]byte, 4+size)
	copy(resp, lenBuf[:])
	if _, err := io.ReadFull(a.Conn, resp[4:]); err != nil {
		return err
	}
	a.pre = resp
	// ConnectResponse: protocolVersion int32, timeOut int32, sessionId int64, ...
	if len(a.auths) == 0 || size < 16 || binary.BigEndian.Uint64(resp[12:20]) == 0 {
		return nil
	}
	if !a.deadline.IsZero() {
		a.Conn.SetWriteDeadline(a.deadline)
		defer a.Conn.SetWriteDeadline(time.Time{})
	}
	for _, cred := range a.auths {
		if err := a.send(cred); err != nil {
			return err
		}
	}
	return nil
}

// send sends one credential and reads its answer.
func (a *authConn) send(cred auth) error {
	body := 4 + 4 + 4 + 4 + len(cred.scheme) + 4 + len(cred.data)
	pkt := make([]byte, 0, 4+body)
	pkt = binary.BigEndian.AppendUint32(pkt, uint32(body))
	pkt = binary.BigEndian.AppendUint32(pkt, authXidWire)
	pkt = binary.BigEndian.AppendUint32(pkt, opSetAuth)
	pkt = binary.BigEndian.AppendUint32(pkt, 0) // AuthPacket.type
	pkt = binary.BigEndian.AppendUint32(pkt, uint32(len(cred.scheme)))
	pkt = append(pkt, cred.scheme...)
	pkt = binary.BigEndian.AppendUint32(pkt, uint32(len(cred.data)))
	pkt = append(pkt, cred.data...)
	if _, err := a.Conn.Write(pkt); err != nil {
		return err
	}
	// ReplyHeader: xid int32, zxid int64, err int32.
	var lenBuf [4]byte
	if _, err := io.ReadFull(a.Conn, lenBuf[:]); err != nil {
		return fmt.Errorf("framework: waiting for the answer to the %q credentials: %w", cred.scheme, err)
	}
	n := binary.BigEndian.Uint32(lenBuf[:])
	if n < 16 || n > 1<<20 {
		return fmt.Errorf("framework: answer of %d bytes to the %q credentials", n, cred.scheme)
	}
	reply := make([]byte, n)
	if _, err := io.ReadFull(a.Conn, reply); err != nil {
		return fmt.Errorf("framework: waiting for the answer to the %q credentials: %w", cred.scheme, err)
	}
	if xid := int32(binary.BigEndian.Uint32(reply[:4])); xid != authXid {
		return fmt.Errorf("framework: answer with xid %d to the %q credentials", xid, cred.scheme)
	}
	if code := int32(binary.BigEndian.Uint32(reply[12:16])); code != codeAuthOK {
		err := fmt.Errorf("%w: the server rejected the %q credentials (ZooKeeper error %d: %w)",
			ErrAuthFailed, cred.scheme, code, zk.ErrAuthFailed)
		if a.fail != nil {
			a.fail(err)
		}
		return err
	}
	return nil
}
