package transport

import (
	"context"
	"encoding/binary"
	"errors"
)

// Errors of Call. framework maps both to a connection loss.
var (
	// ErrNotConnected: the wire has no connection with a session now.
	ErrNotConnected = errors.New("transport: no connection with a session")
	// ErrConnClosed: the connection closed before the reply came.
	ErrConnClosed = errors.New("transport: connection closed before the reply")
	// ErrOtherSession: the current connection runs another session than
	// the one CallSession was given; nothing was written.
	ErrOtherSession = errors.New("transport: the connection runs another session")
)

// ZooKeeper 3.6+ opcodes and values go-zookeeper v1.0.4 does not have
// (ZooDefs.OpCode, AddWatchModes, WatcherType in ZooKeeper's source).
const (
	OpCheckWatches  int32 = 17
	OpRemoveWatches int32 = 18
	OpSetWatches2   int32 = 105
	OpAddWatch      int32 = 106

	AddWatchPersistent          int32 = 0
	AddWatchPersistentRecursive int32 = 1

	WatcherChildren int32 = 1
	WatcherData     int32 = 2
	WatcherAny      int32 = 3

	// Answers the framework branches on.
	CodeOK            int32 = 0
	CodeUnimplemented int32 = -6
	CodeNoWatcher     int32 = -121
)

// The xids of requests Call injects: a negative range disjoint from
// go-zookeeper's (positive, and -1 watch, -2 ping, -4 auth, -8 setWatches)
// and from handshakeXid.
const (
	callXidTop  = -1 << 20 // the first xid
	callXidSpan = 1 << 24  // xids cycle through [callXidTop-callXidSpan+1, callXidTop]
)

// isCallXid reports whether xid is one Call injects.
func isCallXid(xid int32) bool { return xid <= callXidTop && xid > callXidTop-callXidSpan }

// callReply is the answer to one injected request.
type callReply struct {
	code int32
	body []byte
}

// Call writes a request with opcode and body on the wire's current
// connection (the latest whose handshake was answered with a session, and
// not closed), under an xid of its own, and returns the reply's error code
// (0 for success) and body. It returns ErrNotConnected when there is no
// such connection, ErrConnClosed when the connection closes before the
// reply, and ctx's error when ctx ends first (the reply is then dropped
// when it comes). go-zookeeper never sees the request or its reply; the
// request counts in the session's lease as go-zookeeper's own do.
//
// The server answers one connection's requests in order, so a request
// Call writes is ordered with go-zookeeper's on the same connection.
func (w *Wire) Call(ctx context.Context, opcode int32, body []byte) (int32, []byte, error) {
	return w.call(ctx, 0, opcode, body)
}

// CallSession is Call on a connection of session only: when the current
// connection runs another session (or none), it writes nothing and
// returns ErrOtherSession (ErrNotConnected). A request it writes runs on
// session or, once the server has expired session, not at all: the
// server never applies it under a later session.
func (w *Wire) CallSession(ctx context.Context, session int64, opcode int32, body []byte) (int32, []byte, error) {
	if session == 0 {
		return 0, nil, ErrOtherSession
	}
	return w.call(ctx, session, opcode, body)
}

func (w *Wire) call(ctx context.Context, session int64, opcode int32, body []byte) (int32, []byte, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	h := w.cur.Load()
	if h == nil {
		return 0, nil, ErrNotConnected
	}
	if session != 0 && h.session.Load() != session {
		return 0, nil, ErrOtherSession
	}
	ch, xid, err := h.inject(opcode, body)
	if err != nil {
		return 0, nil, err
	}
	select {
	case r := <-ch:
		return r.code, r.body, nil
	case <-h.closed:
		h.forget(xid)
		// A reply read just before the close still counts.
		select {
		case r := <-ch:
			return r.code, r.body, nil
		default:
		}
		return 0, nil, ErrConnClosed
	case <-ctx.Done():
		h.forget(xid)
		return 0, nil, ctx.Err()
	}
}

// LastZxid returns the largest zxid a reply carried on the wire, or 0: the
// relativeZxid of a setWatches2 request.
func (w *Wire) LastZxid() int64 { return w.lastZxid.Load() }

