package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/multilock"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/rwlock"
	"github.com/go-curator/curator/recipes/semaphorev2"
)

// Issue 24, item 4: no acquire returns a hold, lease or leadership whose
// Lost() has already closed; it returns the loss error and leaves nothing
// behind. Each test resets the client's connection through its proxy (a
// Suspended on the same session: under the standard policy every hold
// taken before it is lost) at the point the issue names.

// resetAndReconnect resets c's connection and waits until c reports
// Reconnected on the same session.
func resetAndReconnect(t *testing.T, c *framework.Client, log *stateLog, reset func()) {
	t.Helper()
	session := c.SessionID()
	before := log.count(framework.Reconnected)
	reset()
	eventually(t, 3*testSessionTimeout, func() bool { return log.count(framework.Reconnected) > before },
		"the client reconnects after the reset")
	if c.SessionID() != session || log.count(framework.Lost) > 0 {
		t.Fatalf("the reset cost the session: states %v", log)
	}
}

// TestHoldsLoss_MultiLockSuspendedBeforeSecondLock: a MultiLock holds its
// first lock and waits for the second, held by another client, when its
// connection is reset. The first hold is lost, so Acquire (and
// TryAcquire) must fail with ErrSessionLost, return no Hold, and leave no
// node on either path, whenever the second lock comes free.
func TestHoldsLoss_MultiLockSuspendedBeforeSecondLock(t *testing.T) {
	for _, try := range []bool{false, true} {
		name := "Acquire"
		if try {
			name = "TryAcquire"
		}
		t.Run(name, func(t *testing.T) {
			faultsNoLeaks(t)
			base := testPath(t)
			a, b := base+"/a", base+"/b"
			var log stateLog
			c, proxy := proxiedClient(t, func(bl *framework.Builder) *framework.Builder {
				return bl.ConnectionStateErrorPolicy(framework.StandardErrorPolicy).Listener(log.listen)
			})
			obs := newClient(t)
			t.Cleanup(func() { deleteTree(t, obs, base) })
			other, err := newMutex(t, obs, b).Acquire(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			ml, err := multilock.NewFromPaths(c, []string{a, b})
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				h   *multilock.Hold
				err error
			}
			done := make(chan result, 1)
			go func() {
				var r result
				if try {
					var ok bool
					r.h, ok, r.err = ml.TryAcquire(t.Context(), time.Minute)
					if !ok && r.err == nil {
						r.err = errors.New("TryAcquire timed out")
					}
				} else {
					r.h, r.err = ml.Acquire(t.Context())
				}
				done <- r
			}()
			eventually(t, 10*time.Second, func() bool { return len(children(t, obs, a)) == 1 && len(children(t, obs, b)) == 2 },
				"the MultiLock holds a and waits for b")
			resetAndReconnect(t, c, &log, proxy.Reset)
			if err := other.Release(t.Context()); err != nil {
				t.Fatal(err)
			}
			var r result
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the MultiLock's acquire did not return after b came free")
			}
			if r.err == nil {
				lost := r.h.Lost()
				r.h.Release(context.Background())
				t.Fatalf("%s returned a Hold (Lost() closed: %v) after its first lock was lost; want ErrSessionLost", name, isClosed(lost))
			}
			if !errors.Is(r.err, multilock.ErrSessionLost) || r.h != nil {
				t.Fatalf("%s = %v, %v; want no Hold and an error matching multilock.ErrSessionLost", name, r.h, r.err)
			}
			eventually(t, 10*time.Second, func() bool { return len(children(t, obs, a))+len(children(t, obs, b)) == 0 },
				"no node is left on either lock")
		})
	}
}

