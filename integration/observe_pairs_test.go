package integration

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/leaderlatch"
	"github.com/go-curator/curator/recipes/leaderselector"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/rwlock"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/zktest"
)

// gaugeHook keeps, per recipe kind, the acquires waiting and the holds
// held now, from the metrics hook's starts and ends, as a metrics adapter's
// gauges do, and notes any end without its start.
type gaugeHook struct {
	mu       sync.Mutex
	waiting  map[string]int
	held     map[string]int
	unpaired []string
}

func newGaugeHook() *gaugeHook {
	return &gaugeHook{waiting: map[string]int{}, held: map[string]int{}}
}

func (g *gaugeHook) add(m map[string]int, kind string, d int, what string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if m[kind] += d; m[kind] < 0 {
		g.unpaired = append(g.unpaired, what+" "+kind)
	}
}

func (g *gaugeHook) metrics() framework.Metrics {
	return framework.Metrics{
		AcquireStarted: func(i framework.AcquireStartInfo) { g.add(g.waiting, i.Kind, 1, "AcquireStarted") },
		AcquireDone:    func(i framework.AcquireInfo) { g.add(g.waiting, i.Kind, -1, "AcquireDone") },
		HoldStarted:    func(i framework.HoldStartInfo) { g.add(g.held, i.Kind, 1, "HoldStarted") },
		Released:       func(i framework.HoldInfo) { g.add(g.held, i.Kind, -1, "Released") },
	}
}

// now returns the waiters and holders of kind.
func (g *gaugeHook) now(kind string) (waiting, held int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting[kind], g.held[kind]
}

// expect checks the waiters and holders of kind, and that no end came
// without its start.
func (g *gaugeHook) expect(t *testing.T, when, kind string, waiting, held int) {
	t.Helper()
	w, h := g.now(kind)
	if w != waiting || h != held {
		t.Errorf("%s: %s waiting %d, held %d; want %d, %d", when, kind, w, h, waiting, held)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.unpaired) > 0 {
		t.Fatalf("%s: ends without a start: %v", when, g.unpaired)
	}
}

// expectNone checks that nothing waits and nothing is held, of any kind.
func (g *gaugeHook) expectNone(t *testing.T, when string) {
	t.Helper()
	g.mu.Lock()
	waiting, held := maps.Clone(g.waiting), maps.Clone(g.held)
	g.mu.Unlock()
	for k, n := range waiting {
		if n != 0 {
			t.Errorf("%s: %d %s acquires still waiting, want 0", when, n, k)
		}
	}
	for k, n := range held {
		if n != 0 {
			t.Errorf("%s: %d %s holds still held, want 0", when, n, k)
		}
	}
}

