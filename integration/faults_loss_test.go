package integration

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/rwlock"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/zktest"
	"go.uber.org/goleak"
)

// The loss tests check the promise a holder relies on: when its session
// is expired, or its connection is cut past the session timeout, every
// hold it has sees Lost() close, every time, and the lock is usable again
// afterwards. The time bounds below are liveness checks with a generous
// margin (a Lost() that never closes fails them), not performance
// assertions.
const lossMargin = 5 * time.Second

// faultsNoLeaks checks, after every cleanup registered later (clients,
// proxies, servers), that the test left no goroutine behind.
func faultsNoLeaks(t *testing.T) {
	t.Helper()
	zktest.Shared(t) // its goroutines live as long as the binary
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// lossHold is one hold whose Lost() the tests watch.
type lossHold struct {
	name    string
	node    string
	lost    <-chan struct{}
	release func(ctx context.Context) error
}

// lossLocks is one lock of each kind, each on its own path, all through
// one client. The same instances are used round after round, so a lock
// that a loss leaves wedged fails the next round.
type lossLocks struct {
	m      *mutex.Mutex
	rw, rr *rwlock.Lock
	sem    *semaphorev2.Semaphore
}

func newLossLocks(t *testing.T, c *framework.Client, base string) *lossLocks {
	t.Helper()
	return &lossLocks{
		m:   newMutex(t, c, base+"/mutex"),
		rw:  newRWLock(t, c, base+"/rwlock-write"),
		rr:  newRWLock(t, c, base+"/rwlock-read"),
		sem: newSem(t, c, base+"/semaphore", 2),
	}
}

// acquire takes every lock on the calling goroutine and returns the holds.
func (l *lossLocks) acquire(t *testing.T) []lossHold {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var holds []lossHold
	h, err := l.m.Acquire(ctx)
	if err != nil {
		t.Fatalf("mutex: %v", err)
	}
	holds = append(holds, lossHold{"mutex", h.Node(), h.Lost(), h.Release})
	for _, side := range []struct {
		name string
		m    *rwlock.Mutex
	}{{"rwlock write", l.rw.WriteLock()}, {"rwlock read", l.rr.ReadLock()}} {
		h, err := side.m.Acquire(ctx)
		if err != nil {
			t.Fatalf("%s: %v", side.name, err)
		}
		holds = append(holds, lossHold{side.name, h.Node(), h.Lost(), h.Release})
	}
	lease, err := l.sem.Acquire(ctx)
	if err != nil {
		t.Fatalf("semaphore: %v", err)
	}
	holds = append(holds, lossHold{"semaphore lease", lease.Node(), lease.Lost(), lease.Release})
	for _, h := range holds {
		if h.node == "" || isClosed(h.lost) {
			t.Fatalf("%s: fresh hold has node %q, Lost() closed = %v", h.name, h.node, isClosed(h.lost))
		}
	}
	return holds
}

// isClosed reports whether a loss signal is closed, without waiting.
var isClosed = chans.IsClosed

// awaitLost fails the test unless every hold's Lost() closes within bound
// of since.
func awaitLost(t *testing.T, holds []lossHold, since time.Time, bound time.Duration, what string) {
	t.Helper()
	timeout := time.NewTimer(time.Until(since.Add(bound)))
	defer timeout.Stop()
	for _, h := range holds {
		select {
		case <-h.lost:
		case <-timeout.C:
			t.Fatalf("%s: the %s hold's Lost() did not close within %v", what, h.name, bound)
		}
	}
}

// nodesGone waits until the server has deleted every hold's node (the
// session is over on the server too).
func nodesGone(t *testing.T, obs *framework.Client, holds []lossHold, what string) {
	t.Helper()
	eventually(t, 3*testSessionTimeout, func() bool {
		for _, h := range holds {
			if stat, err := obs.CheckExists().ForPath(t.Context(), h.node); err != nil || stat != nil {
				return false
			}
		}
		return true
	}, what+": the lost holds' nodes are deleted by the server")
}

// releaseAll releases every hold, as a holder does after Lost(): the
// release must succeed and leave the lock usable.
func releaseAll(t *testing.T, holds []lossHold, what string) {
	t.Helper()
	for _, h := range holds {
		if err := h.release(t.Context()); !releasedAfterLoss(err) {
			t.Fatalf("%s: release of the lost %s hold: %v", what, h.name, err)
		}
	}
}

// proxiedClient starts a client whose only way to the shared server is
// through a fault proxy it returns.
func proxiedClient(t *testing.T, b func(*framework.Builder) *framework.Builder) (*framework.Client, *zktest.Proxy) {
	t.Helper()
	p, err := zktest.NewProxy(zktest.Shared(t).ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return startClient(t, b(builder(t, p.Addr()))), p
}

// stateLog records a client's connection states.
type stateLog struct {
	mu     sync.Mutex
	states []framework.ConnectionState
}

func (s *stateLog) listen(st framework.ConnectionState) {
	s.mu.Lock()
	s.states = append(s.states, st)
	s.mu.Unlock()
}

func (s *stateLog) count(st framework.ConnectionState) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, got := range s.states {
		if got == st {
			n++
		}
	}
	return n
}

func (s *stateLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, len(s.states))
	for i, st := range s.states {
		names[i] = st.String()
	}
	return strings.Join(names, " ")
}

