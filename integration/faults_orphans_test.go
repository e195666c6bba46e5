package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
)

// TestFaults_ProtectedCreatesUnderResetsLeaveOneNodeOrNone creates
// protected sequential nodes, ephemeral and persistent, from 6 goroutines
// while the client's connections carry some latency and are reset a few
// tens of milliseconds after each reconnect, so that many creates lose
// their request or their reply, and some run out of time while the client
// reconnects. A create that returned a path must have left exactly that node; a
// create that failed must have left none, once the client's background
// cleanup has run.
func TestFaults_ProtectedCreatesUnderResetsLeaveOneNodeOrNone(t *testing.T) {
	faultsNoLeaks(t)
	base := testPath(t)
	policy, err := retry.NewNTimes(2, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	flaky := newFlakyClient(t, policy)
	c := flaky.c
	obs := newClient(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		obs.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, base)
	})

	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Second)
	defer cancel()
	resetsDone := flaky.resetUntil(ctx, 7)

	type outcome struct {
		parent  string
		created []string // names of the nodes that creates returned
		failed  int
	}
	modes := map[string]framework.CreateMode{"ephemeral": framework.EphemeralSequential, "persistent": framework.PersistentSequential}
	outcomes := map[string]*outcome{}
	for name := range modes {
		outcomes[name] = &outcome{parent: base + "/" + name}
	}
	var (
		wg  sync.WaitGroup
		omu sync.Mutex
	)
	for g := 0; g < 6; g++ {
		name := "ephemeral"
		if g%2 == 1 {
			name = "persistent"
		}
		o, mode := outcomes[name], modes[name]
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(chaosSeed(), uint64(g)))
			for ctx.Err() == nil {
				// Some creates get a deadline short enough to end during a
				// reconnect.
				cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(5+rng.IntN(300))*time.Millisecond)
				p, err := c.Create().CreatingParentContainersIfNeeded().WithProtection().WithMode(mode).
					ForPath(cctx, o.parent+"/node-", nil)
				ccancel()
				omu.Lock()
				if err != nil {
					o.failed++
				} else {
					_, n := framework.SplitPath(p)
					o.created = append(o.created, n)
				}
				omu.Unlock()
			}
		}()
	}
	wg.Wait()
	resetsDone()
	if err := c.BlockUntilConnected(t.Context()); err != nil {
		t.Fatal(err)
	}

	for name, o := range outcomes {
		t.Logf("%s: %d creates returned a node, %d failed, under %d resets", name, len(o.created), o.failed, flaky.resets.Load())
		if len(o.created) == 0 || o.failed == 0 {
			t.Fatalf("%s: %d successes and %d failures: the run did not exercise both outcomes", name, len(o.created), o.failed)
		}
		want := slices.Sorted(slices.Values(o.created))
		if i := firstDuplicate(want); i >= 0 {
			t.Fatalf("%s: two creates returned the same node %s", name, want[i])
		}
		var got []string
		ok := false
		deadline := time.Now().Add(4 * testSessionTimeout)
		for !ok && time.Now().Before(deadline) {
			got = children(t, obs, o.parent)
			ok = slices.Equal(got, want)
			if !ok {
				time.Sleep(50 * time.Millisecond)
			}
		}
		if !ok {
			t.Fatalf("%s: the nodes under %s are not those the successful creates returned:\n%s", name, o.parent, nodeDiff(want, got))
		}
	}
}

// flakyClient is a client whose connections to the shared server go through
// two fault proxies: after a reset go-zookeeper dials the other one at once
// (with a single address it would pause a second).
type flakyClient struct {
	c       *framework.Client
	proxies []*zktest.Proxy
	resets  atomic.Int32
}

// newFlakyClient starts a client through two proxies that add 3 ms of
// latency each way, so that requests are often in flight when a reset
// comes.
func newFlakyClient(t *testing.T, policy retry.Policy) *flakyClient {
	t.Helper()
	f := &flakyClient{}
	for range 2 {
		p, err := zktest.NewProxy(zktest.Shared(t).ConnectString())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		p.SetLatency(3 * time.Millisecond)
		f.proxies = append(f.proxies, p)
	}
	f.c = startClient(t, builder(t, f.proxies[0].Addr()+","+f.proxies[1].Addr()).RetryPolicy(policy))
	return f
}

// resetUntil resets the client's connections 20 to 200 ms after each
// reconnect until ctx ends. Resetting only once the client is connected
// again lets requests through between resets however loaded the machine
// is. The returned func waits until the resets have stopped.
func (f *flakyClient) resetUntil(ctx context.Context, seed uint64) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(chaosSeed(), seed))
		for f.c.BlockUntilConnected(ctx) == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(20+rng.IntN(180)) * time.Millisecond):
			}
			for _, p := range f.proxies {
				p.Reset()
			}
			f.resets.Add(1)
		}
	}()
	return func() { <-done }
}

func firstDuplicate(sorted []string) int {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return i
		}
	}
	return -1
}

// nodeDiff describes the nodes missing from got and those extra in it.
func nodeDiff(want, got []string) string {
	var b strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			fmt.Fprintf(&b, "  missing (a create returned it): %s\n", w)
		}
	}
	for _, g := range got {
		if slices.Contains(want, g) {
			continue
		}
		twin := ""
		for _, w := range want {
			if len(w) > 40 && strings.HasPrefix(g, w[:40]) {
				twin = w
			}
		}
		if twin != "" {
			fmt.Fprintf(&b, "  extra, a second node of the create that returned %s: %s\n", twin, g)
		} else {
			fmt.Fprintf(&b, "  extra (no create returned it): %s\n", g)
		}
	}
	return b.String()
}

