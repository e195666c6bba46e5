package framework

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// wire watches one go-zookeeper connection's bytes (every TCP connection
// it dials for one session chain) to learn two things go-zookeeper keeps
// to itself:
//
//   - the session timeout the server negotiated, from each handshake reply
//     (the server clamps the request to [minSessionTimeout,
//     maxSessionTimeout], by default [2, 20] × tickTime);
//   - the last moment the server is known to have heard from the client:
//     the send time of the latest request (ping included) whose reply came
//     back. The server cannot expire the session less than one negotiated
//     timeout after it received that request, which it did after we sent
//     it. This is the start of the client-side lease (see Client's loss
//     timing).
//
// ZooKeeper answers the requests of one connection in order, and
// go-zookeeper writes each request as one frame in one Write, so the send
// times are a FIFO matched by xid.
type wire struct {
	timeoutMs   atomic.Int32 // negotiated by the latest handshake; 0 before one
	lastContact atomic.Int64 // UnixNano send time of the latest answered request
	watches     atomic.Int64 // watches set on this connection not yet fired (see waitGate)
	owed        atomic.Int64 // setWatches requests expected and not yet written (see waitGate)

	cur   atomic.Pointer[wireConn] // the connection with a session, nil between connections
	views viewSet                  // children views (view.go)
}

// useConn makes h the wire's connection, once its handshake is answered.
func (w *wire) useConn(h *wireConn) {
	w.cur.Store(h)
}

// dropConn forgets h, which is closing or broken: the views it kept stop.
func (w *wire) dropConn(h *wireConn) {
	w.cur.CompareAndSwap(h, nil)
	w.views.dropConn(h)
}

func (w *wire) negotiated() time.Duration {
	return time.Duration(w.timeoutMs.Load()) * time.Millisecond
}

func (w *wire) contact() time.Time { return time.Unix(0, w.lastContact.Load()) }

// sent is one request waiting for its reply.
type sent struct {
	xid int32
	at  int64
}

// wireConn is one TCP connection of a wire. It also bounds go-zookeeper's
// connect handshake, as the Java client does, to the session timeout
// divided by the number of servers: go-zookeeper waits ten read timeouts
// (about 6.7 session timeouts) for the answer to its connect request, and a
// server that is still starting may accept the connection and then neither
// answer nor close it (ZooKeeper 3.8 does this when closing such a
// connection fails on a NullPointerException). The first read deadline
// go-zookeeper sets on a connection is the handshake's; it is capped.
//
// It reads whole frames into its own buffer before go-zookeeper sees them,
// so that it can answer requests of its own (the children views' addWatch
// and reads, see view.go) and keep their replies from go-zookeeper, which
// knows nothing of them.
type wireConn struct {
	net.Conn
	w     *wire
	limit time.Duration
	set   atomic.Bool // the handshake's deadline has been set

	wr         sync.Mutex // one frame at a time on the socket
	wmu        sync.Mutex // pending and own
	wroteFirst bool       // the handshake request has been written
	pending    []sent     // requests written, oldest first
	own        map[int32]ownReq

	// Read side: go-zookeeper reads from one goroutine at a time.
	in      []byte // bytes read from the socket; in[r:] not yet handled
	r       int
	deliver int   // bytes of the frame at in[r:] go-zookeeper may still read
	frames  int   // frames handed to go-zookeeper
	rerr    error // the socket's read error, returned once in is drained

	gate     chan struct{} // closed when replies may be read (see waitGate)
	gateOnce sync.Once
	need     atomic.Int64 // setWatches writes the gate still waits for

	closed    chan struct{} // closed by Close
	closeOnce sync.Once
}

// gateBound is how long waitGate waits at most for go-zookeeper's
// setWatches request: a quarter of the negotiated session timeout, within
// [gateMin, gateMax]. It only runs out when the client's count of watches
// and go-zookeeper's map disagree, or when a setWatches request of an
// earlier connection was dropped unwritten; a quarter of the timeout
// leaves the session's lease untouched (the frame the gate holds back was
// counted as contact before the wait).
func (w *wire) gateBound() time.Duration {
	return min(max(w.negotiated()/4, gateMin), gateMax)
}

