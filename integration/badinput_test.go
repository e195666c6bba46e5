package integration

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/atomiclong"
	"github.com/go-curator/curator/recipes/barrier"
	"github.com/go-curator/curator/recipes/doublebarrier"
	"github.com/go-curator/curator/recipes/multilock"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/rwlock"
	"github.com/go-curator/curator/recipes/semaphoremutex"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/recipes/sharedcount"
	"github.com/go-curator/curator/zktest"
)

// badInput is one misuse of the public API: run must return an error that
// matches want and whose text contains says (the problem, named), without
// panicking, before its ctx deadline, and without leaving a node under p.
type badInput struct {
	name string
	want error
	says string
	run  func(ctx context.Context, p string) error
}

// guarded runs fn on its own goroutine and returns its error, or reports
// a panic (with its stack) or a hang past ctx's deadline.
func guarded(ctx context.Context, fn func() error) (err error, panicked string, hung bool) {
	type result struct {
		err error
		pan string
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{pan: fmt.Sprintf("%v\n%s", r, debug.Stack())}
			}
		}()
		done <- result{err: fn()}
	}()
	deadline, _ := ctx.Deadline()
	select {
	case r := <-done:
		return r.err, r.pan, false
	case <-time.After(time.Until(deadline) + 2*time.Second):
		return nil, "", true
	}
}

// subtree lists every node under p (p excluded), depth first.
func subtree(t *testing.T, c *framework.Client, p string) []string {
	t.Helper()
	var all []string
	for _, k := range children(t, c, p) {
		kp := p + "/" + k
		all = append(all, kp)
		all = append(all, subtree(t, c, kp)...)
	}
	return all
}

