package integration

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/zktest"
	"github.com/go-curator/curator/recipes/multilock"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/rwlock"
)

// The locks of this module are Lockers.
var (
	_ multilock.Locker = (*mutex.Mutex)(nil)
	_ multilock.Locker = (*rwlock.Mutex)(nil)
)

// recorded wraps a Locker and logs its releases.
type recorded struct {
	multilock.Locker
	name string
	mu   *sync.Mutex
	log  *[]string
}

func (r recorded) Release(ctx context.Context) error {
	r.mu.Lock()
	*r.log = append(*r.log, r.name)
	r.mu.Unlock()
	return r.Locker.Release(ctx)
}

// failingRelease is a lock that is always granted and fails to release.
type failingRelease struct{ err error }

func (failingRelease) Acquire(context.Context) error                           { return nil }
func (failingRelease) TryAcquire(context.Context, time.Duration) (bool, error) { return true, nil }
func (f failingRelease) Release(context.Context) error                         { return f.err }

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
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if kids := children(t, c, p); len(kids) != 1 {
			t.Fatalf("%s holds %v; want one lock node", p, kids)
		}
		if ok, err := newMutex(t, newClient(t), p).TryAcquire(ctx, 0); ok || err != nil {
			t.Fatalf("another client took %s from the multilock: %v, %v", p, ok, err)
		}
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if kids := children(t, c, p); len(kids) != 0 {
			t.Fatalf("%s still holds %v after release", p, kids)
		}
	}
	if ok, err := m.TryAcquire(ctx, 5*time.Second); !ok || err != nil {
		t.Fatalf("re-acquire = %v, %v", ok, err)
	}
	if err := m.Release(ctx); err != nil {
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
		recorded{first, "first", &mu, &log},
		recorded{failingRelease{boom}, "failing", &mu, &log},
		recorded{last, "last", &mu, &log},
	)
	ctx := t.Context()
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Release(ctx); !errors.Is(err, boom) {
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
	other := newMutex(t, newClient(t), paths[1])
	if err := other.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := multilock.NewFromPaths(c, paths)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := m.TryAcquire(ctx, 300*time.Millisecond); ok || err != nil {
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
	if err := m.Acquire(actx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire with the second path held = %v, want DeadlineExceeded", err)
	}
	if kids := children(t, c, paths[0]); len(kids) != 0 {
		t.Fatalf("the first path still holds %v after the cancelled acquire", kids)
	}

	// An acquire error from a lock: returned, and the mutex before it released.
	boom := errors.New("acquire refused")
	first := newMutex(t, c, paths[0])
	m2 := newMultiLock(t, first, failingAcquire{boom})
	if err := m2.Acquire(ctx); !errors.Is(err, boom) {
		t.Fatalf("Acquire = %v, want the failing lock's error", err)
	}
	if first.IsAcquiredInThisProcess() || len(children(t, c, paths[0])) != 0 {
		t.Fatal("the mutex taken before the failing lock is still held")
	}

	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.TryAcquire(ctx, 5*time.Second); !ok || err != nil {
		t.Fatalf("TryAcquire once free = %v, %v", ok, err)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// failingAcquire is a lock whose acquire fails.
type failingAcquire struct{ err error }

func (f failingAcquire) Acquire(context.Context) error                           { return f.err }
func (f failingAcquire) TryAcquire(context.Context, time.Duration) (bool, error) { return false, f.err }
func (failingAcquire) Release(context.Context) error                             { return mutex.ErrNotOwner }

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
		if _, err := multilock.NewFromPaths(c, paths); !errors.Is(err, framework.ErrInvalidPath) {
			t.Errorf("NewFromPaths(%q) = %v, want ErrInvalidPath", paths, err)
		}
	}
	if _, err := multilock.NewFromPaths(c, []string{base + "/a", base + "/a"}); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Errorf("NewFromPaths(duplicate path) = %v, want ErrInvalidArgument", err)
	}
	if _, err := multilock.NewFromPaths(c, nil); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Errorf("NewFromPaths(no paths) = %v, want ErrInvalidArgument", err)
	}
	if _, err := multilock.NewFromPaths(nil, []string{"/x"}); !errors.Is(err, framework.ErrNilClient) {
		t.Errorf("NewFromPaths(nil client) = %v, want ErrNilClient", err)
	}
	if _, err := multilock.New(); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Errorf("New() = %v, want ErrInvalidArgument", err)
	}
	if _, err := multilock.New(newMutex(t, c, base+"/a"), nil); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Errorf("New(lock, nil) = %v, want ErrInvalidArgument", err)
	}

	m, err := multilock.NewFromPaths(unstarted, []string{base + "/a", base + "/b"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Acquire(t.Context()); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Acquire on unstarted client = %v, want ErrNotStarted", err)
	}
	m, _ = multilock.NewFromPaths(closedClient, []string{base + "/a", base + "/b"})
	if ok, err := m.TryAcquire(t.Context(), time.Second); ok || !errors.Is(err, framework.ErrClosed) {
		t.Errorf("TryAcquire on closed client = %v, %v; want false, ErrClosed", ok, err)
	}
	m, _ = multilock.NewFromPaths(c, []string{base + "/a", base + "/b"})
	err = m.Release(t.Context())
	if !errors.Is(err, mutex.ErrNotOwner) {
		t.Errorf("Release without Acquire = %v, want ErrNotOwner", err)
	}
	if _, err := m.TryAcquire(t.Context(), -time.Second); !errors.Is(err, multilock.ErrInvalidArgument) {
		t.Errorf("TryAcquire(-1s) = %v, want ErrInvalidArgument", err)
	}
	for _, p := range []string{base + "/a", base + "/b"} {
		if kids := children(t, c, p); len(kids) != 0 {
			t.Errorf("bad input left nodes under %s: %v", p, kids)
		}
	}
}
