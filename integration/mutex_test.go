package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/zktest"
)

func newMutex(t testing.TB, c *framework.Client, path string, opts ...mutex.Option) *mutex.Mutex {
	t.Helper()
	m, err := mutex.New(c, path, opts...)
	if err != nil {
		t.Fatalf("mutex.New: %v", err)
	}
	return m
}

func TestMutex_TwoClientsExcludeEachOther(t *testing.T) {
	path := testPath(t)
	ca := newClient(t)
	a := newMutex(t, ca, path)
	b := newMutex(t, newClient(t), path)
	ctx := t.Context()

	ha, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h, ok, err := b.TryAcquire(ctx, 300*time.Millisecond); err != nil || ok || h != nil {
		t.Fatalf("second client TryAcquire while held = %v, %v, %v; want nil, false, nil", h, ok, err)
	}
	if h, ok, err := b.TryAcquire(ctx, 0); err != nil || ok || h != nil {
		t.Fatalf("TryAcquire(0) while held = %v, %v, %v; want nil, false, nil", h, ok, err)
	}
	if kids := children(t, ca, path); len(kids) != 1 {
		t.Fatalf("after two timed-out tries the path holds %v; want only the holder's node", kids)
	}
	got := make(chan error, 1)
	go func() {
		h, err := b.Acquire(ctx)
		if err == nil {
			err = h.Release(ctx)
		}
		got <- err
	}()
	if err := ha.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("second client after release: %v", err)
	}
	if kids := children(t, ca, path); len(kids) != 0 {
		t.Fatalf("nodes left under %s: %v", path, kids)
	}
}

func TestMutex_NodeLayoutIsCurators(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	m := newMutex(t, c, path)
	h, err := m.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(t.Context())
	kids := children(t, c, path)
	if len(kids) != 1 {
		t.Fatalf("children = %v; want one lock node", kids)
	}
	name := kids[0]
	if !framework.IsProtected(name) || !strings.HasPrefix(framework.StripProtected(name), "lock-") ||
		len(framework.StripProtected(name)) != len("lock-")+10 {
		t.Fatalf("node %q is not _c_<uuid>-lock-<seq10>", name)
	}
	if h.Node() != path+"/"+name {
		t.Fatalf("Node() = %q, want %q", h.Node(), path+"/"+name)
	}
	data, stat, err := c.GetData().ForPath(t.Context(), h.Node())
	if err != nil || stat.EphemeralOwner != c.SessionID() || string(data) != string(c.DefaultData()) {
		t.Fatalf("node data %q owner %x err %v; want default data, ephemeral of our session", data, stat.EphemeralOwner, err)
	}
}

// The goroutine-keyed Release of Curator's InterProcessMutex.
func TestMutex_ReentrantThreeLevels(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	m := newMutex(t, c, path)
	ctx := t.Context()
	var first *mutex.Hold
	for i := 0; i < 3; i++ {
		h, err := m.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = h
		}
		if h != first {
			t.Fatalf("nested acquire %d returned another hold", i+1)
		}
	}
	if kids := children(t, c, path); len(kids) != 1 {
		t.Fatalf("reentrant acquires made %d nodes: %v", len(kids), kids)
	}
	for i := 0; i < 2; i++ {
		if err := m.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if !m.IsAcquiredInThisProcess() || len(children(t, c, path)) != 1 {
			t.Fatalf("after %d of 3 releases the lock is no longer held", i+1)
		}
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if m.IsAcquiredInThisProcess() || len(children(t, c, path)) != 0 {
		t.Fatal("after the last release the lock is still held")
	}
	if err := m.Release(ctx); !errors.Is(err, mutex.ErrNotOwner) {
		t.Fatalf("release without hold = %v, want ErrNotOwner", err)
	}
	if err := first.Release(ctx); !errors.Is(err, mutex.ErrNotOwner) {
		t.Fatalf("release of a released hold = %v, want ErrNotOwner", err)
	}
	if _, err := first.FencingToken(); !errors.Is(err, mutex.ErrNotOwner) {
		t.Fatalf("FencingToken of a released hold = %v, want ErrNotOwner", err)
	}
}

