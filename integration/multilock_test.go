package integration

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/multilock"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/rwlock"
	"github.com/go-curator/curator/recipes/semaphoremutex"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/zktest"
)

// The locks of this module are Lockers through multilock.Of.
var (
	_ multilock.Locker = multilock.Of((*mutex.Mutex)(nil))
	_ multilock.Locker = multilock.Of((*rwlock.Mutex)(nil))
	_ multilock.Locker = multilock.Of((*semaphoremutex.Mutex)(nil))
	_ multilock.Locker = multilock.Of((*semaphorev2.Semaphore)(nil))
)

// recorded wraps a Locker and logs the releases of its holds.
type recorded struct {
	multilock.Locker
	name string
	mu   *sync.Mutex
	log  *[]string
}

func (r recorded) Acquire(ctx context.Context) (multilock.Member, error) {
	h, err := r.Locker.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return recordedHold{h, r}, nil
}

type recordedHold struct {
	multilock.Member
	r recorded
}

func (h recordedHold) Release(ctx context.Context) error {
	h.r.mu.Lock()
	*h.r.log = append(*h.r.log, h.r.name)
	h.r.mu.Unlock()
	return h.Member.Release(ctx)
}

// failingRelease is a lock that is always granted and fails to release.
type failingRelease struct{ err error }

func (f failingRelease) Acquire(context.Context) (multilock.Member, error) { return f, nil }
func (f failingRelease) TryAcquire(context.Context, time.Duration) (multilock.Member, bool, error) {
	return f, true, nil
}
func (failingRelease) Lost() <-chan struct{}           { return nil }
func (failingRelease) FencingToken() (int64, error)    { return 0, nil }
func (failingRelease) Node() string                    { return "" }
func (f failingRelease) Release(context.Context) error { return f.err }

func newMultiLock(t testing.TB, locks ...multilock.Locker) *multilock.MultiLock {
	t.Helper()
	m, err := multilock.New(locks...)
	if err != nil {
		t.Fatalf("multilock.New: %v", err)
	}
	return m
}

