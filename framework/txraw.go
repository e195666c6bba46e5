package framework

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/framework/internal/transport"
	"github.com/go-zookeeper/zk"
)

// ZooKeeper's opcodes of a multi and of its operations (ZooDefs.OpCode).
const (
	opcCreate          int32 = 1
	opcDelete          int32 = 2
	opcSetData         int32 = 5
	opcCheck           int32 = 13
	opcMulti           int32 = 14
	opcCreate2         int32 = 15
	opcCreateContainer int32 = 19
	opcCreateTTL       int32 = 21
	opcError           int32 = -1
)

// rawOp is one operation of a multi the framework encodes itself: a
// transaction holding a container or TTL create, which go-zookeeper's
// Multi cannot carry.
type rawOp struct {
	typ     OpType
	path    string // with the namespace
	data    []byte
	acl     []zk.ACL
	mode    CreateMode
	ttl     time.Duration
	version int32
}

// encodeMulti encodes a MultiOperationRecord: for each operation a
// MultiHeader{int type; boolean done; int err} and its request, then a
// header {-1, true, -1}.
func encodeMulti(ops []rawOp) []byte {
	var b []byte
	header := func(typ int32, done bool) {
		b = binary.BigEndian.AppendUint32(b, uint32(typ))
		if done {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = binary.BigEndian.AppendUint32(b, ^uint32(0)) // err -1
	}
	buffer := func(d []byte) {
		if d == nil {
			b = binary.BigEndian.AppendUint32(b, ^uint32(0)) // a null buffer
			return
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(d)))
		b = append(b, d...)
	}
	for _, op := range ops {
		switch op.typ {
		case OpCreate:
			typ := opcCreate
			switch {
			case op.mode == Container:
				typ = opcCreateContainer
			case op.mode.IsTTL():
				typ = opcCreateTTL
			}
			header(typ, false)
			b = transport.AppendString(b, op.path)
			buffer(op.data)
			b = binary.BigEndian.AppendUint32(b, uint32(len(op.acl)))
			for _, a := range op.acl {
				b = binary.BigEndian.AppendUint32(b, uint32(a.Perms))
				b = transport.AppendString(b, a.Scheme)
				b = transport.AppendString(b, a.ID)
			}
			b = binary.BigEndian.AppendUint32(b, uint32(op.mode))
			if typ == opcCreateTTL {
				b = binary.BigEndian.AppendUint64(b, uint64(op.ttl.Milliseconds()))
			}
		case OpDelete:
			header(opcDelete, false)
			b = transport.AppendString(b, op.path)
			b = binary.BigEndian.AppendUint32(b, uint32(op.version))
		case OpSetData:
			header(opcSetData, false)
			b = transport.AppendString(b, op.path)
			buffer(op.data)
			b = binary.BigEndian.AppendUint32(b, uint32(op.version))
		case OpCheck:
			header(opcCheck, false)
			b = transport.AppendString(b, op.path)
			b = binary.BigEndian.AppendUint32(b, uint32(op.version))
		}
	}
	header(-1, true)
	return b
}

// errMultiReply: a multi reply the framework could not decode.
var errMultiReply = errors.New("framework: malformed multi reply")

// reader reads jute fields from a reply body.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errMultiReply
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) int32() int32 {
	v := r.take(4)
	if v == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(v))
}

