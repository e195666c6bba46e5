package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/recipes/semaphoremutex"
	"github.com/go-curator/curator/zktest"
)

// TestFaults_SessionLocks_SemaphoreMutexReleaseEndsOnlyItsHold: goroutine
// A holds a semaphoremutex and goroutine B waits on the same Mutex; A's
// session expires and B is granted a fresh lease; A then releases, as the
// package doc asks after a loss. That Release must end A's lost hold, not
// B's: another client must not get the lock while B holds it, and B's own
// Release must still find its hold.
func TestFaults_SessionLocks_SemaphoreMutexReleaseEndsOnlyItsHold(t *testing.T) {
	faultsNoLeaks(t)
	base := testPath(t)
	a, d, obs := newClient(t), newClient(t), newClient(t)
	m, md := newSemMutex(t, a, base), newSemMutex(t, d, base)
	ctx := t.Context()

	// This goroutine is A.
	hA, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	aLost := hA.Lost()

	type grant struct {
		lost <-chan struct{}
		err  error
	}
	bGot, bRelease, bDone := make(chan grant, 1), make(chan struct{}), make(chan error, 1)
	go func() {
		bctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		hB, err := m.Acquire(bctx)
		if err != nil {
			bGot <- grant{err: err}
			bDone <- nil
			return
		}
		bGot <- grant{lost: hB.Lost()}
		<-bRelease
		bDone <- m.Release(bctx) // Curator's release(), keyed by this goroutine: B's hold
	}()
	released := false
	releaseB := func() error {
		if released {
			return nil
		}
		released = true
		close(bRelease)
		return <-bDone
	}
	t.Cleanup(func() { _ = releaseB() })
	eventually(t, 10*time.Second, func() bool { return len(children(t, obs, base+"/locks")) == 1 },
		"B waits on the semaphore's lock")

	expired := time.Now()
	if err := zktest.ExpireSession(ctx, zktest.Shared(t).ConnectString(), a.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	awaitLost(t, []lossHold{{name: "A's", lost: aLost}}, expired, testSessionTimeout+lossMargin, "expiry")
	var b grant
	select {
	case b = <-bGot:
	case <-time.After(3 * testSessionTimeout):
		t.Fatal("B was not granted the lock after A's session expired")
	}
	if b.err != nil {
		t.Fatalf("B's Acquire: %v", b.err)
	}

	// A cleans up after its loss.
	if err := m.Release(ctx); !releasedAfterLoss(err) {
		t.Fatalf("A's Release after its loss: %v", err)
	}
	if err := hA.Release(ctx); !errors.Is(err, semaphoremutex.ErrNotOwner) {
		t.Errorf("A's hold after A's Release = %v, want ErrNotOwner: the Release ended another hold", err)
	}
	hd, ok, err := md.TryAcquire(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		if !isClosed(b.lost) {
			t.Errorf("two holders: another client acquired the lock after A's Release, while B holds it with Lost() open")
		}
		if err := hd.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := releaseB(); err != nil {
		t.Errorf("B's Release: %v", err)
	}
	hd, ok, err = md.TryAcquire(ctx, 10*time.Second)
	if !ok || err != nil {
		t.Fatalf("another client's TryAcquire after B released = %v, %v", ok, err)
	}
	if err := hd.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/leases", "/locks"} {
		if kids := children(t, obs, base+p); len(kids) != 0 {
			t.Fatalf("nodes left under %s: %v", p, kids)
		}
	}
}

// TestFaults_SessionLocks_SemaphoreMutexHandedOffHolds: the same loss with
// the work handed to other goroutines. A's hold goes to one worker, B's
// (granted after A's session expired) to another. A's worker releases
// late, with Mutex.Release (it acquired nothing, so the oldest hold, A's
// lost one, ends) or with its Hold; B's hold is never ended by it.
func TestFaults_SessionLocks_SemaphoreMutexHandedOffHolds(t *testing.T) {
	for _, viaHold := range []bool{false, true} {
		name := "Mutex.Release"
		if viaHold {
			name = "Hold.Release"
		}
		t.Run(name, func(t *testing.T) {
			faultsNoLeaks(t)
			base := testPath(t)
			a, d, obs := newClient(t), newClient(t), newClient(t)
			m, md := newSemMutex(t, a, base), newSemMutex(t, d, base)
			ctx := t.Context()

			hA, err := m.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			type grant struct {
				h   *semaphoremutex.Hold
				err error
			}
			bGot := make(chan grant, 1)
			go func() {
				h, err := m.Acquire(ctx)
				bGot <- grant{h, err}
			}()
			eventually(t, 10*time.Second, func() bool { return len(children(t, obs, base+"/locks")) == 1 },
				"B waits on the semaphore's lock")
			expired := time.Now()
			if err := zktest.ExpireSession(ctx, zktest.Shared(t).ConnectString(), a.ZooKeeper()); err != nil {
				t.Fatal(err)
			}
			awaitLost(t, []lossHold{{name: "A's", lost: hA.Lost()}}, expired, testSessionTimeout+lossMargin, "expiry")
			var b grant
			select {
			case b = <-bGot:
			case <-time.After(3 * testSessionTimeout):
				t.Fatal("B was not granted the lock after A's session expired")
			}
			if b.err != nil {
				t.Fatalf("B's Acquire: %v", b.err)
			}
			t.Cleanup(func() { _ = b.h.Release(context.Background()) })

			// A's worker, a goroutine that acquired nothing, releases late.
			done := make(chan error, 1)
			go func() {
				if viaHold {
					done <- hA.Release(ctx)
				} else {
					done <- m.Release(ctx)
				}
			}()
			if err := <-done; !releasedAfterLoss(err) {
				t.Fatalf("A's worker's release: %v", err)
			}
			if err := hA.Release(ctx); !errors.Is(err, semaphoremutex.ErrNotOwner) {
				t.Errorf("A's hold released again = %v, want ErrNotOwner", err)
			}
			if hd, ok, err := md.TryAcquire(ctx, 0); err != nil || ok {
				if ok {
					_ = hd.Release(ctx)
				}
				t.Fatalf("another client's TryAcquire while B holds = %v, %v; want false", ok, err)
			}
			if isClosed(b.h.Lost()) {
				t.Error("B's hold is lost")
			}
			if _, err := b.h.FencingToken(); err != nil {
				t.Errorf("B's FencingToken: %v", err)
			}
			if err := b.h.Release(ctx); err != nil {
				t.Fatalf("B's Release: %v", err)
			}
			if m.IsAcquiredInThisProcess() {
				t.Error("IsAcquiredInThisProcess after both holds were released")
			}
			for _, p := range []string{"/leases", "/locks"} {
				if kids := children(t, obs, base+p); len(kids) != 0 {
					t.Fatalf("nodes left under %s: %v", p, kids)
				}
			}
		})
	}
}
