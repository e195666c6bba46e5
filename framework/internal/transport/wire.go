package transport

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Wire follows the connections of one go-zookeeper Conn. Its zero value is
// not usable: make one with NewWire.
type Wire struct {
	clock Clock

	timeoutMs atomic.Int32 // negotiated by the latest handshake; 0 before one
	watches   atomic.Int64 // watches set through the client and not yet fired (see Conn.waitGate)
	owed      atomic.Int64 // setWatches requests expected and not yet written (see Conn.waitGate)

	mu      sync.Mutex
	session int64     // the session of the latest handshake reply
	contact time.Time // send time of the latest answered request on session; zero before one
	ended   bool      // a reply came after session's lease had ended: nothing extends it again
}

// NewWire returns a Wire timed by clock (System if nil).
func NewWire(clock Clock) *Wire {
	if clock == nil {
		clock = System
	}
	return &Wire{clock: clock}
}

// Clock returns the wire's clock.
func (w *Wire) Clock() Clock { return w.clock }

// Negotiated returns the session timeout the latest handshake reply
// granted, or 0 before the first.
func (w *Wire) Negotiated() time.Duration {
	return time.Duration(w.timeoutMs.Load()) * time.Millisecond
}

// Contact returns the send time of the latest request whose reply came
// back within the lease (the zero Time before the first). The server heard
// from the client no earlier than that.
func (w *Wire) Contact() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.contact
}

// AddWatches adds n (which may be negative) to the count of watches the
// client has outstanding on the wire's current session: when it is not
// zero at a reconnect, go-zookeeper re-registers them with a setWatches
// request, which the gate waits for.
func (w *Wire) AddWatches(n int64) { w.watches.Add(n) }

// Watches returns the count AddWatches keeps.
func (w *Wire) Watches() int64 { return w.watches.Load() }

// LeaseEnd returns when the session's lease ends: the moment by which the
// client must have declared the session lost, since the server may expire
// it soon after. fallback stands in for the negotiated timeout before the
// first handshake reply. The zero Time means no lease yet.
//
// With T the negotiated timeout and c the contact time, the lease ends at
// c + T - T/10: the server cannot expire the session less than T after it
// recorded a touch, it touched the session when it received the request
// sent at c (so no earlier than c), and T/10 covers the client's timer
// firing late and clock-rate differences. That holds only if the touch at
// c reached the server that expires sessions, which the rule for counting
// replies ensures (see countedBy).
func (w *Wire) LeaseEnd(fallback time.Duration) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.leaseEnd(w.contact, fallback)
}

func (w *Wire) leaseEnd(contact time.Time, fallback time.Duration) time.Time {
	if contact.IsZero() {
		return time.Time{}
	}
	t := w.timeout(fallback)
	return contact.Add(t - t/slackDiv)
}

// countedBy returns the last moment a reply (other than a handshake's) may
// arrive and still count as contact: c + T - T/4 - T/10. A follower
// records a touch locally and reports it to the leader, which alone
// expires sessions, only at the leader's next ping: up to tickTime/2
// later. A reply a follower gave late in the lease may thus reach the
// leader after the leader expired the session on the touch before (at
// c + T at the earliest). The server grants no timeout below 2 × tickTime,
// so tickTime/2 <= T/4: a touch whose reply arrived by c + 0.65 T reached
// the leader by c + 0.9 T, with T/10 for the leader's ping round trip and
// clock rates. A handshake reply for the same session counts until the
// lease ends: a follower revalidates a reconnecting session with the
// leader, which touches it, before it answers.
func (w *Wire) countedBy(contact time.Time) time.Time {
	t := w.timeout(0)
	return contact.Add(t - t/followerLagDiv - t/slackDiv)
}

func (w *Wire) timeout(fallback time.Duration) time.Duration {
	if t := w.Negotiated(); t > 0 {
		return t
	}
	return fallback
}

// The lease's margins, as divisors of the negotiated timeout (see LeaseEnd
// and countedBy).
const (
	followerLagDiv = 4
	slackDiv       = 10
)

// touched records that the request sent at sent was answered now. A reply
// that comes after countedBy extends nothing, nor does any later one but a
// handshake's: the leader may have expired the session while a follower
// still answered.
func (w *Wire) touched(sent time.Time) {
	now := w.clock.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	if !w.contact.IsZero() && w.Negotiated() > 0 && now.After(w.countedBy(w.contact)) {
		w.ended = true
		return
	}
	if w.contact.IsZero() || sent.After(w.contact) {
		w.contact = sent
	}
}

// handshake records the answer to the connect request sent at sent, for
// session. A new session starts a new lease; the same session's lease is
// extended if the answer came before it ended (the leader validated the
// session, see countedBy).
func (w *Wire) handshake(session int64, sent time.Time) {
	now := w.clock.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if session != w.session || w.contact.IsZero() {
		w.session, w.contact, w.ended = session, sent, false
		return
	}
	if now.After(w.leaseEnd(w.contact, 0)) {
		return // too late: the client has declared, or is declaring, it lost
	}
	w.ended = false
	if sent.After(w.contact) {
		w.contact = sent
	}
}

// pingEvery is how often a Conn pings when it has written nothing else:
// a tenth of the negotiated timeout, so that the contact time stays within
// a tenth of a timeout of now while the server answers, within bounds.
func (w *Wire) pingEvery() time.Duration {
	return min(max(w.Negotiated()/10, pingMin), pingMax)
}

const (
	pingMin = 50 * time.Millisecond
	pingMax = 2 * time.Second
)

// Wrap returns nc as a Conn of the wire. handshake bounds the wait for the
// answer to go-zookeeper's connect request (see Conn.SetReadDeadline).
func (w *Wire) Wrap(nc net.Conn, handshake time.Duration) *Conn {
	return &Conn{Conn: nc, w: w, limit: handshake, gate: make(chan struct{}), closed: make(chan struct{})}
}