func (r *reader) int64() int64 {
	v := r.take(8)
	if v == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

func (r *reader) bool() bool {
	v := r.take(1)
	return v != nil && v[0] != 0
}

func (r *reader) string() string { return string(r.take(int(r.int32()))) }

func (r *reader) stat() *zk.Stat {
	s := &zk.Stat{}
	s.Czxid, s.Mzxid, s.Ctime, s.Mtime = r.int64(), r.int64(), r.int64(), r.int64()
	s.Version, s.Cversion, s.Aversion = r.int32(), r.int32(), r.int32()
	s.EphemeralOwner = r.int64()
	s.DataLength, s.NumChildren = r.int32(), r.int32()
	s.Pzxid = r.int64()
	return s
}

// decodeMulti decodes a MultiResponse: for each operation a MultiHeader
// and its result, up to a header marked done.
func decodeMulti(body []byte) ([]zk.MultiResponse, error) {
	r := &reader{b: body}
	var out []zk.MultiResponse
	for {
		typ, done, _ := r.int32(), r.bool(), r.int32() // the header's err repeats the result's
		if r.err != nil {
			return nil, r.err
		}
		if done {
			return out, nil
		}
		var m zk.MultiResponse
		switch typ {
		case opcCreate:
			m.String = r.string()
		case opcCreate2, opcCreateContainer, opcCreateTTL:
			m.String = r.string()
			m.Stat = r.stat()
		case opcSetData:
			m.Stat = r.stat()
		case opcDelete, opcCheck:
		case opcError:
			m.Error = codeError(r.int32())
		default:
			return nil, fmt.Errorf("%w: operation type %d", errMultiReply, typ)
		}
		if r.err != nil {
			return nil, r.err
		}
		out = append(out, m)
	}
}

// codeError is the error go-zookeeper v1.0.4 returns for a server's error
// code: its sentinel where it has one, else "unknown error: <code>".
func codeError(code int32) error {
	switch code {
	case 0:
		return nil
	case -100:
		return zk.ErrAPIError
	case -101:
		return zk.ErrNoNode
	case -102:
		return zk.ErrNoAuth
	case -103:
		return zk.ErrBadVersion
	case -108:
		return zk.ErrNoChildrenForEphemerals
	case -110:
		return zk.ErrNodeExists
	case -111:
		return zk.ErrNotEmpty
	case -112:
		return zk.ErrSessionExpired
	case -114:
		return zk.ErrInvalidACL
	case -115:
		return zk.ErrAuthFailed
	case -116:
		return zk.ErrClosing
	case -117:
		return zk.ErrNothing
	case -118:
		return zk.ErrSessionMoved
	case -123:
		return zk.ErrReconfigDisabled
	case -8:
		return zk.ErrBadArguments
	}
	return fmt.Errorf("unknown error: %v", code)
}

// rawMulti sends ops as one multi on the client's current connection and
// waits for its reply, or for that connection to end (a connection loss,
// after which the multi may have been applied), as go-zookeeper's Multi
// does: the caller's ctx does not cut the wait short, so that a reply is
// never dropped after the request went out.
//
// A session other than 0 binds the multi to it (Transaction.InSession).
func (c *Client) rawMulti(ops []rawOp, session int64) ([]zk.MultiResponse, error) {
	c.mu.Lock()
	w, ctx := c.wire, c.ctx
	c.mu.Unlock()
	if w == nil || ctx == nil {
		return nil, zk.ErrConnectionClosed
	}
	var (
		code int32
		body []byte
		err  error
	)
	if session != 0 {
		code, body, err = w.CallSession(ctx, session, opcMulti, encodeMulti(ops))
	} else {
		code, body, err = w.Call(ctx, opcMulti, encodeMulti(ops))
	}
	switch {
	case errors.Is(err, transport.ErrOtherSession):
		return nil, fmt.Errorf("%w: the client runs another session than the transaction's", ErrSessionLost)
	case errors.Is(err, transport.ErrNotConnected), errors.Is(err, transport.ErrConnClosed):
		return nil, zk.ErrConnectionClosed
	case err != nil && ctx.Err() != nil:
		return nil, ErrClosed
	case err != nil:
		return nil, err
	}
	resp, derr := decodeMulti(body)
	if derr != nil && code == 0 {
		return nil, derr
	}
	// As go-zookeeper's Multi: the first failing operation's error is the
	// multi's.
	for _, m := range resp {
		if m.Error != nil {
			return resp, m.Error
		}
	}
	return resp, codeError(code)
}