// Each release of the hold undoes one acquire, from any goroutine.
func TestMutex_HoldReleaseCountsFromAnyGoroutine(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	m := newMutex(t, c, path)
	ctx := t.Context()
	h, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := m.Acquire(ctx); err != nil || again != h {
		t.Fatalf("nested acquire = %p, %v; want the same hold %p", again, err, h)
	}
	release := func() error {
		errc := make(chan error)
		go func() { errc <- h.Release(ctx) }()
		return <-errc
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if !m.IsOwnedByCurrentGoroutine() || len(children(t, c, path)) != 1 {
		t.Fatal("one release of two acquires ended the hold")
	}
	if tok, err := h.FencingToken(); err != nil || tok == 0 {
		t.Fatalf("FencingToken while held once = %d, %v", tok, err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if m.IsAcquiredInThisProcess() || m.IsOwnedByCurrentGoroutine() || len(children(t, c, path)) != 0 {
		t.Fatal("the last release from another goroutine left the lock held")
	}
	if err := m.Release(ctx); !errors.Is(err, mutex.ErrNotOwner) {
		t.Fatalf("Mutex.Release after the hold's release = %v, want ErrNotOwner", err)
	}
	// The acquiring goroutine starts afresh.
	h2, err := m.Acquire(ctx)
	if err != nil || h2 == h {
		t.Fatalf("acquire after the release = %p, %v; want a new hold", h2, err)
	}
	if err := h2.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestMutex_GoroutinesSharingOneInstanceAreExcluded(t *testing.T) {
	m := newMutex(t, newClient(t), testPath(t))
	ctx := t.Context()
	var inside atomic.Bool
	var overlaps, total atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 10; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				h, err := m.Acquire(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if !inside.CompareAndSwap(false, true) {
					overlaps.Add(1)
				}
				total.Add(1)
				time.Sleep(time.Millisecond)
				inside.Store(false)
				if err := h.Release(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if overlaps.Load() != 0 || total.Load() != 50 {
		t.Fatalf("overlaps %d, acquisitions %d; want 0 and 50", overlaps.Load(), total.Load())
	}
}

func TestMutex_ForeignGoroutineReleaseIsErrNotOwner(t *testing.T) {
	m := newMutex(t, newClient(t), testPath(t))
	if _, err := m.Acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error)
	go func() { errc <- m.Release(t.Context()) }()
	if err := <-errc; !errors.Is(err, mutex.ErrNotOwner) {
		t.Fatalf("release from another goroutine = %v, want ErrNotOwner", err)
	}
	if !m.IsAcquiredInThisProcess() {
		t.Fatal("a foreign release dropped the hold")
	}
	if err := m.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestMutex_FencingTokensIncreaseAcrossHolders(t *testing.T) {
	path := testPath(t)
	clients := []*framework.Client{newClient(t), newClient(t), newClient(t)}
	var last int64
	for i := 0; i < 12; i++ {
		m := newMutex(t, clients[i%3], path)
		h, err := m.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		tok, err := h.FencingToken()
		if err != nil || tok <= last {
			t.Fatalf("holder %d token %d (err %v); previous %d: want strictly greater", i, tok, err, last)
		}
		last = tok
		if err := h.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := h.FencingToken(); !errors.Is(err, mutex.ErrNotOwner) {
			t.Fatalf("FencingToken after the release = %v, want ErrNotOwner", err)
		}
		if i == 5 {
			// Let the container parent be reaped: tokens must still grow.
			eventually(t, 10*time.Second, func() bool {
				st, _ := clients[0].CheckExists().ForPath(t.Context(), path)
				return st == nil
			}, "the empty container parent is reaped")
		}
	}
	if _, err := (*mutex.Hold)(nil).FencingToken(); !errors.Is(err, mutex.ErrNotOwner) {
		t.Fatalf("FencingToken without hold = %v, want ErrNotOwner", err)
	}
}

func TestMutex_FIFOWithoutHerd(t *testing.T) {
	path := testPath(t)
	cluster := zktest.Shared(t)
	c := newClient(t)
	holder := newMutex(t, c, path)
	ctx := t.Context()
	held, err := holder.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	order := make(chan int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		m := newMutex(t, c, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := m.Acquire(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			if err := h.Release(ctx); err != nil {
				t.Error(err)
			}
		}()
		// queue the waiters one by one, in a known order
		eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == i+2 }, "waiter queued")
	}
	// Each waiter watches only its predecessor and its own node (a node
	// another session deletes must not hold, see lockcore): the watched
	// paths are the holder's node and every waiter's, each watched by one
	// session (the waiters share one client), and nobody watches the parent
	// (with a queue this short, no client keeps a children view of it
	// either).
	// A waiter's node is listed before its watch on the predecessor is set:
	// wait until the last waiter's watch is there, then check for extras.
	var wchp string
	var watched map[string]int // path: sessions watching it
	eventually(t, 10*time.Second, func() bool {
		var err error
		wchp, err = cluster.Servers()[0].FourLetter("wchp")
		if err != nil {
			t.Fatal(err)
		}
		watched = map[string]int{}
		at := ""
		for _, line := range strings.Split(wchp, "\n") {
			switch {
			case strings.HasPrefix(line, "/"):
				at = line
			case strings.HasPrefix(at, path) && strings.TrimSpace(line) != "":
				watched[at]++
			}
		}
		return len(watched) >= n+1
	}, "every waiter's predecessor watch is set")
	if len(watched) != n+1 || watched[path] != 0 {
		t.Fatalf("%d watched paths under the lock (parent watched: %v); want %d, the holder's and each waiter's node:\n%s",
			len(watched), watched[path] != 0, n+1, wchp)
	}
	for p, sessions := range watched {
		if sessions > 1 {
			t.Fatalf("%s watched by %d sessions", p, sessions)
		}
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	wantFIFO(t, order, &wg, n)
}

func TestMutex_CancelledWaitsLeaveNoNodes(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	holder := newMutex(t, c, path)
	held, err := holder.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	sem := make(chan struct{}, 50)
	var wg sync.WaitGroup
	var bad atomic.Int32
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			m, _ := mutex.New(c, path)
			if i%2 == 0 {
				ctx, cancel := context.WithTimeout(t.Context(), time.Duration(1+i%20)*time.Millisecond)
				defer cancel()
				if h, err := m.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) || h != nil {
					bad.Add(1)
				}
				return
			}
			if h, ok, err := m.TryAcquire(t.Context(), time.Duration(1+i%20)*time.Millisecond); ok || err != nil || h != nil {
				bad.Add(1)
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d of %d cancelled waits did not return the expected error", bad.Load(), n)
	}
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == 1 }, "only the holder's node remains")
	if err := held.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, c, path); len(kids) != 0 {
		t.Fatalf("nodes left: %v", kids)
	}
}

func TestMutex_ExpiredHolderLosesAndOtherAcquires(t *testing.T) {
	path := testPath(t)
	cluster := zktest.Shared(t)
	ca := newClient(t)
	a := newMutex(t, ca, path)
	b := newMutex(t, newClient(t), path)
	ha, err := a.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	lost := ha.Lost()
	got, release, released := make(chan error, 1), make(chan struct{}), make(chan error, 1)
	go func() {
		h, err := b.Acquire(t.Context())
		got <- err
		if err == nil {
			<-release
			released <- h.Release(t.Context())
		}
	}()
	if err := zktest.ExpireSession(t.Context(), cluster.ConnectString(), ca.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lost:
	case <-time.After(3 * testSessionTimeout):
		t.Fatal("the expired holder's Lost() did not close")
	}
	if err := <-got; err != nil {
		t.Fatalf("other client after expiry: %v", err)
	}
	// The old holder's release cleans up and leaves the instance usable.
	if err := ha.Release(t.Context()); err != nil {
		t.Logf("release after loss: %v", err)
	}
	if a.IsAcquiredInThisProcess() {
		t.Fatal("release after loss kept the hold")
	}
	close(release)
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	h, ok, err := a.TryAcquire(t.Context(), 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("old holder re-acquire = %v, %v", ok, err)
	}
	h.Release(t.Context())
}

func TestMutex_ServerRestartWhileWaiting(t *testing.T) {
	cluster := zktest.Start(t)
	path := testPath(t)
	ca := startClient(t, builder(t, cluster.ConnectString()))
	cb := startClient(t, builder(t, cluster.ConnectString()))
	a, b := newMutex(t, ca, path), newMutex(t, cb, path)
	ctx := t.Context()
	ha, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		h, err := b.Acquire(ctx)
		if err == nil {
			err = h.Release(ctx)
		}
		got <- err
	}()
	eventually(t, 5*time.Second, func() bool { return len(children(t, ca, path)) == 2 }, "waiter queued")
	srv := cluster.Servers()[0]
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := ha.Release(ctx); err != nil {
		t.Fatalf("holder release after restart: %v", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiter after restart: %v", err)
	}
}

func TestMutex_NamespaceAndContainerReaped(t *testing.T) {
	b := builder(t, zktest.Shared(t).ConnectString()).Namespace("ns_mutex")
	c := startClient(t, b)
	raw := newClient(t)
	m := newMutex(t, c, "/locks/a")
	h, err := m.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if kids := children(t, raw, "/ns_mutex/locks/a"); len(kids) != 1 {
		t.Fatalf("namespaced lock node not found on the server: %v", kids)
	}
	st, err := raw.CheckExists().ForPath(t.Context(), "/ns_mutex/locks/a")
	if err != nil || st == nil || st.EphemeralOwner != 0 {
		t.Fatalf("parent stat %+v err %v", st, err)
	}
	if err := h.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() bool {
		st, _ := raw.CheckExists().ForPath(t.Context(), "/ns_mutex/locks/a")
		return st == nil
	}, "the container parent is reaped after use")
}

func TestMutex_Revocation(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	revoked := make(chan struct{}, 1)
	holder := newMutex(t, c, path, mutex.WithRevocation(func() { revoked <- struct{}{} }))
	h, err := holder.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	data, _, err := c.GetData().ForPath(t.Context(), h.Node())
	if err != nil || len(data) != 0 {
		t.Fatalf("revocable holder's node data %q (err %v); want empty", data, err)
	}
	other := newMutex(t, newClient(t), path)
	parts, err := other.Participants(t.Context())
	if err != nil || len(parts) != 1 {
		t.Fatalf("participants %v, %v", parts, err)
	}
	if err := mutex.Revoke(t.Context(), c, parts[0]); err != nil {
		t.Fatal(err)
	}
	select {
	case <-revoked:
	case <-time.After(10 * time.Second):
		t.Fatal("the revocation listener did not fire")
	}
	if err := h.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	ho, ok, err := other.TryAcquire(t.Context(), 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("acquire after revoked release = %v, %v", ok, err)
	}
	ho.Release(t.Context())
}

func TestMutex_BadInput(t *testing.T) {
	c := newClient(t)
	unstarted, err := builder(t, zktest.Shared(t).ConnectString()).Build()
	if err != nil {
		t.Fatal(err)
	}
	closedClient := startClient(t, builder(t, zktest.Shared(t).ConnectString()))
	closedClient.Close()
	for _, p := range []string{"", "rel", "/a/", "//a", "/a/../b", "/a\x00b"} {
		if _, err := mutex.New(c, p); !errors.Is(err, framework.ErrInvalidPath) || !errors.Is(err, mutex.ErrInvalidArgument) {
			t.Errorf("New(%q) = %v, want ErrInvalidPath and ErrInvalidArgument", p, err)
		}
	}
	if _, err := mutex.New(nil, "/x"); !errors.Is(err, framework.ErrNilClient) || !errors.Is(err, mutex.ErrInvalidArgument) {
		t.Errorf("New(nil client) = %v, want ErrNilClient and ErrInvalidArgument", err)
	}
	m := newMutex(t, unstarted, testPath(t))
	if _, err := m.Acquire(t.Context()); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Acquire on unstarted client = %v, want ErrNotStarted", err)
	}
	m = newMutex(t, closedClient, testPath(t))
	if _, err := m.Acquire(t.Context()); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("Acquire on closed client = %v, want ErrClosed", err)
	}
	m = newMutex(t, c, testPath(t))
	if err := m.Release(t.Context()); !errors.Is(err, mutex.ErrNotOwner) {
		t.Errorf("Release without Acquire = %v, want ErrNotOwner", err)
	}
	if _, _, err := m.TryAcquire(t.Context(), -time.Second); !errors.Is(err, mutex.ErrInvalidArgument) || !errors.Is(err, framework.ErrInvalidArgument) {
		t.Errorf("TryAcquire(-1s) = %v, want ErrInvalidArgument", err)
	}
	select {
	case <-(*mutex.Hold)(nil).Lost():
	default:
		t.Error("Lost() without a hold is not closed")
	}
	if kids := children(t, c, testPath(t)); len(kids) != 0 {
		t.Errorf("bad input left nodes: %v", kids)
	}
	_ = fmt.Sprint()
}
