package zktest

import (
	"math/rand/v2"
	"slices"
)

// Request opcodes of ZooKeeper's protocol (ZooDefs.OpCode), for
// [Proxy.LoseNextReply] and [Proxy.SetReplyLoss].
const (
	OpCreate          int32 = 1
	OpDelete          int32 = 2
	OpExists          int32 = 3
	OpGetData         int32 = 4
	OpSetData         int32 = 5
	OpGetChildren     int32 = 8
	OpSync            int32 = 9
	OpPing            int32 = 11
	OpGetChildren2    int32 = 12
	OpCheck           int32 = 13
	OpMulti           int32 = 14
	OpCreate2         int32 = 15
	OpReconfig        int32 = 16
	OpCreateContainer int32 = 19
	OpRemoveWatches   int32 = 18
	OpCreateTTL       int32 = 21
	OpClose           int32 = -11
	OpSetWatches      int32 = 101
	OpAddWatch        int32 = 106
)

// LoseNextReply arms a one-shot fault: the next client request whose opcode
// is one of opcodes (any request when none are given) goes to the server as
// usual, but when the server's reply to it comes back, the proxy drops the
// reply and resets that client's connection. The server has applied the
// request; the client sees a connection loss and never learns the outcome.
//
// Only requests count: pings, watch events, auth packets and setWatches
// (xids -1 to -8) do not; requests a client writes beneath its library
// under xids of their own below those (as go-curator's framework does for
// addWatch or a session-bound multi) do. Replies before the lost one reach the client first;
// replies after it on the same connection never do, as with any connection
// loss, and only the lost one is counted by [Proxy.LostReplies]. If the
// connection ends before the reply comes, the fault is spent without effect.
// Arming again before the fault has struck replaces opcodes.
func (p *Proxy) LoseNextReply(opcodes ...int32) {
	p.mu.Lock()
	p.loseNext, p.loseNextOps = true, slices.Clone(opcodes)
	p.mu.Unlock()
}

// SetReplyLoss loses, from now on, the reply to each request whose opcode is
// one of opcodes (any request when none are given) with probability rate, as
// [Proxy.LoseNextReply] loses one. Each draw is rng.Float64() under the
// proxy's lock, so a seeded rng gives a chaos loop the same choices for the
// same requests; a nil rng draws from math/rand/v2's global source. A rate of
// 1 or more loses every matching reply; 0 or less turns the fault off. A
// fault armed by LoseNextReply strikes first.
func (p *Proxy) SetReplyLoss(rate float64, rng *rand.Rand, opcodes ...int32) {
	if !(rate > 0) { // also NaN
		rate, rng, opcodes = 0, nil, nil
	}
	p.mu.Lock()
	p.lossRate, p.lossRNG, p.lossOps = rate, rng, slices.Clone(opcodes)
	p.mu.Unlock()
}

// LostReplies returns how many replies the proxy has dropped so far.
func (p *Proxy) LostReplies() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lost
}

// HoldReplies stops forwarding from servers to clients: what servers send is
// kept by the proxy, neither forwarded nor dropped, while clients' requests
// still reach the servers. It holds every byte from the server, pings' and
// handshakes' replies and watch events too, so a client that hears nothing
// for long enough disconnects on its own (go-zookeeper after two thirds of
// its session timeout). [Proxy.Reset] and [Proxy.Close] discard what is held.
// Holding held replies does nothing.
func (p *Proxy) HoldReplies() {
	p.mu.Lock()
	if p.replyGate == nil {
		p.replyGate = make(chan struct{})
	}
	p.mu.Unlock()
}

// ReleaseReplies forwards what HoldReplies held, in order, and forwards
// again from then on. A reply that a lost-reply fault dropped meanwhile
// resets its connection only after what came before it is forwarded.
func (p *Proxy) ReleaseReplies() {
	p.mu.Lock()
	if p.replyGate != nil {
		close(p.replyGate)
		p.replyGate = nil
	}
	p.mu.Unlock()
}

// noteRequest is called with each request's xid and opcode before the
// request goes to the server; it decides whether the reply is to be lost.
func (p *Proxy) noteRequest(l *link, xid, opcode int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.requests == nil {
		p.requests = make(map[int32]int)
	}
	p.requests[opcode]++
	if specialXid(xid) {
		return
	}
	lose := false
	switch {
	case p.loseNext && matchOpcode(p.loseNextOps, opcode):
		p.loseNext, p.loseNextOps = false, nil
		lose = true
	case p.lossRate > 0 && matchOpcode(p.lossOps, opcode):
		lose = p.lossRate >= 1 || p.draw() < p.lossRate
	}
	if lose {
		if l.lose == nil {
			l.lose = make(map[int32]struct{})
		}
		l.lose[xid] = struct{}{}
	}
}

// Requests returns how many requests with one of opcodes (any request when
// none are given) the proxy has forwarded to the server, on every
// connection since it started: the ones the client's library sends on its
// own (pings, auth, setWatches, a framework's own requests) included.
func (p *Proxy) Requests(opcodes ...int32) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for op, k := range p.requests {
		if matchOpcode(opcodes, op) {
			n += k
		}
	}
	return n
}

// dropReply reports whether the reply with xid is to be lost, and counts it.
func (p *Proxy) dropReply(l *link, xid int32) bool {
	if specialXid(xid) {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := l.lose[xid]; !ok {
		return false
	}
	delete(l.lose, xid)
	p.lost++
	return true
}

// specialXid reports whether xid is one of ZooKeeper's own: a watch event
// (-1), a ping (-2), auth (-4) or setWatches (-8), and the few between.
func specialXid(xid int32) bool { return xid < 0 && xid >= -8 }

// draw returns a number in [0, 1) for SetReplyLoss. The caller holds p.mu.
func (p *Proxy) draw() float64 {
	if p.lossRNG != nil {
		return p.lossRNG.Float64()
	}
	return rand.Float64()
}

// matchOpcode reports whether op is in ops, or ops is empty.
func matchOpcode(ops []int32, op int32) bool {
	return len(ops) == 0 || slices.Contains(ops, op)
}
