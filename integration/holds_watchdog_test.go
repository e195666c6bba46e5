package integration

import (
	"context"
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

// watchedHold is what every lock's hold and the semaphore's lease offer
// to any goroutine.
type watchedHold interface {
	Lost() <-chan struct{}
	FencingToken() (int64, error)
	Node() string
	Release(ctx context.Context) error
}

// holdKind acquires one kind of hold through c at base, and lists the
// paths whose children are its nodes.
type holdKind struct {
	name    string
	acquire func(t *testing.T, c *framework.Client, base string) func(context.Context) (watchedHold, error)
	paths   []string // relative to base
}

// asHold turns a typed acquire into one that returns a watchedHold, so
// that a nil hold stays a nil interface.
func asHold[H watchedHold](acquire func(context.Context) (H, error)) func(context.Context) (watchedHold, error) {
	return func(ctx context.Context) (watchedHold, error) {
		h, err := acquire(ctx)
		if err != nil {
			return nil, err
		}
		return h, nil
	}
}

var holdKinds = []holdKind{
	{"mutex", func(t *testing.T, c *framework.Client, base string) func(context.Context) (watchedHold, error) {
		return asHold(newMutex(t, c, base).Acquire)
	}, []string{""}},
	{"rwlock_read", func(t *testing.T, c *framework.Client, base string) func(context.Context) (watchedHold, error) {
		return asHold(newRWLock(t, c, base).ReadLock().Acquire)
	}, []string{""}},
	{"rwlock_write", func(t *testing.T, c *framework.Client, base string) func(context.Context) (watchedHold, error) {
		return asHold(newRWLock(t, c, base).WriteLock().Acquire)
	}, []string{""}},
	{"semaphoremutex", func(t *testing.T, c *framework.Client, base string) func(context.Context) (watchedHold, error) {
		return asHold(newSemMutex(t, c, base).Acquire)
	}, []string{"/leases", "/locks"}},
	{"multilock", func(t *testing.T, c *framework.Client, base string) func(context.Context) (watchedHold, error) {
		m, err := multilock.NewFromPaths(c, []string{base + "/a", base + "/b"})
		if err != nil {
			t.Fatal(err)
		}
		return asHold(m.Acquire)
	}, []string{"/a", "/b"}},
	{"semaphorev2_lease", func(t *testing.T, c *framework.Client, base string) func(context.Context) (watchedHold, error) {
		return asHold(newSem(t, c, base, 2).Acquire)
	}, []string{"/leases", "/locks"}},
}

// The holds are values of the types the issue names.
var (
	_ watchedHold = (*mutex.Hold)(nil)
	_ watchedHold = (*rwlock.Hold)(nil)
	_ watchedHold = (*semaphoremutex.Hold)(nil)
	_ watchedHold = (*multilock.Hold)(nil)
	_ watchedHold = (*semaphorev2.Lease)(nil)
)

// TestHolds_WatchdogOnAnotherGoroutineAcrossExpiry is the usual watchdog:
// a goroutine acquires and hands the hold to another, which watches
// Lost() (cancelling the work when it closes) and reads the fencing token.
// Before the expiry, Lost() must be open and the token the holder's, for
// the watchdog as for the holder; after the server expires the session,
// the watchdog's Lost() must close; a Release from a third goroutine then
// cleans up.
func TestHolds_WatchdogOnAnotherGoroutineAcrossExpiry(t *testing.T) {
	for _, kind := range holdKinds {
		t.Run(kind.name, func(t *testing.T) {
			faultsNoLeaks(t)
			base := testPath(t)
			c, obs := newClient(t), newClient(t)
			acquire := kind.acquire(t, c, base)
			ctx := t.Context()

			// The holder goroutine acquires, reads its token and hands the
			// hold over.
			type grant struct {
				h     watchedHold
				token int64
				err   error
			}
			granted := make(chan grant, 1)
			go func() {
				h, err := acquire(ctx)
				if err != nil {
					granted <- grant{err: err}
					return
				}
				tok, err := h.FencingToken()
				granted <- grant{h, tok, err}
			}()
			g := <-granted
			if g.err != nil {
				t.Fatalf("the holder's Acquire and FencingToken: %v", g.err)
			}
			h := g.h

			// The watchdog goroutine: the work's ctx is cancelled when the
			// hold is lost.
			type view struct {
				open  bool
				token int64
				err   error
			}
			work, cancelWork := context.WithCancel(ctx)
			defer cancelWork()
			seen, watchdogDone := make(chan view, 1), make(chan struct{})
			go func() {
				defer close(watchdogDone)
				tok, err := h.FencingToken()
				seen <- view{!isClosed(h.Lost()), tok, err}
				select {
				case <-h.Lost():
					cancelWork()
				case <-work.Done():
				}
			}()
			v := <-seen
			if !v.open {
				t.Fatal("the watchdog's Lost() is closed on a fresh hold: the work would be cancelled at once")
			}
			if v.err != nil || v.token != g.token || v.token == 0 {
				t.Fatalf("the watchdog's FencingToken = %d, %v; want the holder's %d", v.token, v.err, g.token)
			}
			select {
			case <-work.Done():
				t.Fatal("the watchdog cancelled the work before any loss")
			case <-time.After(200 * time.Millisecond):
			}

			expired := time.Now()
			if err := zktest.ExpireSession(ctx, zktest.Shared(t).ConnectString(), c.ZooKeeper()); err != nil {
				t.Fatal(err)
			}
			select {
			case <-work.Done():
			case <-time.After(time.Until(expired.Add(testSessionTimeout + lossMargin))):
				t.Fatal("the watchdog's Lost() did not close after the session expired")
			}
			<-watchdogDone

			// A third goroutine releases after the loss; the nodes go.
			released := make(chan error, 1)
			go func() { released <- h.Release(ctx) }()
			if err := <-released; !releasedAfterLoss(err) {
				t.Fatalf("Release after the loss: %v", err)
			}
			if err := h.Release(ctx); err == nil {
				t.Error("a second Release of the hold returned nil")
			}
			for _, p := range kind.paths {
				eventually(t, 3*testSessionTimeout, func() bool { return len(children(t, obs, base+p)) == 0 },
					"no node left under "+base+p)
			}
			// The lock is usable again.
			h2, err := acquire(ctx)
			if err != nil {
				t.Fatalf("Acquire after the loss: %v", err)
			}
			if err := h2.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