func TestFaults_ExpiredSessionClosesLostEveryTime(t *testing.T) {
	faultsNoLeaks(t)
	base := testPath(t)
	cluster := zktest.Shared(t)
	c := newClient(t)
	obs := newClient(t)
	locks := newLossLocks(t, c, base)
	competitor := newMutex(t, obs, base+"/mutex")
	competitorSem := newSem(t, obs, base+"/semaphore", 2)
	for round := 1; round <= 3; round++ {
		what := "expiry round " + strconv.Itoa(round)
		holds := locks.acquire(t)
		expired := time.Now()
		if err := zktest.ExpireSession(t.Context(), cluster.ConnectString(), c.ZooKeeper()); err != nil {
			t.Fatal(err)
		}
		awaitLost(t, holds, expired, testSessionTimeout+lossMargin, what)
		nodesGone(t, obs, holds, what)
		// The mutex is free for others while the lost holder has not
		// released yet.
		ch, ok, err := competitor.TryAcquire(t.Context(), 10*time.Second)
		if !ok || err != nil {
			t.Fatalf("%s: another client's TryAcquire after the expiry = %v, %v", what, ok, err)
		}
		if err := ch.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		// Both leases of the semaphore are free again.
		leases, ok, err := competitorSem.TryAcquireN(t.Context(), 2, 10*time.Second)
		if !ok || err != nil {
			t.Fatalf("%s: another client's TryAcquireN(2 of 2) after the expiry = %v, %v", what, ok, err)
		}
		if err := competitorSem.ReturnAll(t.Context(), leases); err != nil {
			t.Fatal(err)
		}
		releaseAll(t, holds, what)
	}
	for _, p := range []string{"/mutex", "/rwlock-write", "/rwlock-read", "/semaphore/leases", "/semaphore/locks"} {
		if kids := children(t, obs, base+p); len(kids) != 0 {
			t.Fatalf("nodes left under %s after the rounds: %v", p, kids)
		}
	}
}

func TestFaults_ConnectionCutPastSessionTimeoutClosesLostEveryTime(t *testing.T) {
	faultsNoLeaks(t)
	base := testPath(t)
	var log stateLog
	c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b.Listener(log.listen) })
	obs := newClient(t)
	locks := newLossLocks(t, c, base)
	for round := 1; round <= 3; round++ {
		what := "cut round " + strconv.Itoa(round)
		holds := locks.acquire(t)
		cut := time.Now()
		proxy.Pause()
		// Under the standard policy Lost() closes at Suspended, before the
		// session can have expired on the server.
		awaitLost(t, holds, cut, testSessionTimeout+lossMargin, what)
		if st := c.State(); st != framework.Suspended && st != framework.Lost {
			t.Fatalf("%s: Lost() closed while the client is %v", what, st)
		}
		// Keep the connection cut until the server has expired the session.
		nodesGone(t, obs, holds, what)
		proxy.Resume()
		if err := c.BlockUntilConnected(t.Context()); err != nil {
			t.Fatal(err)
		}
		releaseAll(t, holds, what)
	}
	if n := log.count(framework.Lost); n < 3 {
		t.Fatalf("the client reported Lost %d times in 3 cuts past the session timeout: %v", n, &log)
	}
}

// TestFaults_SessionPolicyKeepsHoldsAcrossSuspended checks the session
// error policy: a short Suspended (a connection reset the session
// survives) leaves Lost() open and the nodes in place, while a client under
// the standard policy sees the same reset as a loss; a cut past the
// session timeout then closes Lost() when the client reports Lost.
func TestFaults_SessionPolicyKeepsHoldsAcrossSuspended(t *testing.T) {
	faultsNoLeaks(t)
	base := testPath(t)
	var log stateLog
	c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder {
		return b.ConnectionStateErrorPolicy(framework.SessionErrorPolicy).Listener(log.listen)
	})
	std, stdProxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder {
		return b.ConnectionStateErrorPolicy(framework.StandardErrorPolicy)
	})
	obs := newClient(t)
	locks := newLossLocks(t, c, base)
	stdLock := newMutex(t, std, base+"/standard")
	holds := locks.acquire(t)
	for round := 1; round <= 2; round++ {
		what := "reset round " + strconv.Itoa(round)
		stdHold, err := stdLock.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		stdLost := stdHold.Lost()
		before := log.count(framework.Reconnected)
		proxy.Reset()
		stdProxy.Reset()
		eventually(t, 3*testSessionTimeout, func() bool { return log.count(framework.Reconnected) > before },
			what+": the session-policy client reconnects")
		if log.count(framework.Suspended) < round || log.count(framework.Lost) > 0 {
			t.Fatalf("%s: states %v; want a Suspended per reset and no Lost", what, &log)
		}
		for _, h := range holds {
			if isClosed(h.lost) {
				t.Fatalf("%s: the %s hold's Lost() closed on a Suspended under the session policy", what, h.name)
			}
			if stat, err := obs.CheckExists().ForPath(t.Context(), h.node); err != nil || stat == nil {
				t.Fatalf("%s: the %s hold's node after the reset: %v, %v", what, h.name, stat, err)
			}
		}
		awaitLost(t, []lossHold{{name: "standard-policy mutex", lost: stdLost}}, time.Now(), lossMargin, what)
		if err := std.BlockUntilConnected(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := stdHold.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	// A cut past the session timeout: Suspended comes after at most 2/3 of
	// the session timeout, and Lost a session timeout later.
	cut := time.Now()
	proxy.Pause()
	awaitLost(t, holds, cut, 2*testSessionTimeout+lossMargin, "cut")
	if st := c.State(); st != framework.Lost {
		t.Fatalf("Lost() closed while the client is %v (states %v); want LOST under the session policy", st, &log)
	}
	nodesGone(t, obs, holds, "cut")
	proxy.Resume()
	if err := c.BlockUntilConnected(t.Context()); err != nil {
		t.Fatal(err)
	}
	releaseAll(t, holds, "cut")
	holds = locks.acquire(t)
	releaseAll(t, holds, "after the cut")
}
