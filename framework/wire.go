package framework

import (
	"encoding/binary"
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
type wireConn struct {
	net.Conn
	w     *wire
	limit time.Duration
	set   atomic.Bool // the handshake's deadline has been set

	wmu        sync.Mutex
	wroteFirst bool   // the handshake request has been written
	pending    []sent // requests written, oldest first

	// Read side: go-zookeeper reads from one goroutine at a time.
	head    [12]byte // the start of the frame being read
	nhead   int
	left    int // bytes of the current frame not yet read, after head
	readAny bool

	gate     chan struct{} // closed when replies may be read (see waitGate)
	gateOnce sync.Once
}

// gateBound is how long waitGate waits at most for go-zookeeper's
// setWatches request.
const gateBound = time.Second

// opSetWatches is ZooKeeper's opcode for re-registering watches.
const opSetWatches = 101

// openGate lets replies be read.
func (h *wireConn) openGate() { h.gateOnce.Do(func() { close(h.gate) }) }

// waitGate works around a data race in go-zookeeper v1.0.4 (an unsynchronized
// read and write of Conn.lastZxid; go-zookeeper/zk PR #35, unmerged): after
// a reconnect, sendSetWatches reads lastZxid on the connection's loop
// goroutine while recvLoop may write it for the first replies. The first
// read after the handshake waits until go-zookeeper has written its
// setWatches request (which it builds after reading lastZxid), so the
// write follows the read. When the client has no watch outstanding,
// go-zookeeper sends no setWatches and never reads lastZxid there, so
// nothing waits; if the client's count and go-zookeeper's map disagree for
// a moment, the wait ends after gateBound.
func (h *wireConn) waitGate() {
	select {
	case <-h.gate:
		return
	default:
	}
	t := time.NewTimer(gateBound)
	defer t.Stop()
	select {
	case <-h.gate:
	case <-t.C:
		h.openGate()
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
		if len(b) >= 12 && int32(binary.BigEndian.Uint32(b[8:12])) == opSetWatches {
			defer h.openGate()
		}
	}
	h.wmu.Unlock()
	return h.Conn.Write(b)
}

// handshakeXid marks the connect request, which has no header.
const handshakeXid = -1 << 31

// watchXid is the xid of a watch event, which answers no request.
const watchXid = -1

func (h *wireConn) Read(b []byte) (int, error) {
	if h.readAny && h.nhead == 0 && h.left == 0 {
		h.waitGate() // a frame after the handshake's is next
	}
	n, err := h.Conn.Read(b)
	h.scan(b[:n])
	return n, err
}

// scan follows the frames in the bytes read.
func (h *wireConn) scan(b []byte) {
	for len(b) > 0 {
		if h.left > 0 {
			k := min(h.left, len(b))
			h.left -= k
			b = b[k:]
			continue
		}
		k := copy(h.head[h.nhead:], b)
		h.nhead += k
		b = b[k:]
		if h.nhead < len(h.head) {
			return
		}
		size := int(binary.BigEndian.Uint32(h.head[:4]))
		h.left = max(size-(len(h.head)-4), 0)
		h.nhead = 0
		if !h.readAny {
			h.readAny = true
			// ConnectResponse: protocolVersion int32, timeOut int32, ...
			h.w.timeoutMs.Store(int32(binary.BigEndian.Uint32(h.head[8:12])))
			h.answered(handshakeXid)
			if h.w.watches.Load() == 0 {
				h.openGate() // no setWatches will follow
			}
			continue
		}
		if xid := int32(binary.BigEndian.Uint32(h.head[4:8])); xid != watchXid {
			h.answered(xid)
		}
	}
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