// TestFaults_CancelledSemaphoreWaitsLeaveNoNode runs 1,000 semaphore waits
// that all end unsatisfied, by a short wait, by a cancelled ctx, or by a
// TryAcquireN that cannot get all its leases, from 5 clients (2 of them
// with their connections reset every few hundred milliseconds) while both
// leases are held; then 100 TryAcquireN(2) that can each take the one free
// lease but not a second, and must give it back. Afterwards only the
// holder's lease nodes exist, the internal lock is free, and once the
// holder closes, another client takes both leases at once.
func TestFaults_CancelledSemaphoreWaitsLeaveNoNode(t *testing.T) {
	faultsNoLeaks(t)
	path := testPath(t)
	const maxLeases = 2
	obs := newClient(t)
	holder := newSem(t, obs, path, maxLeases)
	held, err := holder.AcquireN(t.Context(), maxLeases)
	if err != nil {
		t.Fatal(err)
	}
	// Clients 3 and 4 have their connections reset during the unsatisfied
	// waits, so some cleanups meet a connection loss.
	var (
		sems  []*semaphorev2.Semaphore
		flaky []*flakyClient
	)
	for i := range 5 {
		c := newClient(t)
		if i >= 3 {
			f := newFlakyClient(t, fastRetry(t))
			flaky = append(flaky, f)
			c = f.c
		}
		sems = append(sems, newSem(t, c, path, maxLeases))
	}

	leases := func() []string { return children(t, obs, path+"/leases") }
	settled := func(want []*semaphorev2.Lease, what string) {
		t.Helper()
		names := nodeNames(want)
		eventually(t, 10*time.Second, func() bool {
			return slices.Equal(leases(), names) && len(children(t, obs, path+"/locks")) == 0
		}, what+": only the holder's leases remain and the internal lock is free")
	}

	// waits runs n unsatisfied waits per goroutine, 4 goroutines per
	// client, and fails the test if any wait is granted.
	var granted atomic.Int32
	waits := func(n int, wait func(ctx context.Context, s *semaphorev2.Semaphore, rng *rand.Rand) ([]*semaphorev2.Lease, error)) {
		var wg sync.WaitGroup
		for i, s := range sems {
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(chaosSeed(), uint64(i*4+g)))
					for range n {
						got, err := wait(t.Context(), s, rng)
						if len(got) > 0 {
							granted.Add(1)
							s.ReturnAll(t.Context(), got)
						}
						if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
							!(i >= 3 && framework.IsRetryable(err)) {
							t.Errorf("an unsatisfied wait returned %v", err)
							return
						}
					}
				}()
			}
		}
		wg.Wait()
	}

	rctx, stopResets := context.WithCancel(t.Context())
	var resetsDone []func()
	for i, f := range flaky {
		resetsDone = append(resetsDone, f.resetUntil(rctx, uint64(100+i)))
	}
	waits(50, func(ctx context.Context, s *semaphorev2.Semaphore, rng *rand.Rand) ([]*semaphorev2.Lease, error) {
		d := time.Duration(rng.IntN(20)) * time.Millisecond
		switch rng.IntN(3) {
		case 0: // a short wait, or a single try
			l, _, err := s.TryAcquire(ctx, d)
			if l != nil {
				return []*semaphorev2.Lease{l}, err
			}
			return nil, err
		case 1: // a cancelled Acquire
			cctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			l, err := s.Acquire(cctx)
			if l != nil {
				return []*semaphorev2.Lease{l}, err
			}
			return nil, err
		default:
			ls, _, err := s.TryAcquireN(ctx, maxLeases, d)
			return ls, err
		}
	})
	stopResets()
	for _, wait := range resetsDone {
		wait()
	}
	t.Logf("%d resets of the flaky clients' connections", flaky[0].resets.Load()+flaky[1].resets.Load())
	if n := granted.Load(); n > 0 {
		t.Fatalf("%d waits were granted a lease while all %d were held", n, maxLeases)
	}
	settled(held, "after 1,000 unsatisfied waits")

	// One lease free: each TryAcquireN(2) may take it, then must give it
	// back when the second does not come.
	if err := holder.ReturnLease(t.Context(), held[1]); err != nil {
		t.Fatal(err)
	}
	held = held[:1]
	waits(5, func(ctx context.Context, s *semaphorev2.Semaphore, rng *rand.Rand) ([]*semaphorev2.Lease, error) {
		ls, _, err := s.TryAcquireN(ctx, maxLeases, time.Duration(5+rng.IntN(30))*time.Millisecond)
		return ls, err
	})
	if n := granted.Load(); n > 0 {
		t.Fatalf("%d TryAcquireN(%d) were granted with one lease held", n, maxLeases)
	}
	settled(held, "after 100 partial TryAcquireN")

	if err := holder.ReturnAll(t.Context(), held); err != nil {
		t.Fatal(err)
	}
	got, ok, err := sems[0].TryAcquireN(t.Context(), maxLeases, 10*time.Second)
	if !ok || err != nil {
		t.Fatalf("TryAcquireN(%d of %d) after the holder closed = %v, %v", maxLeases, maxLeases, ok, err)
	}
	if err := sems[0].ReturnAll(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	settled(nil, "at the end")
}