// inject writes one request under a fresh injected xid and returns the
// channel its reply will come on.
func (h *Conn) inject(opcode int32, body []byte) (<-chan callReply, int32, error) {
	frame := make([]byte, 12, 12+len(body))
	frame = append(frame, body...)
	binary.BigEndian.PutUint32(frame[0:4], uint32(len(frame)-4))
	binary.BigEndian.PutUint32(frame[8:12], uint32(opcode))
	ch := make(chan callReply, 1)
	now := h.w.clock.Now()
	h.wmu.Lock()
	select {
	case <-h.closed:
		h.wmu.Unlock()
		return nil, 0, ErrConnClosed
	default:
	}
	if h.calls == nil {
		h.calls = make(map[int32]chan callReply)
	}
	if len(h.calls) >= callXidSpan/2 {
		h.wmu.Unlock()
		return nil, 0, errors.New("transport: too many injected requests pending")
	}
	var xid int32
	for {
		n := h.w.nextCall.Add(1) - 1
		xid = callXidTop - int32(n%callXidSpan)
		if _, busy := h.calls[xid]; !busy { // never reuse an xid still pending
			break
		}
	}
	binary.BigEndian.PutUint32(frame[4:8], uint32(xid))
	h.calls[xid] = ch
	h.lastWrite = now
	h.pending = append(h.pending, sent{xid: xid, at: now})
	// Hold wr before letting wmu go, so that requests are written in the
	// order pending records them.
	h.wr.Lock()
	h.wmu.Unlock()
	_, err := h.Conn.Write(frame)
	h.wr.Unlock()
	if err != nil {
		h.forget(xid)
		return nil, 0, ErrConnClosed
	}
	return ch, xid, nil
}

// forget drops the wait for xid's reply; the reply, if it comes, is
// swallowed all the same.
func (h *Conn) forget(xid int32) {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if h.calls[xid] != nil {
		h.calls[xid] = nil // still swallowed when it comes
	}
}

// answerCall hands the reply frame f (header included) to the Call
// waiting for xid, if any.
func (h *Conn) answerCall(xid int32, f []byte) {
	h.wmu.Lock()
	ch, ok := h.calls[xid]
	delete(h.calls, xid)
	h.wmu.Unlock()
	if !ok || ch == nil {
		return
	}
	r := callReply{code: int32(binary.BigEndian.Uint32(f[16:20]))}
	if len(f) > 20 {
		r.body = append([]byte(nil), f[20:]...)
	}
	ch <- r // buffered, answered once
}

// AppendString appends a jute ustring: its length as an int32, then its
// bytes.
func AppendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// AppendStrings appends a jute vector<ustring>: its count, then each.
func AppendStrings(b []byte, ss []string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(ss)))
	for _, s := range ss {
		b = AppendString(b, s)
	}
	return b
}

// AddWatchRequest encodes AddWatchRequest{ustring path; int mode}.
func AddWatchRequest(path string, mode int32) []byte {
	b := AppendString(make([]byte, 0, 8+len(path)), path)
	return binary.BigEndian.AppendUint32(b, uint32(mode))
}

// RemoveWatchesRequest encodes RemoveWatchesRequest{ustring path; int
// type}; CheckWatchesRequest has the same layout.
func RemoveWatchesRequest(path string, typ int32) []byte {
	b := AppendString(make([]byte, 0, 8+len(path)), path)
	return binary.BigEndian.AppendUint32(b, uint32(typ))
}

// SetWatches2Request encodes SetWatches2{long relativeZxid;
// vector<ustring> dataWatches, existWatches, childWatches,
// persistentWatches, persistentRecursiveWatches}.
func SetWatches2Request(relZxid int64, data, exist, child, persistent, recursive []string) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(relZxid))
	for _, v := range [...][]string{data, exist, child, persistent, recursive} {
		b = AppendStrings(b, v)
	}
	return b
}

// SetWatches2Limit is the largest setWatches2 body the framework builds,
// as go-zookeeper bounds its setWatches (the server's jute.maxbuffer is
// 1 MB by default).
const SetWatches2Limit = 128 << 10
