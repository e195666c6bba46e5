package integration

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/barrier"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
)

func newBarrier(t testing.TB, c *framework.Client, path string) *barrier.Barrier {
	t.Helper()
	b, err := barrier.New(c, path)
	if err != nil {
		t.Fatalf("barrier.New: %v", err)
	}
	return b
}

// barrierFourLetter sends a four-letter word to the cluster's first server.
func barrierFourLetter(t testing.TB, cl *zktest.Cluster, cmd string) string {
	t.Helper()
	if s := cl.Servers(); len(s) > 0 {
		out, err := s[0].FourLetter(cmd)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return out
	}
	addr, _, _ := strings.Cut(cl.ConnectString(), ",")
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(conn, cmd); err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	out, err := io.ReadAll(conn)
	if err != nil && len(out) == 0 {
		t.Fatalf("%s: %v", cmd, err)
	}
	return string(out)
}

// barrierWatchers returns how many sessions the server says watch path,
// from the "wchp" four-letter word: a path line, then one tab-indented
// session line per watcher.
func barrierWatchers(t testing.TB, cl *zktest.Cluster, path string) int {
	t.Helper()
	n, in := 0, false
	for _, line := range strings.Split(barrierFourLetter(t, cl, "wchp"), "\n") {
		switch {
		case strings.HasPrefix(line, "/"):
			in = line == path
		case in && strings.TrimSpace(line) != "":
			n++
		}
	}
	return n
}

// barrierWaitFor waits until n sessions watch path.
func barrierWaitFor(t testing.TB, cl *zktest.Cluster, path string, n int) {
	t.Helper()
	eventually(t, 10*time.Second, func() bool { return barrierWatchers(t, cl, path) == n },
		"sessions watching "+path)
}

// barrierWaitRearmed waits until n sessions watch path again, and fails
// the test if any waiter returns meanwhile: after a wake-up, a waiter that
// must keep waiting reads again and watches again.
func barrierWaitRearmed(t testing.TB, cl *zktest.Cluster, path string, n int, waiters []chan error) {
	t.Helper()
	eventually(t, 10*time.Second, func() bool {
		for i, ch := range waiters {
			select {
			case err := <-ch:
				t.Fatalf("waiter %d returned %v while it had to keep waiting", i, err)
			default:
			}
		}
		return barrierWatchers(t, cl, path) == n
	}, "waiters watching "+path+" again")
}

func TestBarrier_WaitWithoutNodeReturnsAtOnce(t *testing.T) {
	c := newClient(t)
	path := testPath(t)
	b := newBarrier(t, c, path)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := b.Wait(ctx); err != nil {
		t.Fatalf("Wait with no barrier node = %v; want nil", err)
	}
	// Wait creates nothing, and a set-then-removed barrier is down again.
	if stat, err := c.CheckExists().ForPath(ctx, path); err != nil || stat != nil {
		t.Fatalf("after Wait, %s exists = %v, %v; want no node", path, stat, err)
	}
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(ctx); err != nil {
		t.Fatalf("Wait after Set and Remove = %v; want nil", err)
	}
}

func TestBarrier_SetAndRemoveAreIdempotent(t *testing.T) {
	c := startClient(t, builder(t, zktest.Shared(t).ConnectString()).DefaultData([]byte("10.0.0.7")))
	path := testPath(t) + "/deep/barrier"
	b := newBarrier(t, c, path)
	ctx := t.Context()
	for range 2 {
		if err := b.Set(ctx); err != nil {
			t.Fatalf("Set: %v", err)
		}
	}
	data, stat, err := c.GetData().ForPath(ctx, path)
	if err != nil {
		t.Fatalf("barrier node after Set: %v", err)
	}
	if string(data) != "10.0.0.7" || stat.EphemeralOwner != 0 {
		t.Fatalf("barrier node data %q, ephemeral owner %#x; want the default data, persistent", data, stat.EphemeralOwner)
	}
	for range 2 {
		if err := b.Remove(ctx); err != nil {
			t.Fatalf("Remove: %v", err)
		}
	}
	if stat, err := c.CheckExists().ForPath(ctx, path); err != nil || stat != nil {
		t.Fatalf("after Remove, %s exists = %v, %v; want no node", path, stat, err)
	}
}