// TestHoldsLoss_SemaphoreSuspendedBetweenLeases: AcquireN(2) takes its
// first lease and waits for room for the second, holding the internal
// lock, when its connection is reset. The first lease is lost, so
// AcquireN must fail with ErrSessionLost, return no lease, and leave no
// lease or lock node of its own.
func TestHoldsLoss_SemaphoreSuspendedBetweenLeases(t *testing.T) {
	faultsNoLeaks(t)
	path := testPath(t)
	var log stateLog
	c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder {
		return b.ConnectionStateErrorPolicy(framework.StandardErrorPolicy).Listener(log.listen)
	})
	obs := newClient(t)
	t.Cleanup(func() { deleteTree(t, obs, path) })
	other := newSem(t, obs, path, 3)
	held, err := other.AcquireN(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	sem := newSem(t, c, path, 3)
	type result struct {
		leases []*semaphorev2.Lease
		err    error
	}
	done := make(chan result, 1)
	go func() {
		leases, err := sem.AcquireN(t.Context(), 2)
		done <- result{leases, err}
	}()
	eventually(t, 10*time.Second, func() bool {
		return len(children(t, obs, path+"/leases")) == 3 && len(children(t, obs, path+"/locks")) == 1
	}, "AcquireN holds one lease and waits for room for the second")
	resetAndReconnect(t, c, &log, proxy.Reset)
	if err := other.ReturnLease(t.Context(), held[0]); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("AcquireN did not return after a lease came free")
	}
	if r.err == nil {
		lost := make([]bool, len(r.leases))
		for i, l := range r.leases {
			lost[i] = isClosed(l.Lost())
		}
		sem.ReturnAll(context.Background(), r.leases)
		t.Fatalf("AcquireN returned %d leases (Lost() closed: %v) after its first was lost; want ErrSessionLost", len(r.leases), lost)
	}
	if !errors.Is(r.err, semaphorev2.ErrSessionLost) || r.leases != nil {
		t.Fatalf("AcquireN = %v, %v; want no lease and an error matching semaphorev2.ErrSessionLost", r.leases, r.err)
	}
	eventually(t, 10*time.Second, func() bool {
		return len(children(t, obs, path+"/leases")) == 1 && len(children(t, obs, path+"/locks")) == 0
	}, "only the other client's lease is left")
	if err := other.ReturnLease(t.Context(), held[1]); err != nil {
		t.Fatal(err)
	}
}

// holdsReentrant is one reentrant lock side for the nested-acquire test:
// acquire and tryAcquire run on the calling goroutine.
type holdsReentrant struct {
	name       string
	make       func(t *testing.T, c *framework.Client, path string) (first func() (holdsRelease, error), nested func() error, tryNested func() error)
	sessionErr error
}

// holdsRelease is the first hold: its Lost(), node and Release.
type holdsRelease struct {
	lost    <-chan struct{}
	node    string
	release func(context.Context) error
}

func mutexSide(h *mutex.Hold) holdsRelease {
	return holdsRelease{h.Lost(), h.Node(), h.Release}
}

func rwSide(h *rwlock.Hold) holdsRelease {
	return holdsRelease{h.Lost(), h.Node(), h.Release}
}

func rwNested(m *rwlock.Mutex, ctx context.Context) (func() error, func() error) {
	return func() error {
			h, err := m.Acquire(ctx)
			if err == nil {
				h.Release(ctx)
			}
			return err
		}, func() error {
			h, ok, err := m.TryAcquire(ctx, 0)
			if ok {
				h.Release(ctx)
			}
			return err
		}
}