const (
	gateMin = time.Second
	gateMax = 5 * time.Second
)

// opSetWatches is ZooKeeper's opcode for re-registering watches.
const opSetWatches = 101

// openGate lets replies be read. Every setWatches request owed so far has
// then been written or dropped.
func (h *wireConn) openGate() {
	h.gateOnce.Do(func() {
		h.w.owed.Store(0)
		close(h.gate)
	})
}

// expectSetWatches is called on the handshake's reply when the client has
// watches outstanding: go-zookeeper will send a setWatches request for
// this connection, after those still owed for earlier ones, and the gate
// opens once this connection has seen them all written.
func (h *wireConn) expectSetWatches() {
	h.need.Store(h.w.owed.Add(1))
}

// wroteSetWatches counts a setWatches request written on h, and reports
// whether it was the last one the gate waits for.
func (h *wireConn) wroteSetWatches() bool {
	for {
		o := h.w.owed.Load()
		if o <= 0 || h.w.owed.CompareAndSwap(o, o-1) {
			break
		}
	}
	return h.need.Add(-1) <= 0
}

// waitGate works around a data race in go-zookeeper v1.0.4 (an unsynchronized
// read and write of Conn.lastZxid; go-zookeeper/zk PR #35, unmerged): after
// a reconnect, sendSetWatches reads lastZxid on the connection's loop
// goroutine while recvLoop may write it for the first replies. The first
// read after the handshake waits until go-zookeeper has written its
// setWatches request (which it builds after reading lastZxid), so the
// write follows the read.
//
// go-zookeeper queues that request from a goroutine of its own. If the
// connection breaks before it is written, it stays queued and is written
// on the next connection, possibly ahead of that connection's own: so a
// connection's gate waits for every setWatches still owed (wire.owed), not
// for the first it sees. When the client has no watch outstanding,
// go-zookeeper sends no setWatches and never reads lastZxid there, so
// nothing waits; if the client's count and go-zookeeper's map disagree, or
// an owed request was dropped unwritten, the wait ends after gateBound.
//
// If go-zookeeper closes the connection while the gate is shut (its send
// loop failed, so its setWatches may never be written here), waitGate
// reports false and the frame is not delivered: go-zookeeper's receive
// loop ends on the closed connection without writing lastZxid.
func (h *wireConn) waitGate() bool {
	select {
	case <-h.gate:
		return true
	default:
	}
	t := time.NewTimer(h.w.gateBound())
	defer t.Stop()
	select {
	case <-h.gate:
		return true
	case <-h.closed:
		return false
	case <-t.C:
		h.openGate()
		return true
	}
}

func (h *wireConn) SetReadDeadline(t time.Time) error {
	if !t.IsZero() && h.set.CompareAndSwap(false, true) {
		if limit := time.Now().Add(h.limit); t.After(limit) {
			t = limit
		}
	}
	return h.Conn.SetReadDeadline(t)
}

func (h *wireConn) Write(b []byte) (int, error) {
	now := time.Now().UnixNano()
	h.wmu.Lock()
	switch {
	case !h.wroteFirst:
		h.wroteFirst = true
		h.pending = append(h.pending, sent{xid: handshakeXid, at: now})
	case len(b) >= 8:
		h.pending = append(h.pending, sent{xid: int32(binary.BigEndian.Uint32(b[4:8])), at: now})
		if len(b) >= 12 && int32(binary.BigEndian.Uint32(b[8:12])) == opSetWatches && h.wroteSetWatches() {
			defer h.openGate()
		}
	}
	h.wmu.Unlock()
	h.wr.Lock()
	defer h.wr.Unlock()
	return h.Conn.Write(b)
}

// handshakeXid marks the connect request, which has no header.
const handshakeXid = -1 << 31

// watchXid is the xid of a watch event, which answers no request.
const watchXid = -1

// maxFrame bounds a frame's size, as go-zookeeper's buffer does (and
// ZooKeeper's jute.maxbuffer, 1 MiB of data plus headers).
const maxFrame = 4 << 20

// errFrame reports a frame that cannot be ZooKeeper's.
var errFrame = errors.New("framework: bad frame from server")

