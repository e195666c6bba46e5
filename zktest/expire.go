package zktest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// opCloseSession is ZooKeeper's closeSession request type.
const opCloseSession int32 = -11

// expireTimeout bounds ExpireSession when ctx has no earlier deadline.
const expireTimeout = 10 * time.Second

// ExpireSession ends a client's session on the server, as if it had expired.
// It opens a raw ZooKeeper connection that attaches to conn's session (its ID
// and password), then sends closeSession. The server deletes the session's
// ephemeral nodes and closes conn's connection; when conn reconnects it is
// told that its session expired (zk.StateExpired).
//
// It tries the servers of connectString in order until one answers. conn must
// have a session and should be connected: the password is read from conn's
// unexported state, which go-zookeeper rewrites when it starts a new session. An already expired session gives an error wrapping
// zk.ErrSessionExpired.
func ExpireSession(ctx context.Context, connectString string, conn *zk.Conn) error {
	id := conn.SessionID()
	if id == 0 {
		return errors.New("zktest: expire session: the connection has no session")
	}
	passwd := sessionPassword(conn)
	ctx, cancel := context.WithTimeout(ctx, expireTimeout)
	defer cancel()
	var errs []error
	for _, addr := range splitConnectString(connectString) {
		err := closeSession(ctx, addr, id, passwd)
		if err == nil || errors.Is(err, zk.ErrSessionExpired) {
			return err
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("zktest: expire session 0x%x: %w", id, errors.Join(errs...))
}

// sessionPassword reads go-zookeeper's unexported zk.Conn.passwd. Reading an
// unexported []byte field with reflect.Value.Bytes is allowed.
func sessionPassword(conn *zk.Conn) []byte {
	return append([]byte(nil), reflect.ValueOf(conn).Elem().FieldByName("passwd").Bytes()...)
}

// splitConnectString returns the addresses of "host:port,host:port/chroot".
func splitConnectString(s string) []string {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	var addrs []string
	for a := range strings.SplitSeq(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// closeSession attaches to session id on the server at addr and closes it.
func closeSession(ctx context.Context, addr string, id int64, passwd []byte) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(deadline); err != nil {
			return err
		}
	}

	// ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId,
	// passwd, readOnly.
	req := binary.BigEndian.AppendUint32(nil, 0)
	req = binary.BigEndian.AppendUint64(req, 0)
	req = binary.BigEndian.AppendUint32(req, 4000)
	req = binary.BigEndian.AppendUint64(req, uint64(id))
	req = binary.BigEndian.AppendUint32(req, uint32(len(passwd)))
	req = append(req, passwd...)
	req = append(req, 0)
	if err := writeFrame(conn, req); err != nil {
		return err
	}
	// ConnectResponse: protocolVersion, timeOut, sessionId, passwd
	// (then, from newer servers, readOnly).
	resp, err := readFrame(conn)
	if err != nil {
		return fmt.Errorf("%s: connect response: %w", addr, err)
	}
	if len(resp) < 16 {
		return fmt.Errorf("%s: short connect response (%d bytes)", addr, len(resp))
	}
	timeOut := int32(binary.BigEndian.Uint32(resp[4:]))
	got := int64(binary.BigEndian.Uint64(resp[8:]))
	if timeOut <= 0 || got != id {
		return fmt.Errorf("zktest: session 0x%x: %w", id, zk.ErrSessionExpired)
	}

	// RequestHeader: xid, type. closeSession has no body.
	op := opCloseSession
	req = binary.BigEndian.AppendUint32(nil, 1)
	req = binary.BigEndian.AppendUint32(req, uint32(op))
	if err := writeFrame(conn, req); err != nil {
		return err
	}
	// ReplyHeader: xid, zxid, err. The server may close first.
	reply, err := readFrame(conn)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: closeSession reply: %w", addr, err)
	}
	if len(reply) >= 16 {
		if code := int32(binary.BigEndian.Uint32(reply[12:])); code != 0 {
			return fmt.Errorf("%s: closeSession: error code %d", addr, code)
		}
	}
	return nil
}

// writeFrame writes b with its int32 length prefix.
func writeFrame(w io.Writer, b []byte) error {
	_, err := w.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...))
	return err
}

// readFrame reads one length-prefixed frame.
func readFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > 1<<20 {
		return nil, fmt.Errorf("frame of %d bytes", size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}
