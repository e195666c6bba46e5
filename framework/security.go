package framework

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"github.com/go-curator/curator/framework/internal/transport"
	"github.com/go-curator/curator/internal/errtext"
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

// connOptions holds the Builder's connectivity settings beyond the connect
// string: authentication, the ACL provider and TLS.
type connOptions struct {
	auths  []transport.Credential
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
func checkAuth(a transport.Credential) error {
	switch {
	case a.Scheme == "":
		return errors.New("empty scheme")
	case strings.ContainsFunc(a.Scheme, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return fmt.Errorf("scheme %q contains a space or a control character", a.Scheme)
	case len(a.Data) > maxAuthLen:
		return fmt.Errorf("scheme %q: %d bytes of credentials, more than %d", a.Scheme, len(a.Data), maxAuthLen)
	case a.Scheme == "digest":
		user, _, ok := strings.Cut(string(a.Data), ":")
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

func newAuth(scheme string, data []byte) transport.Credential {
	return transport.Credential{Scheme: scheme, Data: append([]byte(nil), data...)}
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

// rejection wraps the transport's error for a connection the servers
// rejected in the framework's sentinel.
func rejection(err error) error {
	switch {
	case errors.Is(err, transport.ErrAuthFailed):
		return errtext.Errorf("%w: %w", ErrAuthFailed, err)
	case errors.Is(err, transport.ErrTLSHandshake):
		return errtext.Errorf("%w: %w", ErrTLSHandshake, err)
	}
	return err
}