// Read hands go-zookeeper the server's frames, except the replies to the
// wire's own requests, one whole frame read ahead.
func (h *wireConn) Read(b []byte) (int, error) {
	for h.deliver == 0 {
		size, ok := h.frameAt()
		if !ok {
			if h.rerr != nil {
				return 0, h.rerr
			}
			h.fill()
			continue
		}
		if h.handle(h.in[h.r : h.r+size]) {
			h.deliver = size
			if h.frames > 0 && !h.waitGate() { // a frame after the handshake's is next
				h.deliver, h.r, h.rerr = 0, len(h.in), net.ErrClosed
				return 0, h.rerr
			}
			h.frames++
			break
		}
		h.r += size
	}
	n := copy(b, h.in[h.r:h.r+h.deliver])
	h.r += n
	h.deliver -= n
	return n, nil
}

// frameAt returns the size of the whole frame at in[r:], if it has been
// read.
func (h *wireConn) frameAt() (int, bool) {
	avail := len(h.in) - h.r
	if avail < 4 {
		return 0, false
	}
	size := 4 + int(binary.BigEndian.Uint32(h.in[h.r:h.r+4]))
	if size < 4 || size > maxFrame {
		if h.rerr == nil {
			h.rerr = errFrame
		}
		return 0, false
	}
	return size, avail >= size
}

// fill reads more of the socket into in, keeping in[r:].
func (h *wireConn) fill() {
	if h.r > 0 && (h.r == len(h.in) || h.r > cap(h.in)/2) {
		n := copy(h.in, h.in[h.r:])
		h.in, h.r = h.in[:n], 0
	}
	if len(h.in) == cap(h.in) {
		h.in = append(h.in, make([]byte, max(cap(h.in), 16<<10))...)[:len(h.in)]
	}
	n, err := h.Conn.Read(h.in[len(h.in):cap(h.in)])
	h.in = h.in[:len(h.in)+n]
	if err != nil {
		h.rerr = err
		h.w.dropConn(h)
	}
}

// handle looks at one whole frame, and reports whether go-zookeeper gets
// it.
func (h *wireConn) handle(f []byte) bool {
	if h.frames == 0 {
		// ConnectResponse: protocolVersion int32, timeOut int32, ...
		if len(f) >= 12 {
			h.w.timeoutMs.Store(int32(binary.BigEndian.Uint32(f[8:12])))
		}
		h.answered(handshakeXid)
		if h.w.watches.Load() == 0 {
			h.openGate() // no setWatches will follow
		} else {
			h.expectSetWatches()
		}
		h.w.useConn(h)
		return true
	}
	if len(f) < 20 {
		return true
	}
	xid := int32(binary.BigEndian.Uint32(f[4:8]))
	if xid == watchXid {
		h.w.views.event(h, f[20:])
		return true
	}
	h.answered(xid)
	h.wmu.Lock()
	req, mine := h.own[xid]
	delete(h.own, xid)
	h.wmu.Unlock()
	if !mine {
		return true
	}
	var code int32
	if len(f) >= 20 {
		code = int32(binary.BigEndian.Uint32(f[16:20]))
	}
	h.w.views.reply(h, req, code, f[20:])
	return false
}

// inject writes the wire's own requests (whole frames) and remembers
// which replies are its own.
func (h *wireConn) inject(frames []byte, reqs ...ownReq) error {
	now := time.Now().UnixNano()
	h.wmu.Lock()
	if h.own == nil {
		h.own = make(map[int32]ownReq)
	}
	for _, q := range reqs {
		h.pending = append(h.pending, sent{xid: q.xid, at: now})
		h.own[q.xid] = q
	}
	h.wmu.Unlock()
	h.wr.Lock()
	defer h.wr.Unlock()
	_, err := h.Conn.Write(frames)
	return err
}

func (h *wireConn) Close() error {
	h.closeOnce.Do(func() { close(h.closed) })
	h.w.dropConn(h)
	return h.Conn.Close()
}

// answered records the reply to the oldest pending request with xid.
func (h *wireConn) answered(xid int32) {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	for i, s := range h.pending {
		if s.xid == xid {
			if s.at > h.w.lastContact.Load() {
				h.w.lastContact.Store(s.at)
			}
			h.pending = h.pending[i+1:]
			return
		}
	}
}
