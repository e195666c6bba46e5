package framework

import (
	"fmt"
	"sync"
	"time"

	"github.com/go-curator/curator/framework/internal/transport"
	"github.com/go-curator/curator/internal/goid"
	"github.com/go-curator/curator/internal/queue"
	"github.com/go-curator/curator/retry"
)

// CircuitBreaker is a connection state listener that passes states on to
// another one with a circuit breaker between them, so that a flapping
// connection does not flood it: Curator's
// CircuitBreakingConnectionStateListener. [Builder.CircuitBreaking] puts
// one circuit in front of every listener of a client, as Curator's
// ConnectionStateListenerManagerFactory.circuitBreaking does.
//
// The rules are Curator's:
//   - While the circuit is closed, every state is passed on. A state that is
//     not connected (Suspended, Lost) opens it, if the policy allows a first
//     retry: AllowRetry(0, 0) gives the time the circuit stays open.
//   - While it is open, states are absorbed and only the latest is kept;
//     but the first Lost is still passed on at once.
//   - When the time is up, if the latest state is a connected one (or none
//     came), the circuit closes; otherwise the policy is asked again
//     (AllowRetry with the count of checks so far and the time since the
//     circuit opened) and the circuit stays open for the sleep it returns.
//     When it allows no more, the circuit closes anyway.
//   - On closing, the latest state is passed on if it differs from the one
//     that opened the circuit (or from Lost, if Lost was passed on since).
//
// So a listener of a flapping connection sees Suspended, then nothing
// until the circuit closes, then Reconnected (or Lost, at once). A
// listener never sees two states at once, nor out of order: states are
// passed on from one goroutine of the breaker's own, in order, from an
// unbounded queue, so a slow listener delays only itself.
//
// A lock's or lease's Lost channel does not go through listeners, so a
// circuit breaker never delays it.
//
// Make one with [NewCircuitBreaker] and add its [CircuitBreaker.StateChanged]
// to a client ([Client.AddListener] or [Builder.Listener]); Close it when
// done. The zero value passes nothing on, and a CircuitBreaker must not be
// copied. Its methods are safe for concurrent use.
type CircuitBreaker struct {
	mu     sync.Mutex
	c      circuit
	q      *queue.Queue[ConnectionState]
	closed bool
}

// NewCircuitBreaker returns a breaker that passes states on to l, with a
// circuit whose open times come from p. It starts the goroutine that calls
// l; Close stops it. A nil l or p is an error wrapping
// ErrInvalidArgument.
func NewCircuitBreaker(l Listener, p retry.Policy) (*CircuitBreaker, error) {
	if l == nil {
		return nil, fmt.Errorf("%w: circuit breaker: listener is nil", ErrInvalidArgument)
	}
	if p == nil {
		return nil, fmt.Errorf("%w: circuit breaker: retry policy is nil", ErrInvalidArgument)
	}
	b := &CircuitBreaker{}
	b.q = queue.New(l)
	b.c.init(p, transport.System, &b.mu, b.q.Post)
	return b, nil
}

// StateChanged takes a state change, as a [Listener]: pass it to
// [Client.AddListener] or [Builder.Listener]. After Close it does nothing.
func (b *CircuitBreaker) StateChanged(s ConnectionState) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed && b.q != nil { // the zero CircuitBreaker passes nothing on
		b.c.stateChanged(s)
	}
}

// IsOpen reports whether the circuit is open: states are being absorbed.
func (b *CircuitBreaker) IsOpen() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.c.open
}