// TestObserve_EveryStartHasItsEnd checks the contract the gauges of a
// metrics adapter rely on: for each recipe, each AcquireStarted is followed
// by one AcquireDone however the acquire ends (granted, nested, timed out,
// cancelled, refused on a closed client), and each HoldStarted by one
// Released (released, lost then released, ended by Close), so waiting and
// held go back to 0; and a held lock counts while it is held.
func TestObserve_EveryStartHasItsEnd(t *testing.T) {
	faultsNoLeaks(t)
	g := newGaugeHook()
	c := startClient(t, builder(t, fwShared(t)).Metrics(g.metrics()))
	ctx := t.Context()
	p := testPath(t)

	// A mutex: held, nested, a bounded wait that runs out and a cancelled
	// one beside it.
	m, err := mutex.New(c, p+"/lock")
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Acquire(ctx); err != nil { // nested: no wait, no new hold
		t.Fatal(err)
	}
	g.expect(t, "mutex held", framework.KindMutex, 0, 1)
	other, err := mutex.New(c, p+"/lock")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { // another goroutine: not reentrant
		if _, ok, err := other.TryAcquire(ctx, 50*time.Millisecond); ok || err != nil {
			done <- fmt.Errorf("TryAcquire of a held lock: %v, %v", ok, err)
			return
		}
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { // cancel once the waiter is queued
			defer cancel()
			for cctx.Err() == nil {
				if ps, _ := m.Participants(ctx); len(ps) == 2 {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		_, err := other.Acquire(cctx)
		if !errors.Is(err, context.Canceled) {
			done <- fmt.Errorf("cancelled Acquire: %v", err)
			return
		}
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	g.expect(t, "mutex waits ended", framework.KindMutex, 0, 1)
	for range 2 {
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	g.expect(t, "mutex released", framework.KindMutex, 0, 0)

	// A read/write lock: each side under its own kind.
	rw, err := rwlock.New(c, p+"/rw")
	if err != nil {
		t.Fatal(err)
	}
	wh, err := rw.WriteLock().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rh, err := rw.ReadLock().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g.expect(t, "rwlock held", framework.KindWriteLock, 0, 1)
	g.expect(t, "rwlock held", framework.KindReadLock, 0, 1)
	if err := errors.Join(rh.Release(ctx), wh.Release(ctx)); err != nil {
		t.Fatal(err)
	}

	// A semaphore: one hold per lease.
	sem, err := semaphorev2.New(c, p+"/sem", 2)
	if err != nil {
		t.Fatal(err)
	}
	leases, err := sem.AcquireN(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	g.expect(t, "leases held", framework.KindSemaphore, 0, 2)
	if err := sem.ReturnAll(ctx, leases); err != nil {
		t.Fatal(err)
	}

	// A leader latch's term, ended by Close; an election's, by Close too.
	latch, err := leaderlatch.New(c, p+"/latch")
	if err != nil {
		t.Fatal(err)
	}
	if err := latch.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := latch.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if err := latch.Close(ctx); err != nil {
		t.Fatal(err)
	}
	e, err := leaderselector.NewElection(c, p+"/election")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Campaign(ctx); err != nil {
		t.Fatal(err)
	}
	g.expect(t, "leader", framework.KindLeaderSelector, 0, 1)
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	g.expectNone(t, "every recipe released")

	// A hold lost to a session expiry counts until its holder releases it.
	lost, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := zktest.ExpireSession(ctx, fwShared(t), c.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	<-lost.Lost()
	g.expect(t, "hold lost, not yet released", framework.KindMutex, 0, 1)
	if err := lost.Release(ctx); !releasedAfterLoss(err) {
		t.Fatal(err)
	}
	g.expect(t, "lost hold released", framework.KindMutex, 0, 0)

	// An acquire refused because the client is closed ends its wait.
	c.Close()
	if _, err := m.Acquire(ctx); err == nil {
		t.Fatal("Acquire on a closed client succeeded")
	}
	g.expectNone(t, "client closed")
}

// TestObserve_SemaphorePartialAcquireEndsItsLeases checks that an
// acquire of several leases that fails after taking some (here it times
// out with one of two) ends the hold of each lease it gives back: the
// gauge of leases held goes back to what it was.
//
// It failed before Semaphore.returnQuietly ended the hold reports of the
// leases it gives back: each one stayed counted as held.
func TestObserve_SemaphorePartialAcquireEndsItsLeases(t *testing.T) {
	faultsNoLeaks(t)
	g := newGaugeHook()
	c := startClient(t, builder(t, fwShared(t)).Metrics(g.metrics()))
	ctx := t.Context()
	sem, err := semaphorev2.New(c, testPath(t)+"/sem", 2)
	if err != nil {
		t.Fatal(err)
	}
	first, err := sem.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := sem.TryAcquireN(ctx, 2, 100*time.Millisecond); ok || err != nil {
		t.Fatalf("TryAcquireN of 2 with 1 free: %v, %v; want a timeout", ok, err)
	}
	if ps, err := sem.Participants(ctx); err != nil || len(ps) != 1 {
		t.Fatalf("leases %v (%v), want the first alone", ps, err)
	}
	g.expect(t, "partial acquire timed out", framework.KindSemaphore, 0, 1)
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	g.expect(t, "first lease released", framework.KindSemaphore, 0, 0)
}