func TestBarrier_RemoveReleasesAllWaiters(t *testing.T) {
	cl := zktest.Shared(t)
	path := testPath(t)
	ctx := t.Context()
	setter := newBarrier(t, newClient(t), path)
	if err := setter.Set(ctx); err != nil {
		t.Fatal(err)
	}
	results := make([]chan error, 2)
	for i := range results {
		results[i] = make(chan error, 1)
		b := newBarrier(t, newClient(t), path)
		go func() { results[i] <- b.Wait(ctx) }()
	}
	barrierWaitFor(t, cl, path, 2)

	// A change of data wakes both waiters; the node is still there, so
	// they must read again and keep waiting.
	if _, err := newClient(t).SetData().ForPath(ctx, path, []byte("spurious")); err != nil {
		t.Fatal(err)
	}
	barrierWaitRearmed(t, cl, path, 2, results)

	remover := newBarrier(t, newClient(t), path)
	if err := remover.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	for i, ch := range results {
		if err := <-ch; err != nil {
			t.Fatalf("waiter %d after Remove: %v", i, err)
		}
	}
}

func TestBarrier_RemovedLaterReleasesWaiter(t *testing.T) {
	c := newClient(t)
	path := testPath(t)
	b := newBarrier(t, c, path)
	ctx := t.Context()
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	var removed sync.WaitGroup
	removed.Add(1)
	remover := newBarrier(t, newClient(t), path)
	timer := time.AfterFunc(time.Second, func() {
		defer removed.Done()
		if err := remover.Remove(context.Background()); err != nil {
			t.Errorf("Remove: %v", err)
		}
	})
	t.Cleanup(func() { timer.Stop() })
	if err := b.Wait(ctx); err != nil {
		t.Fatalf("Wait = %v; want nil once removed", err)
	}
	removed.Wait()
	if stat, err := c.CheckExists().ForPath(ctx, path); err != nil || stat != nil {
		t.Fatalf("Wait returned while %s exists (%v, %v)", path, stat, err)
	}
}

func TestBarrier_CancelledWaitReturnsCtxError(t *testing.T) {
	c := newClient(t)
	path := testPath(t)
	b := newBarrier(t, c, path)
	if err := b.Set(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := b.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait on a set barrier until the deadline = %v; want %v", err, context.DeadlineExceeded)
	}
	if stat, err := c.CheckExists().ForPath(t.Context(), path); err != nil || stat == nil {
		t.Fatalf("barrier node after a timed-out Wait = %v, %v; want it still set", stat, err)
	}
}

func TestBarrier_ServerStopsMidWaitReturnsError(t *testing.T) {
	cl := zktest.Start(t)
	path := testPath(t)
	giveUp, err := retry.NewNTimes(1, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c := startClient(t, builder(t, cl.ConnectString()).
		ConnectionTimeout(500*time.Millisecond).RetryPolicy(giveUp))
	b := newBarrier(t, c, path)
	if err := b.Set(t.Context()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Wait(t.Context()) }()
	barrierWaitFor(t, cl, path, 1)
	if err := cl.Servers()[0].Kill(); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if err == nil {
		t.Fatal("Wait returned nil while the server was down and the barrier still set")
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v; want the retry loop's error, not a ctx error", err)
	}
	if !framework.IsRetryable(err) {
		t.Fatalf("Wait = %v; want a connection error", err)
	}
}

func TestBarrier_BadInput(t *testing.T) {
	if _, err := barrier.New(nil, "/b"); !errors.Is(err, framework.ErrNilClient) ||
		!errors.Is(err, barrier.ErrInvalidArgument) {
		t.Fatalf("New(nil) = %v; want %v and %v", err, barrier.ErrInvalidArgument, framework.ErrNilClient)
	}
	c := newClient(t)
	for _, p := range []string{"", "rel", "/a/", "/a//b", "/a/../b", "/a\x00b", "/"} {
		if _, err := barrier.New(c, p); !errors.Is(err, framework.ErrInvalidPath) {
			t.Errorf("New(%q) = %v; want %v", p, err, framework.ErrInvalidPath)
		}
	}
	unstarted, err := builder(t, zktest.Shared(t).ConnectString()).Build()
	if err != nil {
		t.Fatal(err)
	}
	defer unstarted.Close()
	b := newBarrier(t, unstarted, testPath(t))
	if err := b.Set(t.Context()); !errors.Is(err, framework.ErrNotStarted) {
		t.Fatalf("Set on an unstarted client = %v; want %v", err, framework.ErrNotStarted)
	}
	if err := b.Wait(t.Context()); !errors.Is(err, framework.ErrNotStarted) {
		t.Fatalf("Wait on an unstarted client = %v; want %v", err, framework.ErrNotStarted)
	}
	if stat, err := c.CheckExists().ForPath(t.Context(), testPath(t)); err != nil || stat != nil {
		t.Fatalf("a failed Set left %s: %v, %v", testPath(t), stat, err)
	}
}
