package framework

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework/internal/transport"
	"github.com/go-curator/curator/retry"
)

// firingClock is a transport.Clock whose timers the test fires by hand.
type firingClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*firingTimer
}

type firingTimer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func (t *firingTimer) Stop() bool { was := !t.stopped; t.stopped = true; return was }

func (c *firingClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *firingClock) AfterFunc(d time.Duration, f func()) transport.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &firingTimer{d: d, f: f}
	c.timers = append(c.timers, t)
	return t
}

// fire moves the clock past the latest timer and runs it, as its
// goroutine would, even if it was stopped (a stop that lost the race).
func (c *firingClock) fire(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	if len(c.timers) == 0 {
		c.mu.Unlock()
		t.Fatal("no timer armed")
	}
	tm := c.timers[len(c.timers)-1]
	tm.stopped = true // fired
	c.now = c.now.Add(tm.d)
	c.mu.Unlock()
	tm.f()
}

// armed reports the number of timers armed and not stopped.
func (c *firingClock) armed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.stopped {
			n++
		}
	}
	return n
}

// testCircuit is a circuit with a hand-fired clock that records what it
// passes on.
type testCircuit struct {
	mu    sync.Mutex
	c     circuit
	clock *firingClock
	got   []ConnectionState
}

func newTestCircuit(t *testing.T, p retry.Policy) *testCircuit {
	t.Helper()
	tc := &testCircuit{clock: &firingClock{now: time.Unix(1000, 0)}}
	tc.c.init(p, tc.clock, &tc.mu, func(s ConnectionState) { tc.got = append(tc.got, s) })
	return tc
}

func (tc *testCircuit) send(states ...ConnectionState) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for _, s := range states {
		tc.c.stateChanged(s)
	}
}

func (tc *testCircuit) isOpen() bool {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.c.open
}

func nTimes(t *testing.T, n int) retry.Policy {
	t.Helper()
	p, err := retry.NewNTimes(n, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// step is a test step: states to send, or a timer fire.
type step struct {
	send []ConnectionState
	fire bool
}

func sends(s ...ConnectionState) step { return step{send: s} }

var fire = step{fire: true}

func TestCircuit_CuratorRules(t *testing.T) {
	tests := []struct {
		name     string
		retries  int
		steps    []step
		want     []ConnectionState
		wantOpen bool
	}{
		{"closed passes connected states", 3,
			[]step{sends(Connected, Reconnected)}, []ConnectionState{Connected, Reconnected}, false},
		{"flaps absorbed, latest sent on close", 3,
			[]step{sends(Connected, Suspended, Reconnected, Suspended, Reconnected, Suspended, Reconnected), fire},
			[]ConnectionState{Connected, Suspended, Reconnected}, false},
		{"open until the first fire", 3,
			[]step{sends(Connected, Suspended, Reconnected, Suspended, Reconnected)},
			[]ConnectionState{Connected, Suspended}, true},
		{"first lost sent at once, later ones absorbed", 3,
			[]step{sends(Connected, Suspended, Lost, Reconnected, Suspended, Lost, Reconnected), fire},
			[]ConnectionState{Connected, Suspended, Lost, Reconnected}, false},
		{"opened by lost", 3,
			[]step{sends(Suspended, Lost, Reconnected, Lost), fire, fire, fire},
			[]ConnectionState{Suspended, Lost}, false},
		{"still down: stays open while the policy allows", 3,
			[]step{sends(Connected, Suspended, Reconnected, Suspended), fire, fire},
			[]ConnectionState{Connected, Suspended}, true},
		{"retries exhausted, same state: nothing sent", 2,
			[]step{sends(Connected, Suspended, Reconnected, Suspended), fire, fire, sends(Reconnected)},
			[]ConnectionState{Connected, Suspended, Reconnected}, false},
		{"retries exhausted, different state: sent", 1,
			[]step{sends(Connected, Suspended, Lost, Reconnected, Suspended), fire},
			[]ConnectionState{Connected, Suspended, Lost, Suspended}, false},
		{"policy allows no retry: never opens", 0,
			[]step{sends(Connected, Suspended, Reconnected, Suspended, Lost, Reconnected)},
			[]ConnectionState{Connected, Suspended, Reconnected, Suspended, Lost, Reconnected}, false},
		{"reopens after closing", 3,
			[]step{sends(Connected, Suspended, Reconnected), fire, sends(Suspended, Reconnected, Suspended)},
			[]ConnectionState{Connected, Suspended, Reconnected, Suspended}, true},
		{"nothing after open: closes silently", 3,
			[]step{sends(Suspended, Reconnected, Suspended), fire, fire, fire, fire},
			[]ConnectionState{Suspended}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestCircuit(t, nTimes(t, tt.retries))
			for _, s := range tt.steps {
				if s.fire {
					tc.clock.fire(t)
				} else {
					tc.send(s.send...)
				}
			}
			if !slices.Equal(tc.got, tt.want) {
				t.Errorf("passed on %v, want %v", tc.got, tt.want)
			}
			if open := tc.isOpen(); open != tt.wantOpen {
				t.Errorf("open = %v, want %v", open, tt.wantOpen)
			}
			if tt.wantOpen != (tc.clock.armed() == 1) || tc.clock.armed() > 1 {
				t.Errorf("%d timers armed with the circuit open = %v", tc.clock.armed(), tt.wantOpen)
			}
		})
	}
}

// countingPolicy records what the circuit asks.
type countingPolicy struct {
	mu    sync.Mutex
	calls []int
	max   int
}

func (p *countingPolicy) AllowRetry(n int, _ time.Duration) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, n)
	return time.Duration(n+1) * time.Second, n < p.max
}