// Close stops the circuit's timer and the goroutine that calls the
// listener, after the states already passed on have been delivered, and
// waits for it (but not when called from the listener, and at most two
// seconds for a listener that does not return). States that the circuit
// was absorbing are dropped. Close is idempotent: every call waits as the
// first does, and returns nil; a nil breaker returns ErrInvalidArgument.
func (b *CircuitBreaker) Close() error {
	if b == nil {
		return fmt.Errorf("%w: circuit breaker is nil", ErrInvalidArgument)
	}
	b.mu.Lock()
	if b.q == nil { // the zero CircuitBreaker
		b.mu.Unlock()
		return nil
	}
	if !b.closed {
		b.closed = true
		b.c.stop()
		b.q.Finish()
	}
	b.mu.Unlock()
	if b.q.GoroutineID() == goid.Get() {
		return nil
	}
	bound := time.NewTimer(listenerJoinBound)
	defer bound.Stop()
	select {
	case <-b.q.Done():
	case <-bound.C:
	}
	return nil
}

// noState stands for Curator's null state: none since the circuit opened.
const noState ConnectionState = -1

// circuit is the breaker's state machine (Curator's
// CircuitBreakingConnectionStateListener and its CircuitBreaker). Its owner
// guards it with lock, which the timer takes too; deliver is called with
// lock held and must not block.
type circuit struct {
	policy  retry.Policy
	clock   transport.Clock
	lock    sync.Locker
	deliver func(ConnectionState)

	// Guarded by lock.
	open     bool
	retries  int       // checks allowed since the circuit opened
	openedAt time.Time // when it opened, on clock
	lostSent bool      // Lost was passed on while open
	initial  ConnectionState
	last     ConnectionState
	timer    transport.Timer
	gen      int // guards timer against a stale fire
	stopped  bool
}

func (c *circuit) init(p retry.Policy, clock transport.Clock, lock sync.Locker, deliver func(ConnectionState)) {
	c.policy, c.clock, c.lock, c.deliver = p, clock, lock, deliver
	c.initial, c.last = noState, noState
}

// stateChanged takes a state change. Called with lock held.
func (c *circuit) stateChanged(s ConnectionState) {
	if c.stopped {
		return
	}
	if c.open {
		if c.lostSent || s != Lost {
			c.last = s // absorbed
			return
		}
		c.lostSent = true
		c.initial, c.last = Lost, Lost
		c.deliver(Lost)
		return
	}
	if !s.IsConnected() && c.tryOpen() {
		c.initial, c.last = s, s
		c.lostSent = s == Lost
	}
	c.deliver(s)
}

// tryOpen opens the circuit if the policy allows a first retry, and arms
// the timer for its sleep.
func (c *circuit) tryOpen() bool {
	c.open, c.retries, c.openedAt = true, 0, c.clock.Now()
	if c.tryRetry() {
		return true
	}
	c.reset()
	return false
}

// tryRetry asks the policy for another open period and arms the timer.
func (c *circuit) tryRetry() bool {
	sleep, ok := c.policy.AllowRetry(c.retries, c.clock.Now().Sub(c.openedAt))
	if !ok {
		return false
	}
	c.retries++
	c.gen++
	gen := c.gen
	c.timer = c.clock.AfterFunc(max(sleep, 0), func() {
		c.lock.Lock()
		defer c.lock.Unlock()
		if !c.stopped && c.open && gen == c.gen {
			c.check()
		}
	})
	return true
}

// check runs when an open period ends: it closes the circuit if the
// connection is back (or nothing came), else opens it for another period,
// else closes it because the policy allows no more.
func (c *circuit) check() {
	if (c.last == noState || c.last.IsConnected()) || !c.tryRetry() {
		c.close()
	}
}

// close closes the circuit and passes on the latest state if it differs
// from the one that opened it.
func (c *circuit) close() {
	send := c.last
	if send == c.initial {
		send = noState
	}
	c.reset()
	if send != noState {
		c.deliver(send)
	}
}

func (c *circuit) reset() {
	c.open, c.retries, c.openedAt, c.lostSent = false, 0, time.Time{}, false
	c.initial, c.last = noState, noState
	c.gen++
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
}

// stop ends the circuit for good: its timer is stopped and later states
// are dropped. Called with lock held.
func (c *circuit) stop() {
	c.reset()
	c.stopped = true
}
