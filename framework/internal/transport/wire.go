package transport

import (
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Wire follows the connections of one go-zookeeper Conn. Its zero value is
// not usable: make one with NewWire.
type Wire struct {
	clock Clock

	timeoutMs atomic.Int32         // negotiated by the latest handshake; 0 before one
	watches   atomic.Int64         // watches set through the client and not yet fired (see Conn.waitGate)
	owed      atomic.Int64         // setWatches requests expected and not yet written (see Conn.waitGate)
	cur       atomic.Pointer[Conn] // the latest connection with a session, until it closes (see Call)
	nextCall  atomic.Uint32        // the next injected xid's index (see Call)
	lastZxid  atomic.Int64         // the largest zxid a reply carried

	// The ensemble's timing as the user stated it (SetTiming); tick is 0
	// when it was not stated.
	tick      time.Duration
	syncLimit int

	mu      sync.Mutex
	session int64     // the session of the latest handshake reply
	contact time.Time // the touch the lease is timed from (see Contact); zero before one
	ended   bool      // a reply came after session's lease had ended: nothing extends it again
}

// NewWire returns a Wire timed by clock (System if nil).
func NewWire(clock Clock) *Wire {
	if clock == nil {
		clock = System
	}
	return &Wire{clock: clock}
}

// SetTiming states the ensemble's timing: its servers' tickTime and
// syncLimit. It changes how a reply other than a handshake's counts (see
// Contact). Call it before the first Wrap; a tick that is not positive or a
// syncLimit below 1 leaves the timing unstated.
func (w *Wire) SetTiming(tick time.Duration, syncLimit int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if tick <= 0 || syncLimit < 1 {
		w.tick, w.syncLimit = 0, 0
		return
	}
	w.tick, w.syncLimit = tick, syncLimit
}

// FollowerMargin returns, when the ensemble's timing is stated (SetTiming),
// how long before its send time a request answered by a server other than
// in a handshake counts as contact: syncLimit × tickTime + tickTime + the
// client's ping interval (see Contact). ok is false when the timing is not
// stated; the margin then also depends on the negotiated timeout, so ask
// after the first handshake.
func (w *Wire) FollowerMargin() (margin time.Duration, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tick == 0 {
		return 0, false
	}
	return w.followerMargin(), true
}

// followerMargin is FollowerMargin's value. Called with w.mu held, with the
// timing stated.
func (w *Wire) followerMargin() time.Duration {
	t := w.Negotiated()
	touchEvery := max(t/slackDiv, w.pingEvery())
	return satAdd(satAdd(satMul(w.tick, w.syncLimit), w.tick), touchEvery)
}

// satMul returns d × n for d, n >= 0, or the largest Duration if that
// overflows.
func satMul(d time.Duration, n int) time.Duration {
	if n > 0 && d > math.MaxInt64/time.Duration(n) {
		return math.MaxInt64
	}
	return d * time.Duration(n)
}

// satAdd returns a + b for a, b >= 0, or the largest Duration if that
// overflows.
func satAdd(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Clock returns the wire's clock.
func (w *Wire) Clock() Clock { return w.clock }

// Negotiated returns the session timeout the latest handshake reply
// granted, or 0 before the first.
func (w *Wire) Negotiated() time.Duration {
	return time.Duration(w.timeoutMs.Load()) * time.Millisecond
}

// Contact returns the moment the lease is timed from (the zero Time before
// the first handshake reply): the server that expires sessions, the
// leader, recorded a touch of the session no earlier than that.
//
// Without the ensemble's timing (SetTiming), it is the send time of the
// latest request whose reply came back within the counting window (see
// countedBy), or of the latest handshake answered within the lease.
//
// With the timing stated, a handshake's reply counts as today: a server
// answers a reconnect only after the leader revalidated (and touched) the
// session. A reply to any other request sent at c counts as contact at
// c - (S + tickTime + T/10), S being syncLimit × tickTime and T the
// negotiated timeout:
//   - a follower drops its clients once it has not heard from the leader for
//     S (its socket timeout on the leader's link), so the follower that
//     answered at t >= c heard from the leader at some h >= c - S;
//   - a live leader pings its followers every tickTime/2, and a follower's
//     reply to a ping reports every touch it recorded before that ping: so
//     the leader had the reply to the ping before the one received at h,
//     carrying the follower's touches made up to tickTime before h (two
//     ping intervals: the interval between the pings and the leader's
//     reading of the reply before its next ping);
//   - the client touches its server at least every T/10 (its idle pings,
//     pingEvery) while the connection is up, so one of those touches was
//     made no earlier than h - tickTime - T/10.
//
// So the leader's last touch is no earlier than c - S - tickTime - T/10.
// When that margin is 0.9 T or more, a follower's reply extends nothing:
// the lease lasts 0.9 T past each handshake. The rule does not cover a
// leader that keeps reading and proposing while its ping thread is stuck,
// a leader that holds a follower's reports in a queue longer than S, or a
// pause of the client's own process: the fencing token covers those.
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
// recorded a touch, the leader recorded one no earlier than c (see
// Contact), and T/10 covers the client's timer firing late and clock-rate
// differences. That holds only if the touch reached the leader, the server
// that expires sessions, in time, which the rules for counting replies
// ensure (countedBy without the ensemble's timing, Contact with it).
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
// c + T at the earliest). With ZooKeeper's default minSessionTimeout the
// server grants no timeout below 2 × tickTime, so tickTime/2 <= T/4: a
// touch whose reply arrived by c + 0.65 T reached the leader by c + 0.9 T,
// with T/10 for the leader's ping round trip and clock rates. (A
// minSessionTimeout set below 2 × tickTime breaks that premise; without
// the timing the client cannot check it.) A handshake reply for the same
// session counts until the lease ends: a follower revalidates a
// reconnecting session with the leader, which touches it, before it
// answers.
//
// The rule assumes a follower reports each touch at the leader's next ping,
// which holds only while the leader is live and linked to it: it covers no
// stall of the leader and no cut of the follower's link beyond tickTime/2.
// It is used only when the ensemble's timing is not stated (SetTiming).
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
// that comes after countedBy (or, with the timing stated, after the lease
// ended) extends nothing, nor does any later one but a handshake's: the
// leader may have expired the session while a follower still answered.
func (w *Wire) touched(sent time.Time) {
	now := w.clock.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	if w.tick > 0 {
		if !w.contact.IsZero() && now.After(w.leaseEnd(w.contact, 0)) {
			w.ended = true
			return
		}
		if at := sent.Add(-w.followerMargin()); w.contact.IsZero() || at.After(w.contact) {
			w.contact = at
		}
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