func TestCircuit_AsksThePolicyWithTheCheckCount(t *testing.T) {
	p := &countingPolicy{max: 3}
	tc := newTestCircuit(t, p)
	tc.send(Connected, Suspended)
	for range 4 {
		tc.clock.fire(t)
	}
	if want := []int{0, 1, 2, 3}; !slices.Equal(p.calls, want) {
		t.Errorf("policy asked with %v, want %v", p.calls, want)
	}
	var ds []time.Duration
	for _, tm := range tc.clock.timers {
		ds = append(ds, tm.d)
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}; !slices.Equal(ds, want) {
		t.Errorf("open periods %v, want %v", ds, want)
	}
	if tc.isOpen() {
		t.Error("open after the policy refused")
	}
}

func TestCircuit_StaleAndStoppedTimersDoNothing(t *testing.T) {
	tc := newTestCircuit(t, nTimes(t, 3))
	tc.send(Connected, Suspended, Reconnected)
	stale := tc.clock.timers[0].f
	tc.clock.fire(t) // closes, sends Reconnected
	tc.send(Suspended, Reconnected)
	stale() // the first period's timer, late: not this period's
	if !tc.isOpen() {
		t.Fatal("a stale timer closed the circuit")
	}
	tc.mu.Lock()
	tc.c.stop()
	tc.mu.Unlock()
	tc.clock.fire(t)
	tc.send(Suspended, Lost)
	if want := []ConnectionState{Connected, Suspended, Reconnected, Suspended}; !slices.Equal(tc.got, want) {
		t.Errorf("passed on %v, want %v", tc.got, want)
	}
	if tc.clock.armed() != 0 {
		t.Errorf("%d timers armed after stop", tc.clock.armed())
	}
}

func TestCircuitBreaker_Misuse(t *testing.T) {
	p := nTimes(t, 1)
	if b, err := NewCircuitBreaker(nil, p); !errors.Is(err, ErrInvalidArgument) || b != nil {
		t.Errorf("nil listener: %v, %v", b, err)
	}
	if b, err := NewCircuitBreaker(func(ConnectionState) {}, nil); !errors.Is(err, ErrInvalidArgument) || b != nil {
		t.Errorf("nil policy: %v, %v", b, err)
	}
	var nilB *CircuitBreaker
	nilB.StateChanged(Suspended)
	if nilB.IsOpen() || !errors.Is(nilB.Close(), ErrInvalidArgument) {
		t.Error("a nil breaker is open or closes without an error")
	}
	var zero CircuitBreaker
	zero.StateChanged(Connected) // the zero value has no policy: nothing to open
	if err := zero.Close(); err != nil {
		t.Errorf("zero Close = %v", err)
	}
	if _, err := NewBuilder().ConnectString("127.0.0.1:1").CircuitBreaking(nil).Build(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Build with CircuitBreaking(nil) = %v, want ErrInvalidArgument", err)
	}
}

func TestCircuitBreaker_DeliversInOrderAndCloses(t *testing.T) {
	var mu sync.Mutex
	var got []ConnectionState
	done := make(chan struct{})
	var b *CircuitBreaker
	b, err := NewCircuitBreaker(func(s ConnectionState) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
		if s == Lost {
			_ = b.Close() // from the listener: must not wait for itself
			close(done)
		}
	}, nTimes(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []ConnectionState{Connected, Suspended, Reconnected, Suspended} {
		b.StateChanged(s)
	}
	if !b.IsOpen() {
		t.Error("not open after Suspended")
	}
	b.StateChanged(Lost) // the listener closes the breaker when it gets it
	b.StateChanged(Reconnected)
	<-done
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b.StateChanged(Suspended) // after Close: dropped
	mu.Lock()
	defer mu.Unlock()
	if want := []ConnectionState{Connected, Suspended, Lost}; !slices.Equal(got, want) {
		t.Errorf("passed on %v, want %v", got, want)
	}
	if b.IsOpen() {
		t.Error("open after Close")
	}
}
