package transport

import (
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// sent is one request waiting for its reply.
type sent struct {
	xid int32
	at  time.Time
}

// Conn is one connection of a Wire, as go-zookeeper sees it. It reads
// whole frames ahead of go-zookeeper, times the requests go-zookeeper
// writes and matches them with their replies, pings when the connection
// is otherwise idle, and holds replies back after a reconnect until
// go-zookeeper has written its setWatches request (see waitGate).
//
// It also bounds go-zookeeper's connect handshake, as the Java client
// does, to the session timeout divided by the number of servers (the
// negotiated timeout once a server granted one, else the requested one:
// the caller of Wire.Wrap computes it when it dials):
// go-zookeeper waits ten read timeouts (about 6.7 session timeouts) for the
// answer to its connect request, and a server that is still starting may
// accept the connection and then neither answer nor close it (ZooKeeper
// 3.8 does this when closing such a connection fails on a
// NullPointerException). The first read deadline go-zookeeper sets on a
// connection is the handshake's; it is capped.
type Conn struct {
	net.Conn
	w     *Wire
	limit time.Duration
	set   atomic.Bool // the handshake's deadline has been set

	wr         sync.Mutex               // one frame at a time on the socket
	wmu        sync.Mutex               // pending, wroteFirst, lastWrite, pinger
	wroteFirst bool                     // the handshake request has been written
	pending    []sent                   // requests written, oldest first
	lastWrite  time.Time                // when a request was last written
	pinger     Timer                    // the next idle check, once the handshake is answered
	calls      map[int32]chan callReply // injected requests (Wire.Call) not yet answered; nil: given up, still swallowed

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

	session atomic.Int64 // the session the handshake's reply granted; 0 before
}

// ZooKeeper's wire values the Conn reads or writes.
const (
	handshakeXid = -1 << 31 // marks the connect request, which has no header
	watchXid     = -1       // a watch event, which answers no request
	pingXid      = -2
	opPing       = 11
	opSetWatches = 101
)

// gateBound is how long waitGate waits at most for go-zookeeper's
// setWatches request: a quarter of the negotiated session timeout, within
// [gateMin, gateMax]. It only runs out when the client's count of watches
// and go-zookeeper's map disagree, or when a setWatches request of an
// earlier connection was dropped unwritten; it leaves the session's lease
// untouched (the frame the gate holds back was counted as contact before
// the wait).
func (w *Wire) gateBound() time.Duration {
	return min(max(w.Negotiated()/4, gateMin), gateMax)
}

const (
	gateMin = time.Second
	gateMax = 5 * time.Second
)

// openGate lets replies be read. Every setWatches request owed so far has
// then been written or dropped.
func (h *Conn) openGate() {
	h.gateOnce.Do(func() {
		h.w.owed.Store(0)
		close(h.gate)
	})
}

// expectSetWatches is called on the handshake's reply when the client has
// watches outstanding: go-zookeeper will send a setWatches request for
// this connection, after those still owed for earlier ones, and the gate
// opens once this connection has seen them all written.
func (h *Conn) expectSetWatches() {
	h.need.Store(h.w.owed.Add(1))
}

// wroteSetWatches counts a setWatches request written on h, and reports
// whether it was the last one the gate waits for.
func (h *Conn) wroteSetWatches() bool {
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
// connection's gate waits for every setWatches still owed (Wire.owed), not
// for the first it sees. When the client has no watch outstanding,
// go-zookeeper sends no setWatches and never reads lastZxid there, so
// nothing waits; if the client's count and go-zookeeper's map disagree, or
// an owed request was dropped unwritten, the wait ends after gateBound.
//
// If go-zookeeper closes the connection while the gate is shut (its send
// loop failed, so its setWatches may never be written here), waitGate
// reports false and the frame is not delivered: go-zookeeper's receive
// loop ends on the closed connection without writing lastZxid.
func (h *Conn) waitGate() bool {
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

// SetReadDeadline caps the first deadline go-zookeeper sets, the connect
// handshake's, at the Conn's limit.
func (h *Conn) SetReadDeadline(t time.Time) error {
	if !t.IsZero() && h.set.CompareAndSwap(false, true) {
		if limit := time.Now().Add(h.limit); t.After(limit) {
			t = limit
		}
	}
	return h.Conn.SetReadDeadline(t)
}

// Write writes one of go-zookeeper's frames (it writes each request whole,
// in one call) and times it.
func (h *Conn) Write(b []byte) (int, error) {
	now := h.w.clock.Now()
	h.wmu.Lock()
	h.lastWrite = now
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

// pingFrame is a ping request: length 8, xid -2, opcode 11.
var pingFrame = []byte{0, 0, 0, 8, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, opPing}

// idleCheck pings if nothing was written for a ping interval, and checks
// again an interval after the last write. go-zookeeper ignores the replies
// to pings (xid -2) it did not send; the Conn counts them as contact.
func (h *Conn) idleCheck() {
	every := h.w.pingEvery()
	now := h.w.clock.Now()
	h.wmu.Lock()
	select {
	case <-h.closed:
		h.wmu.Unlock()
		return
	default:
	}
	ping := now.Sub(h.lastWrite) >= every
	if ping {
		h.lastWrite = now
		h.pending = append(h.pending, sent{xid: pingXid, at: now})
	}
	next := every - now.Sub(h.lastWrite)
	h.pinger = h.w.clock.AfterFunc(next, h.idleCheck)
	h.wmu.Unlock()
	if ping {
		h.wr.Lock()
		_, err := h.Conn.Write(pingFrame)
		h.wr.Unlock()
		if err != nil {
			h.stopPings()
		}
	}
}

func (h *Conn) startPings() {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	select {
	case <-h.closed:
		return
	default:
	}
	if h.pinger == nil {
		h.pinger = h.w.clock.AfterFunc(h.w.pingEvery(), h.idleCheck)
	}
}

func (h *Conn) stopPings() {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if h.pinger != nil {
		h.pinger.Stop()
	}
}

// Read hands go-zookeeper the server's frames, one whole frame read ahead.
func (h *Conn) Read(b []byte) (int, error) {
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
			h.r += size // a reply to Wire.Call: go-zookeeper never sees it
			continue
		}
		h.deliver = size
		if h.frames > 0 && !h.waitGate() { // a frame after the handshake's is next
			h.deliver, h.r, h.rerr = 0, len(h.in), net.ErrClosed
			return 0, h.rerr
		}
		h.frames++
	}
	n := copy(b, h.in[h.r:h.r+h.deliver])
	h.r += n
	h.deliver -= n
	return n, nil
}

// frameAt returns the size of the whole frame at in[r:], if it has been
// read. Any size go-zookeeper reads (it bounds none by default) is read.
func (h *Conn) frameAt() (int, bool) {
	avail := len(h.in) - h.r
	if avail < 4 {
		return 0, false
	}
	size := 4 + int(binary.BigEndian.Uint32(h.in[h.r:h.r+4]))
	return size, avail >= size
}

// keepBuffer is the largest read buffer a connection keeps once it is
// empty.
const keepBuffer = 64 << 10

// fill reads more of the socket into in, keeping in[r:], with room for
// the frame at in[r:] if its size is known.
func (h *Conn) fill() {
	if h.r == len(h.in) && cap(h.in) > keepBuffer {
		// All read: give back what a large frame grew (a children list of
		// ten thousand names is half a megabyte) instead of keeping it for
		// the connection's life.
		h.in, h.r = make([]byte, 0, 16<<10), 0
	}
	if h.r > 0 && (h.r == len(h.in) || h.r > cap(h.in)/2) {
		n := copy(h.in, h.in[h.r:])
		h.in, h.r = h.in[:n], 0
	}
	want := len(h.in) + 1
	if size, _ := h.frameAt(); size > 0 {
		want = max(want, h.r+size)
	}
	if want > cap(h.in) {
		grown := make([]byte, len(h.in), max(want, 2*cap(h.in), 16<<10))
		copy(grown, h.in)
		h.in = grown
	}
	n, err := h.Conn.Read(h.in[len(h.in):cap(h.in)])
	h.in = h.in[:len(h.in)+n]
	if err != nil {
		h.rerr = err
	}
}

// handle looks at one whole frame before go-zookeeper gets it, and
// reports whether the frame is a reply to an injected request (Wire.Call),
// which go-zookeeper must not get.
func (h *Conn) handle(f []byte) bool {
	if h.frames == 0 {
		// ConnectResponse: protocolVersion int32, timeOut int32, sessionId int64, ...
		var session int64
		if len(f) >= 12 {
			h.w.timeoutMs.Store(int32(binary.BigEndian.Uint32(f[8:12])))
		}
		if len(f) >= 20 {
			session = int64(binary.BigEndian.Uint64(f[12:20]))
		}
		if at, ok := h.answered(handshakeXid); ok {
			h.w.handshake(session, at)
		}
		if h.w.watches.Load() == 0 {
			h.openGate() // no setWatches will follow
		} else {
			h.expectSetWatches()
		}
		if session != 0 {
			h.session.Store(session)
			h.startPings()
			h.w.cur.Store(h)
		}
		return false
	}
	if len(f) < 20 {
		return false
	}
	xid := int32(binary.BigEndian.Uint32(f[4:8]))
	if xid == watchXid {
		return false
	}
	if zxid := int64(binary.BigEndian.Uint64(f[8:16])); zxid > 0 {
		for {
			last := h.w.lastZxid.Load()
			if zxid <= last || h.w.lastZxid.CompareAndSwap(last, zxid) {
				break
			}
		}
	}
	if at, ok := h.answered(xid); ok {
		h.w.touched(at)
	}
	if isCallXid(xid) {
		h.answerCall(xid, f)
		return true
	}
	return false
}

// Close closes the connection and stops its pings.
func (h *Conn) Close() error {
	h.closeOnce.Do(func() { close(h.closed) })
	h.w.cur.CompareAndSwap(h, nil)
	h.stopPings()
	return h.Conn.Close()
}

// answered removes the oldest pending request with xid, and returns its
// send time.
func (h *Conn) answered(xid int32) (time.Time, bool) {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	for i, s := range h.pending {
		if s.xid == xid {
			h.pending = h.pending[i+1:]
			return s.at, true
		}
	}
	return time.Time{}, false
}
