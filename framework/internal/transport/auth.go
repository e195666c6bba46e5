package transport

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
)

// Errors of a connection the servers reject. framework wraps them in its
// own sentinels.
var (
	// ErrAuthFailed reports credentials the server rejected; it wraps
	// zk.ErrAuthFailed too.
	ErrAuthFailed = errors.New("transport: authentication failed")
	// ErrTLSHandshake reports a TLS connection that could not be set up.
	ErrTLSHandshake = errors.New("transport: TLS handshake failed")
)

// Credential is one authentication the client sends on every new
// connection: ZooKeeper's scheme (such as "digest") and its data.
type Credential struct {
	Scheme string
	Data   []byte
}

// ZooKeeper's wire values for the auth packet the client sends itself.
const (
	authXid    = -4 // the Java client's AUTHPACKET_XID
	opSetAuth  = 100
	codeAuthOK = 0
)

// authXidWire is authXid as it goes on the wire.
const authXidWire uint32 = 1<<32 + authXid

// Authenticate returns nc with a layer (to go under the Wire's Conn) that
// sends creds: on go-zookeeper's first read of the connection, which is for
// the server's connect response, it reads that response itself, sends
// every credential, reads each answer, and then hands the connect response
// up. So the credentials are in place before go-zookeeper learns of the
// session, and before any request of go-zookeeper's, whose send loop starts
// after that. An expired session (ID 0) gets no credentials: the server
// closes it. With isTLS it also names a TLS alert that ends the connection
// before the connect response. rejected, if not nil, is told of a rejection
// that retrying will not cure (an error matching ErrAuthFailed or
// ErrTLSHandshake).
func Authenticate(nc net.Conn, creds []Credential, isTLS bool, rejected func(error)) net.Conn {
	return &authConn{Conn: nc, creds: creds, isTLS: isTLS, fail: rejected}
}

type authConn struct {
	net.Conn
	creds    []Credential
	isTLS    bool
	fail     func(error)
	primed   bool      // the first Read has run
	pre      []byte    // the connect response, for go-zookeeper
	deadline time.Time // the handshake's read deadline, for the writes
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
		return fmt.Errorf("transport: connect response of %d bytes", size)
	}
	resp := make([]byte, 4+size)
	copy(resp, lenBuf[:])
	if _, err := io.ReadFull(a.Conn, resp[4:]); err != nil {
		return err
	}
	a.pre = resp
	// ConnectResponse: protocolVersion int32, timeOut int32, sessionId int64, ...
	if len(a.creds) == 0 || size < 16 || binary.BigEndian.Uint64(resp[12:20]) == 0 {
		return nil
	}
	if !a.deadline.IsZero() {
		a.Conn.SetWriteDeadline(a.deadline)
		defer a.Conn.SetWriteDeadline(time.Time{})
	}
	for _, cred := range a.creds {
		if err := a.send(cred); err != nil {
			return err
		}
	}
	return nil
}

// send sends one credential and reads its answer.
func (a *authConn) send(cred Credential) error {
	body := 4 + 4 + 4 + 4 + len(cred.Scheme) + 4 + len(cred.Data)
	pkt := make([]byte, 0, 4+body)
	pkt = binary.BigEndian.AppendUint32(pkt, uint32(body))
	pkt = binary.BigEndian.AppendUint32(pkt, authXidWire)
	pkt = binary.BigEndian.AppendUint32(pkt, opSetAuth)
	pkt = binary.BigEndian.AppendUint32(pkt, 0) // AuthPacket.type
	pkt = binary.BigEndian.AppendUint32(pkt, uint32(len(cred.Scheme)))
	pkt = append(pkt, cred.Scheme...)
	pkt = binary.BigEndian.AppendUint32(pkt, uint32(len(cred.Data)))
	pkt = append(pkt, cred.Data...)
	if _, err := a.Conn.Write(pkt); err != nil {
		return err
	}
	// ReplyHeader: xid int32, zxid int64, err int32.
	var lenBuf [4]byte
	if _, err := io.ReadFull(a.Conn, lenBuf[:]); err != nil {
		return fmt.Errorf("transport: waiting for the answer to the %q credentials: %w", cred.Scheme, err)
	}
	n := binary.BigEndian.Uint32(lenBuf[:])
	if n < 16 || n > 1<<20 {
		return fmt.Errorf("transport: answer of %d bytes to the %q credentials", n, cred.Scheme)
	}
	reply := make([]byte, n)
	if _, err := io.ReadFull(a.Conn, reply); err != nil {
		return fmt.Errorf("transport: waiting for the answer to the %q credentials: %w", cred.Scheme, err)
	}
	if xid := int32(binary.BigEndian.Uint32(reply[:4])); xid != authXid {
		return fmt.Errorf("transport: answer with xid %d to the %q credentials", xid, cred.Scheme)
	}
	if code := int32(binary.BigEndian.Uint32(reply[12:16])); code != codeAuthOK {
		err := fmt.Errorf("%w: the server rejected the %q credentials (ZooKeeper error %d: %w)",
			ErrAuthFailed, cred.Scheme, code, zk.ErrAuthFailed)
		if a.fail != nil {
			a.fail(err)
		}
		return err
	}
	return nil
}

// DialTLS runs the TLS handshake over nc, bounded by timeout, checking the
// server's certificate against addr's host unless cfg names a server.
func DialTLS(nc net.Conn, addr string, cfg *tls.Config, timeout time.Duration) (net.Conn, error) {
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