func TestMultiLock_HoldsAllPathsAsOne(t *testing.T) {
	base := testPath(t)
	paths := []string{base + "/a", base + "/b", base + "/c"}
	c := newClient(t)
	m, err := multilock.NewFromPaths(c, paths)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	h, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nodes := h.Nodes()
	for i, p := range paths {
		if kids := children(t, c, p); len(kids) != 1 || nodes[i] != p+"/"+kids[0] {
			t.Fatalf("%s holds %v; want one lock node, the hold's %s", p, kids, nodes[i])
		}
		if _, ok, err := newMutex(t, newClient(t), p).TryAcquire(ctx, 0); ok || err != nil {
			t.Fatalf("another client took %s from the multilock: %v, %v", p, ok, err)
		}
	}
	tokens, err := h.FencingTokens()
	if err != nil || len(tokens) != len(paths) {
		t.Fatalf("FencingTokens = %v, %v", tokens, err)
	}
	if tok, err := h.FencingToken(); err != nil || tok != tokens[0] || h.Node() != nodes[0] {
		t.Fatalf("FencingToken, Node = %d (%v), %s; want the first lock's %d, %s", tok, err, h.Node(), tokens[0], nodes[0])
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); !errors.Is(err, multilock.ErrNotOwner) {
		t.Fatalf("second Release = %v, want ErrNotOwner", err)
	}
	for _, p := range paths {
		if kids := children(t, c, p); len(kids) != 0 {
			t.Fatalf("%s still holds %v after release", p, kids)
		}
	}
	h, ok, err := m.TryAcquire(ctx, 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("re-acquire = %v, %v", ok, err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestMultiLock_FailingReleaseStillReleasesTheOthers(t *testing.T) {
	base := testPath(t)
	c := newClient(t)
	boom := errors.New("release refused")
	var mu sync.Mutex
	var log []string
	first, last := newMutex(t, c, base+"/first"), newMutex(t, c, base+"/last")
	m := newMultiLock(t,
		recorded{multilock.Of(first), "first", &mu, &log},
		recorded{failingRelease{boom}, "failing", &mu, &log},
		recorded{multilock.Of(last), "last", &mu, &log},
	)
	ctx := t.Context()
	h, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); !errors.Is(err, boom) {
		t.Fatalf("Release = %v, want the failing lock's error", err)
	}
	if !slices.Equal(log, []string{"last", "failing", "first"}) {
		t.Fatalf("released in order %v; want last, failing, first", log)
	}
	if first.IsAcquiredInThisProcess() || last.IsAcquiredInThisProcess() {
		t.Fatal("a mutex is still held after the release")
	}
	for _, p := range []string{base + "/first", base + "/last"} {
		if kids := children(t, c, p); len(kids) != 0 {
			t.Fatalf("%s still holds %v", p, kids)
		}
	}
}

func TestMultiLock_FailingAcquireReleasesWhatWasTaken(t *testing.T) {
	base := testPath(t)
	paths := []string{base + "/a", base + "/b"}
	c := newClient(t)
	ctx := t.Context()
	other, err := newMutex(t, newClient(t), paths[1]).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m, err := multilock.NewFromPaths(c, paths)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := m.TryAcquire(ctx, 300*time.Millisecond); ok || err != nil {
		t.Fatalf("TryAcquire with the second path held elsewhere = %v, %v; want false, nil", ok, err)
	}
	if kids := children(t, c, paths[0]); len(kids) != 0 {
		t.Fatalf("the first path still holds %v after the failed acquire", kids)
	}
	if kids := children(t, c, paths[1]); len(kids) != 1 {
		t.Fatalf("the second path holds %v; want only the other client's node", kids)
	}

	// Acquire with a ctx that ends: its error, and the first path released.
	actx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := m.Acquire(actx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire with the second path held = %v, want DeadlineExceeded", err)
	}
	if kids := children(t, c, paths[0]); len(kids) != 0 {
		t.Fatalf("the first path still holds %v after the cancelled acquire", kids)
	}

	// An acquire error from a lock: returned, and the mutex before it released.
	boom := errors.New("acquire refused")
	first := newMutex(t, c, paths[0])
	m2 := newMultiLock(t, multilock.Of(first), failingAcquire{boom})
	if _, err := m2.Acquire(ctx); !errors.Is(err, boom) {
		t.Fatalf("Acquire = %v, want the failing lock's error", err)
	}
	if first.IsAcquiredInThisProcess() || len(children(t, c, paths[0])) != 0 {
		t.Fatal("the mutex taken before the failing lock is still held")
	}

	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	h, ok, err := m.TryAcquire(ctx, 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("TryAcquire once free = %v, %v", ok, err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// failingAcquire is a lock whose acquire fails.
type failingAcquire struct{ err error }

func (f failingAcquire) Acquire(context.Context) (multilock.Member, error) { return nil, f.err }
func (f failingAcquire) TryAcquire(context.Context, time.Duration) (multilock.Member, bool, error) {
	return nil, false, f.err
}

func TestMultiLock_BadInput(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	unstarted, err := builder(t, zktest.Shared(t).ConnectString()).Build()
	if err != nil {
		t.Fatal(err)
	}
	closedClient := startClient(t, builder(t, zktest.Shared(t).ConnectString()))
	closedClient.Close()

	for _, paths := range [][]string{{""}, {"rel"}, {base + "/a", "/b/"}} {
		if _, err := multilock.NewFromPaths(c, paths); !errors.Is(err, framework.ErrInvalidPath) || !errors.Is(err, multilock.ErrInvalidArgument) {
			t.Errorf("NewFromPaths(%q) = %v, want ErrInvalidPath and ErrInvalidArgument", paths, err)
		}
	}
	if _, err := multilock.NewFromPaths(c, []string{base + "/a", base + "/a"}); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Errorf("NewFromPaths(duplicate path) = %v, want ErrInvalidArgument", err)
	}
	if _, err := multilock.NewFromPaths(c, nil); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Errorf("NewFromPaths(no paths) = %v, want ErrInvalidArgument", err)
	}
	if _, err := multilock.NewFromPaths(nil, []string{"/x"}); !errors.Is(err, framework.ErrNilClient) || !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Errorf("NewFromPaths(nil client) = %v, want ErrNilClient", err)
	}
	if _, err := multilock.New(); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Errorf("New() = %v, want ErrInvalidArgument", err)
	}
	if _, err := multilock.New(multilock.Of(newMutex(t, c, base+"/a")), nil); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Errorf("New(lock, nil) = %v, want ErrInvalidArgument", err)
	}

	m, err := multilock.NewFromPaths(unstarted, []string{base + "/a", base + "/b"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Acquire(t.Context()); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Acquire on unstarted client = %v, want ErrNotStarted", err)
	}
	m, _ = multilock.NewFromPaths(closedClient, []string{base + "/a", base + "/b"})
	if _, ok, err := m.TryAcquire(t.Context(), time.Second); ok || !errors.Is(err, framework.ErrClosed) {
		t.Errorf("TryAcquire on closed client = %v, %v; want false, ErrClosed", ok, err)
	}
	m, _ = multilock.NewFromPaths(c, []string{base + "/a", base + "/b"})
	if err := (*multilock.Hold)(nil).Release(t.Context()); !errors.Is(err, multilock.ErrNotOwner) {
		t.Errorf("Release without Acquire = %v, want ErrNotOwner", err)
	}
	if _, _, err := m.TryAcquire(t.Context(), -time.Second); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Errorf("TryAcquire(-1s) = %v, want ErrInvalidArgument", err)
	}
	for _, p := range []string{base + "/a", base + "/b"} {
		if kids := children(t, c, p); len(kids) != 0 {
			t.Errorf("bad input left nodes under %s: %v", p, kids)
		}
	}
}