// TestBadInput_PublicAPI runs a table of bad inputs across the public API:
// bad paths, bad counts, nil, unstarted and closed clients, release
// without a hold, double returns, corrupt counter bytes, negative waits
// and huge quantities.
func TestBadInput_PublicAPI(t *testing.T) {
	faultsNoLeaks(t)
	base := testPath(t)     // each case gets base/caseNN; nothing may appear under base
	setup := base + "_data" // nodes the cases need, made here, checked unchanged at the end
	connect := zktest.Shared(t).ConnectString()
	c := newClient(t)
	unstarted, err := builder(t, connect).Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unstarted.Close() })
	closedClient := startClient(t, builder(t, connect))
	closedClient.Close()
	var nilClient *framework.Client
	ctx := t.Context()
	policy := fastRetry(t)

	// Setup: counters with corrupt bytes, and a lease of another semaphore.
	mkdata := func(p string, b []byte) {
		t.Helper()
		if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, p, b); err != nil {
			t.Fatal(err)
		}
	}
	mkdata(setup+"/count3", []byte("foo"))
	mkdata(setup+"/count5", []byte{1, 2, 3, 4, 5})
	mkdata(setup+"/long3", []byte("foo"))
	mkdata(setup+"/long4", []byte{0, 0, 0, 7})
	otherSem := newSem(t, c, setup+"/othersem", 1)
	foreign, err := otherSem.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { foreign.Close(context.Background()) })
	wantSetup := subtree(t, c, setup)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, setup)
	})

	fw := func(cl *framework.Client) func(ctx context.Context, p string) error {
		return func(ctx context.Context, p string) error { _, _, err := cl.GetData().ForPath(ctx, p); return err }
	}
	create := func(path string) func(ctx context.Context, p string) error {
		return func(ctx context.Context, p string) error {
			_, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, strings.ReplaceAll(path, "$", p), nil)
			return err
		}
	}
	newSemaphore := func(p string, max int) (*semaphorev2.Semaphore, error) { return semaphorev2.New(c, p, max) }
	acquireN := func(max, qty int) func(ctx context.Context, p string) error {
		return func(ctx context.Context, p string) error {
			s, err := newSemaphore(p, max)
			if err != nil {
				return err
			}
			leases, err := s.AcquireN(ctx, qty)
			s.ReturnAll(ctx, leases)
			return err
		}
	}

	cases := []badInput{
		// The client and its fluent operations.
		{"builder empty connect string", framework.ErrInvalidArgument, "connect", func(context.Context, string) error {
			_, err := framework.NewBuilder().Build()
			return err
		}},
		{"builder port not a number", framework.ErrInvalidArgument, "port", func(context.Context, string) error {
			_, err := framework.NewBuilder().ConnectString("127.0.0.1:http").Build()
			return err
		}},
		{"builder negative session timeout", framework.ErrInvalidArgument, "session timeout", func(context.Context, string) error {
			_, err := framework.NewBuilder().ConnectString(connect).SessionTimeout(-time.Second).Build()
			return err
		}},
		{"builder bad namespace", framework.ErrInvalidPath, "namespace", func(context.Context, string) error {
			_, err := framework.NewBuilder().ConnectString(connect).Namespace("a//b").Build()
			return err
		}},
		{"create empty path", framework.ErrInvalidPath, "empty", create("")},
		{"create relative path", framework.ErrInvalidPath, "not absolute", create("rel/x")},
		{"create trailing slash", framework.ErrInvalidPath, "ends with /", create("$/x/")},
		{"create empty segment", framework.ErrInvalidPath, "empty segment", create("$//x")},
		{"create dot segment", framework.ErrInvalidPath, "relative segment", create("$/./x")},
		{"create dot-dot segment", framework.ErrInvalidPath, "relative segment ..", create("$/../x")},
		{"create NUL in path", framework.ErrInvalidPath, "NUL", create("$/a\x00b")},
		{"create invalid UTF-8", framework.ErrInvalidPath, "UTF-8", create("$/\xff")},
		{"create the root", framework.ErrInvalidPath, "root", create("/")},
		{"create unknown mode", framework.ErrInvalidArgument, "create mode 42", func(ctx context.Context, p string) error {
			_, err := c.Create().WithMode(framework.CreateMode(42)).ForPath(ctx, p, nil)
			return err
		}},
		{"nil client", framework.ErrNilClient, "nil client", fw(nilClient)},
		{"unstarted client", framework.ErrNotStarted, "not started", fw(unstarted)},
		{"closed client", framework.ErrClosed, "closed", fw(closedClient)},
		{"client closed twice", framework.ErrClosed, "closed", func(context.Context, string) error {
			if err := closedClient.Close(); err != nil {
				return fmt.Errorf("second Close: %w", err)
			}
			return closedClient.Check()
		}},
		{"start a closed client", framework.ErrClosed, "closed", func(ctx context.Context, _ string) error {
			return closedClient.Start(ctx)
		}},
		{"start twice", framework.ErrAlreadyStarted, "already started", func(ctx context.Context, _ string) error {
			return c.Start(ctx)
		}},

		// Locks.
		{"mutex nil client", framework.ErrNilClient, "nil client", func(_ context.Context, p string) error {
			_, err := mutex.New(nil, p)
			return err
		}},
		{"mutex bad path", framework.ErrInvalidPath, "not absolute", func(_ context.Context, p string) error {
			_, err := mutex.New(c, p[1:])
			return err
		}},
		{"mutex release without hold", mutex.ErrNotOwner, "not held", func(ctx context.Context, p string) error {
			return must(mutex.New(c, p)).Release(ctx)
		}},
		{"mutex negative wait", mutex.ErrInvalidArgument, "negative wait", func(ctx context.Context, p string) error {
			_, _, err := must(mutex.New(c, p)).TryAcquire(ctx, -time.Millisecond)
			return err
		}},
		{"mutex fencing token of a released hold", mutex.ErrNotOwner, "not held", func(ctx context.Context, p string) error {
			h, err := must(mutex.New(c, p)).Acquire(ctx)
			if err != nil {
				return err
			}
			if err := h.Release(ctx); err != nil {
				return err
			}
			_, err = h.FencingToken()
			return err
		}},
		{"mutex hold released twice", mutex.ErrNotOwner, "not held", func(ctx context.Context, p string) error {
			h, err := must(mutex.New(c, p)).Acquire(ctx)
			if err != nil {
				return err
			}
			if err := h.Release(ctx); err != nil {
				return err
			}
			return h.Release(ctx)
		}},
		{"mutex on closed client", framework.ErrClosed, "closed", func(ctx context.Context, p string) error {
			_, err := must(mutex.New(closedClient, p)).Acquire(ctx)
			return err
		}},
		{"mutex on unstarted client", framework.ErrNotStarted, "not started", func(ctx context.Context, p string) error {
			_, err := must(mutex.New(unstarted, p)).Acquire(ctx)
			return err
		}},
		{"mutex revoke bad path", framework.ErrInvalidPath, "empty segment", func(ctx context.Context, p string) error {
			return mutex.Revoke(ctx, c, p+"//lock")
		}},
		{"rwlock nil option", rwlock.ErrInvalidArgument, "option 0 is nil", func(_ context.Context, p string) error {
			_, err := rwlock.New(c, p, nil)
			return err
		}},
		{"rwlock read release without hold", rwlock.ErrNotOwner, "not held", func(ctx context.Context, p string) error {
			return must(rwlock.New(c, p)).ReadLock().Release(ctx)
		}},
		{"rwlock write negative wait", rwlock.ErrInvalidArgument, "negative wait", func(ctx context.Context, p string) error {
			_, _, err := must(rwlock.New(c, p)).WriteLock().TryAcquire(ctx, -time.Hour)
			return err
		}},
		{"rwlock nil lock", rwlock.ErrInvalidArgument, "nil or zero Mutex", func(ctx context.Context, _ string) error {
			var l *rwlock.Lock
			_, err := l.WriteLock().Acquire(ctx)
			return err
		}},
		{"multilock no locks", multilock.ErrInvalidArgument, "no locks", func(context.Context, string) error {
			_, err := multilock.New()
			return err
		}},
		{"multilock nil lock", multilock.ErrInvalidArgument, "lock 1 is nil", func(_ context.Context, p string) error {
			_, err := multilock.New(multilock.Of(must(mutex.New(c, p))), nil)
			return err
		}},
		{"multilock path listed twice", multilock.ErrInvalidArgument, "listed twice", func(_ context.Context, p string) error {
			_, err := multilock.NewFromPaths(c, []string{p + "/a", p + "/a"})
			return err
		}},
		{"multilock bad path", framework.ErrInvalidPath, "ends with /", func(_ context.Context, p string) error {
			_, err := multilock.NewFromPaths(c, []string{p + "/a", p + "/b/"})
			return err
		}},
		{"multilock negative wait", multilock.ErrInvalidArgument, "negative wait", func(ctx context.Context, p string) error {
			m, err := multilock.NewFromPaths(c, []string{p + "/a", p + "/b"})
			if err != nil {
				return err
			}
			_, _, err = m.TryAcquire(ctx, -time.Second)
			return err
		}},
		{"multilock hold released twice", multilock.ErrNotOwner, "not held", func(ctx context.Context, p string) error {
			m, err := multilock.NewFromPaths(c, []string{p + "/a", p + "/b"})
			if err != nil {
				return err
			}
			h, err := m.Acquire(ctx)
			if err != nil {
				return err
			}
			if err := h.Release(ctx); err != nil {
				return err
			}
			return h.Release(ctx)
		}},

		// Semaphores.
		{"semaphore maxLeases 0", semaphorev2.ErrInvalidArgument, "maxLeases 0", func(_ context.Context, p string) error {
			_, err := newSemaphore(p, 0)
			return err
		}},
		{"semaphore maxLeases negative", semaphorev2.ErrInvalidArgument, "maxLeases -3", func(_ context.Context, p string) error {
			_, err := newSemaphore(p, -3)
			return err
		}},
		{"semaphore qty 0", semaphorev2.ErrInvalidArgument, "qty 0", acquireN(3, 0)},
		{"semaphore qty negative", semaphorev2.ErrInvalidArgument, "qty -1", acquireN(3, -1)},
		{"semaphore qty above max", semaphorev2.ErrInvalidArgument, "qty 4 > maxLeases 3", acquireN(3, 4)},
		{"semaphore huge qty", semaphorev2.ErrInvalidArgument, fmt.Sprintf("qty %d", math.MaxInt), acquireN(3, math.MaxInt)},
		{"semaphore negative wait", semaphorev2.ErrInvalidArgument, "negative wait", func(ctx context.Context, p string) error {
			s, err := newSemaphore(p, 2)
			if err != nil {
				return err
			}
			_, _, err = s.TryAcquireN(ctx, 1, -time.Nanosecond)
			return err
		}},
		{"semaphore nil count", semaphorev2.ErrInvalidArgument, "nil shared count", func(_ context.Context, p string) error {
			_, err := semaphorev2.NewWithCount(c, p, nil)
			return err
		}},
		{"semaphore nil client", framework.ErrNilClient, "nil client", func(_ context.Context, p string) error {
			_, err := semaphorev2.New(nil, p, 1)
			return err
		}},
		{"semaphore return nil lease", semaphorev2.ErrInvalidArgument, "nil lease", func(ctx context.Context, p string) error {
			s, err := newSemaphore(p, 1)
			if err != nil {
				return err
			}
			return s.ReturnLease(ctx, nil)
		}},
		{"semaphore return foreign lease", semaphorev2.ErrForeignLease, foreign.NodeName(), func(ctx context.Context, p string) error {
			s, err := newSemaphore(p, 1)
			if err != nil {
				return err
			}
			return s.ReturnLease(ctx, foreign)
		}},
		{"semaphore lease returned twice", semaphorev2.ErrNotOwner, "already returned", func(ctx context.Context, p string) error {
			s, err := newSemaphore(p, 1)
			if err != nil {
				return err
			}
			l, err := s.Acquire(ctx)
			if err != nil {
				return err
			}
			if err := s.ReturnLease(ctx, l); err != nil {
				return err
			}
			return s.ReturnLease(ctx, l)
		}},
		{"semaphore on closed client", framework.ErrClosed, "closed", func(ctx context.Context, p string) error {
			s, err := semaphorev2.New(closedClient, p, 1)
			if err != nil {
				return err
			}
			_, err = s.Acquire(ctx)
			return err
		}},
		{"semaphoremutex release without hold", semaphoremutex.ErrNotOwner, "not held", func(ctx context.Context, p string) error {
			m, err := semaphoremutex.New(c, p)
			if err != nil {
				return err
			}
			return m.Release(ctx)
		}},
		{"semaphoremutex negative wait", semaphoremutex.ErrInvalidArgument, "negative wait", func(ctx context.Context, p string) error {
			m, err := semaphoremutex.New(c, p)
			if err != nil {
				return err
			}
			_, _, err = m.TryAcquire(ctx, -time.Second)
			return err
		}},

		// Barriers.
		{"barrier nil client", framework.ErrNilClient, "nil client", func(_ context.Context, p string) error {
			_, err := barrier.New(nil, p)
			return err
		}},
		{"barrier wait on unstarted client", framework.ErrNotStarted, "not started", func(ctx context.Context, p string) error {
			b, err := barrier.New(unstarted, p)
			if err != nil {
				return err
			}
			return b.Wait(ctx)
		}},
		{"doublebarrier memberQty 0", doublebarrier.ErrInvalidArgument, "memberQty 0", func(_ context.Context, p string) error {
			_, err := doublebarrier.New(c, p, 0)
			return err
		}},
		{"doublebarrier memberQty negative", doublebarrier.ErrInvalidArgument, "memberQty -2", func(_ context.Context, p string) error {
			_, err := doublebarrier.New(c, p, -2)
			return err
		}},
		{"doublebarrier leave without enter", doublebarrier.ErrNotEntered, "not entered", func(ctx context.Context, p string) error {
			b, err := doublebarrier.New(c, p, 2)
			if err != nil {
				return err
			}
			return b.Leave(ctx)
		}},

		// Counters.
		{"sharedcount corrupt bytes (3)", sharedcount.ErrCorrupt, "3 bytes", func(ctx context.Context, _ string) error {
			return startCountAt(ctx, c, setup+"/count3")
		}},
		{"sharedcount corrupt bytes (5)", sharedcount.ErrCorrupt, "5 bytes", func(ctx context.Context, _ string) error {
			return startCountAt(ctx, c, setup+"/count5")
		}},
		{"sharedcount set before start", sharedcount.ErrNotStarted, "not started", func(ctx context.Context, p string) error {
			sc, err := sharedcount.New(c, p, 0)
			if err != nil {
				return err
			}
			return sc.SetCount(ctx, 1)
		}},
		{"sharedcount start after close", sharedcount.ErrClosed, "closed", func(ctx context.Context, p string) error {
			sc, err := sharedcount.New(c, p, 0)
			if err != nil {
				return err
			}
			sc.Close()
			sc.Close()
			return sc.Start(ctx)
		}},
		{"sharedcount bad path", framework.ErrInvalidPath, "relative segment", func(_ context.Context, p string) error {
			_, err := sharedcount.New(c, p+"/..", 0)
			return err
		}},
		{"atomiclong corrupt bytes (3)", atomiclong.ErrCorrupt, "3 bytes [0x66 0x6f 0x6f], want 8", func(ctx context.Context, _ string) error {
			l, err := atomiclong.New(c, setup+"/long3", policy)
			if err != nil {
				return err
			}
			_, err = l.Get(ctx)
			return err
		}},
		{"atomiclong increment corrupt bytes (4)", atomiclong.ErrCorrupt, "4 bytes", func(ctx context.Context, _ string) error {
			l, err := atomiclong.New(c, setup+"/long4", policy)
			if err != nil {
				return err
			}
			_, err = l.Increment(ctx)
			return err
		}},
		{"atomiclong nil retry policy", atomiclong.ErrInvalidArgument, "nil retry policy", func(_ context.Context, p string) error {
			_, err := atomiclong.New(c, p, nil)
			return err
		}},
		{"atomiclong negative promoted lock wait", atomiclong.ErrInvalidArgument, "negative promoted lock wait", func(_ context.Context, p string) error {
			_, err := atomiclong.New(c, p, policy, atomiclong.WithPromotedLock(p+"/lock", -time.Second, policy))
			return err
		}},
		{"atomiclong on closed client", framework.ErrClosed, "closed", func(ctx context.Context, p string) error {
			l, err := atomiclong.New(closedClient, p, policy)
			if err != nil {
				return err
			}
			_, err = l.Increment(ctx)
			return err
		}},
	}
	if len(cases) < 40 {
		t.Fatalf("only %d bad inputs", len(cases))
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := fmt.Sprintf("%s/case%02d", base, i)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			err, panicked, hung := guarded(ctx, func() error { return tc.run(ctx, p) })
			switch {
			case panicked != "":
				t.Fatalf("panicked: %s", panicked)
			case hung:
				t.Fatal("did not return within its ctx deadline")
			case !errors.Is(err, tc.want):
				t.Fatalf("error %v; want one matching %v", err, tc.want)
			case !strings.Contains(err.Error(), tc.says):
				t.Fatalf("error %q does not name the problem (%q)", err, tc.says)
			}
			// Nothing may remain but container parents (a case that needs a
			// valid step first, like an Acquire, makes them), which the
			// server reaps once they are empty.
			eventually(t, 10*time.Second, func() bool {
				stat, err := c.CheckExists().ForPath(ctx, p)
				return err == nil && stat == nil
			}, fmt.Sprintf("nothing left under %s: %v", p, subtree(t, c, p)))
		})
	}
	eventually(t, 10*time.Second, func() bool {
		stat, err := c.CheckExists().ForPath(ctx, base)
		return err == nil && stat == nil
	}, "the bad inputs leave nothing under "+base+" once the server has reaped empty containers")
	if got := subtree(t, c, setup); !slices.Equal(got, wantSetup) {
		t.Errorf("the bad inputs changed the setup nodes: %v, want %v", got, wantSetup)
	}
	for _, p := range []string{"/count3", "/long3"} {
		if b, _, err := c.GetData().ForPath(ctx, setup+p); err != nil || string(b) != "foo" {
			t.Errorf("%s was rewritten to %x (%v)", p, b, err)
		}
	}
}

// must returns v, or panics if a constructor refused good input: the
// table's guard reports the panic as the case's failure.
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("constructor refused good input: %v", err))
	}
	return v
}

// startCountAt starts (and closes) a shared count at p.
func startCountAt(ctx context.Context, c *framework.Client, p string) error {
	sc, err := sharedcount.New(c, p, 0)
	if err != nil {
		return err
	}
	defer sc.Close()
	return sc.Start(ctx)
}