// TestHoldsLoss_NestedAcquireAfterLoss: a goroutine holds a reentrant
// lock, its connection is reset (its hold's Lost() closes), and it
// acquires again. The nested Acquire and TryAcquire must return the loss
// error (matching the package's ErrSessionLost) without raising the
// count: one Release of the first hold deletes the node, and a second
// returns ErrNotOwner. A downgrade (the read side, by the holder of a
// lost write hold) is refused as well.
func TestHoldsLoss_NestedAcquireAfterLoss(t *testing.T) {
	sides := []holdsReentrant{
		{"Mutex", func(t *testing.T, c *framework.Client, path string) (func() (holdsRelease, error), func() error, func() error) {
			m := newMutex(t, c, path)
			ctx := t.Context()
			return func() (holdsRelease, error) {
					h, err := m.Acquire(ctx)
					if err != nil {
						return holdsRelease{}, err
					}
					return mutexSide(h), nil
				}, func() error {
					h, err := m.Acquire(ctx)
					if err == nil {
						h.Release(ctx)
					}
					return err
				}, func() error {
					h, ok, err := m.TryAcquire(ctx, 0)
					if ok {
						h.Release(ctx)
					}
					return err
				}
		}, mutex.ErrSessionLost},
		{"ReadLock", func(t *testing.T, c *framework.Client, path string) (func() (holdsRelease, error), func() error, func() error) {
			m := newRWLock(t, c, path).ReadLock()
			nested, try := rwNested(m, t.Context())
			return func() (holdsRelease, error) {
				h, err := m.Acquire(t.Context())
				if err != nil {
					return holdsRelease{}, err
				}
				return rwSide(h), nil
			}, nested, try
		}, rwlock.ErrSessionLost},
		{"WriteLock", func(t *testing.T, c *framework.Client, path string) (func() (holdsRelease, error), func() error, func() error) {
			m := newRWLock(t, c, path).WriteLock()
			nested, try := rwNested(m, t.Context())
			return func() (holdsRelease, error) {
				h, err := m.Acquire(t.Context())
				if err != nil {
					return holdsRelease{}, err
				}
				return rwSide(h), nil
			}, nested, try
		}, rwlock.ErrSessionLost},
		{"Downgrade", func(t *testing.T, c *framework.Client, path string) (func() (holdsRelease, error), func() error, func() error) {
			l := newRWLock(t, c, path)
			nested, try := rwNested(l.ReadLock(), t.Context())
			return func() (holdsRelease, error) {
				h, err := l.WriteLock().Acquire(t.Context())
				if err != nil {
					return holdsRelease{}, err
				}
				return rwSide(h), nil
			}, nested, try
		}, rwlock.ErrWriteLost},
	}
	for _, side := range sides {
		t.Run(side.name, func(t *testing.T) {
			faultsNoLeaks(t)
			path := testPath(t)
			var log stateLog
			c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder {
				return b.ConnectionStateErrorPolicy(framework.StandardErrorPolicy).Listener(log.listen)
			})
			obs := newClient(t)
			t.Cleanup(func() { deleteTree(t, obs, path) })
			first, nested, tryNested := side.make(t, c, path)
			h, err := first()
			if err != nil {
				t.Fatal(err)
			}
			resetAndReconnect(t, c, &log, proxy.Reset)
			if !isClosed(h.lost) {
				t.Fatal("the hold's Lost() is open after a Suspended under the standard policy")
			}
			for _, try := range []struct {
				name string
				f    func() error
			}{{"Acquire", nested}, {"TryAcquire", tryNested}} {
				err := try.f()
				if !errors.Is(err, side.sessionErr) {
					t.Errorf("nested %s after the loss = %v; want an error matching %v", try.name, err, side.sessionErr)
				}
				if side.name == "Downgrade" && !errors.Is(err, rwlock.ErrSessionLost) {
					t.Errorf("downgrade %s after the loss = %v; want it to match rwlock.ErrSessionLost too", try.name, err)
				}
			}
			if kids := children(t, obs, path); len(kids) != 1 {
				t.Fatalf("nodes after the refused nested acquires: %v; want only the first hold's", kids)
			}
			// The count is still 1: one Release ends the hold.
			if err := h.release(t.Context()); err != nil {
				t.Fatalf("Release of the lost hold: %v", err)
			}
			if kids := children(t, obs, path); len(kids) != 0 {
				t.Fatalf("nodes after one Release: %v; want none (the nested acquires must not count)", kids)
			}
			if err := h.release(t.Context()); err == nil {
				t.Fatal("a second Release succeeded: the nested acquires were counted")
			}
		})
	}
}
