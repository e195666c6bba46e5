package integration

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
)

// rawStates counts a client's state changes through its metrics hook,
// which no circuit breaker stands in front of.
type rawStates struct {
	mu     sync.Mutex
	counts map[framework.ConnectionState]int
}

func (r *rawStates) metrics() framework.Metrics {
	return framework.Metrics{StateChanged: func(i framework.StateInfo) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.counts == nil {
			r.counts = map[framework.ConnectionState]int{}
		}
		r.counts[i.State]++
	}}
}

func (r *rawStates) count(s framework.ConnectionState) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[s]
}

func (s *stateLog) list() []framework.ConnectionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.states)
}

// circuitPolicy keeps a circuit open for periods of open.
func circuitPolicy(t *testing.T, open time.Duration) retry.Policy {
	t.Helper()
	p, err := retry.NewNTimes(100, open)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// circuitClients starts, through one fault proxy, a client whose bare
// listener sees every state and whose second listener is behind a
// CircuitBreaker, and a client built with Builder.CircuitBreaking. The
// circuits stay open for periods of open.
func circuitClients(t *testing.T, open time.Duration) (flap func(), bare, wrapped, viaBuilder *stateLog, b *framework.CircuitBreaker) {
	t.Helper()
	proxy := fwProxy(t, fwShared(t))
	bare, wrapped, viaBuilder = &stateLog{}, &stateLog{}, &stateLog{}
	b, err := framework.NewCircuitBreaker(wrapped.listen, circuitPolicy(t, open))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	// The proxy twice, so that go-zookeeper reconnects at once: after
	// trying every server of its list it sleeps a second.
	connect := proxy.Addr() + "," + proxy.Addr()
	startClient(t, builder(t, connect).Listener(bare.listen).Listener(b.StateChanged))
	var raw rawStates
	startClient(t, builder(t, connect).CircuitBreaking(circuitPolicy(t, open)).
		Listener(viaBuilder.listen).Metrics(raw.metrics()))
	flaps := 0
	flap = func() {
		t.Helper()
		flaps++
		proxy.Reset() // both clients' connections
		eventually(t, 10*time.Second, func() bool {
			return bare.count(framework.Reconnected) == flaps && raw.count(framework.Reconnected) == flaps
		}, "both clients reconnected after the reset")
	}
	return flap, bare, wrapped, viaBuilder, b
}

// TestCircuitBreaker_FlappingConnectionDoesNotFloodListeners resets a
// client's connection again and again: its bare listener sees every
// Suspended and Reconnected, while a listener behind a circuit breaker
// (and every listener of a client built with CircuitBreaking) sees the
// first Suspended only, as the circuit stays open.
func TestCircuitBreaker_FlappingConnectionDoesNotFloodListeners(t *testing.T) {
	t.Parallel()
	flap, bare, wrapped, viaBuilder, b := circuitClients(t, time.Hour)
	const flaps = 4
	for range flaps {
		flap()
	}
	want := []framework.ConnectionState{framework.Connected}
	for range flaps {
		want = append(want, framework.Suspended, framework.Reconnected)
	}
	if got := bare.list(); !slices.Equal(got, want) {
		t.Fatalf("bare listener saw %v, want %v", got, want)
	}
	if !b.IsOpen() {
		t.Fatal("the circuit is closed while the connection flaps")
	}
	short := []framework.ConnectionState{framework.Connected, framework.Suspended}
	if got := wrapped.list(); !slices.Equal(got, short) {
		t.Fatalf("listener behind the circuit breaker saw %v, want %v", got, short)
	}
	if got := viaBuilder.list(); !slices.Equal(got, short) {
		t.Fatalf("listener of a client built with CircuitBreaking saw %v, want %v", got, short)
	}
}

// TestCircuitBreaker_ClosesWithTheLatestState resets the connection
// once: the circuit opened by Suspended stays open, and when it closes it
// passes on the latest state, Reconnected; the next drop opens it again
// and is passed on at once.
func TestCircuitBreaker_ClosesWithTheLatestState(t *testing.T) {
	t.Parallel()
	flap, bare, wrapped, viaBuilder, b := circuitClients(t, 100*time.Millisecond)
	C, S, R := framework.Connected, framework.Suspended, framework.Reconnected
	for round, want := range [][]framework.ConnectionState{{C, S, R}, {C, S, R, S, R}} {
		flap()
		for _, l := range []struct {
			name string
			log  *stateLog
		}{{"circuit breaker", wrapped}, {"CircuitBreaking client", viaBuilder}} {
			eventually(t, 10*time.Second, func() bool { return len(l.log.list()) >= len(want) },
				"the "+l.name+" passes on Reconnected when its circuit closes")
			if got := l.log.list(); !slices.Equal(got, want) {
				t.Fatalf("round %d: listener behind the %s saw %v, want %v (bare listener: %v)",
					round+1, l.name, got, want, bare.list())
			}
		}
		eventually(t, 10*time.Second, func() bool { return !b.IsOpen() }, "the circuit closed")
	}
}
