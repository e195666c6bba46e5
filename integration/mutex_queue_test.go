package integration

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// viewInStep waits until v is in step and lists exactly want.
// longQueue puts 64 plain ephemeral nodes under path whose names sort
// after every lock node, so they stand ahead of nobody.
func longQueue(t *testing.T, c *framework.Client, path string) {
	t.Helper()
	for i := range 64 {
		if _, err := c.Create().CreatingParentContainersIfNeeded().WithMode(framework.Ephemeral).
			ForPath(t.Context(), fmt.Sprintf("%s/zz-%02d", path, i), nil); err != nil {
			t.Fatal(err)
		}
	}
}

// queueWaiters starts one Acquire per mutex, each after the one before has
// its node, and returns the order in which they got the lock.
func queueWaiters(t *testing.T, c *framework.Client, path string, ms []*mutex.Mutex, held *atomic.Int32) (chan int, *sync.WaitGroup) {
	t.Helper()
	order := make(chan int, len(ms))
	var wg sync.WaitGroup
	base := len(children(t, c, path))
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := m.Acquire(t.Context())
			if err != nil {
				t.Error(err)
				return
			}
			if n := held.Add(1); n != 1 {
				t.Errorf("waiter %d holds with %d holders", i, n)
			}
			order <- i
			held.Add(-1)
			if err := h.Release(context.Background()); err != nil {
				t.Error(err)
			}
		}()
		eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == base+i+1 }, "waiter queued")
	}
	return order, &wg
}

// wantFIFO closes order once wg is done and fails the test unless the n
// waiters got the lock in the order they queued.
func wantFIFO(t *testing.T, order chan int, wg *sync.WaitGroup, n int) {
	t.Helper()
	wg.Wait()
	close(order)
	want := 0
	for got := range order {
		if got != want {
			t.Fatalf("waiter %d got the lock in place %d", got, want)
		}
		want++
	}
	if want != n {
		t.Fatalf("%d of %d waiters got the lock", want, n)
	}
}

// TestMutex_NeverSkipsANodeItMayNotRead: ZooKeeper sends a watcher no
// event of a node its client may not read. A contender of another identity
// queues, with a node nobody else may read; a readable contender queues
// behind it, and ours behind that. When the readable one leaves, our
// waiter must not take the lock (no grant came: the one who left was not
// first), but read, and fail on the node it may not watch.
func TestMutex_NeverSkipsANodeItMayNotRead(t *testing.T) {
	path := testPath(t)
	c, other := newClient(t), newClient(t)
	ctx := t.Context()
	longQueue(t, c, path)

	raw, _, err := zk.Connect([]string{zktest.Shared(t).ConnectString()}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := raw.AddAuth("digest", []byte("other:secret")); err != nil {
		t.Fatal(err)
	}
	hidden, err := raw.Create(fmt.Sprintf("%s/_c_%s-lock-", path, uuid.NewString()), nil,
		zk.FlagEphemeral|zk.FlagSequence, zk.DigestACL(zk.PermAll, "other", "secret"))
	if err != nil {
		t.Fatal(err)
	}
	between, err := other.Create().WithMode(framework.EphemeralSequential).
		ForPath(ctx, fmt.Sprintf("%s/_c_%s-lock-", path, uuid.NewString()), nil)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		h   *mutex.Hold
		err error
	}
	done := make(chan result, 1)
	go func() {
		h, err := newMutex(t, c, path).Acquire(ctx)
		done <- result{h, err}
	}()
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == 64+3 }, "our waiter queued")
	if err := other.Delete().ForPath(ctx, between); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(3 * time.Second):
		// Still waiting, as it must while the hidden node lives.
		raw.Delete(hidden, -1)
		r = <-done
		if r.err != nil {
			t.Fatalf("acquire after the hidden node went: %v", r.err)
		}
		r.h.Release(ctx)
		return
	}
	if r.err == nil {
		r.h.Release(ctx)
		t.Fatalf("got the lock while %s, first in line, lives", hidden)
	}
	// It could not watch a node it may not read: an error, and no node.
	if !errors.Is(r.err, zk.ErrNoAuth) {
		t.Fatalf("acquire = %v; want the server's NoAuth", r.err)
	}
	if kids := children(t, c, path); len(kids) != 64+1 {
		t.Fatalf("%d nodes under the lock; want the hidden one and the 64 others", len(kids))
	}
}

// TestMutex_ReconnectMidQueueStillExcludes cuts the waiters' connection
// (the session lives on) while they wait in a long queue: while they are
// away the holder releases and another client queues. FIFO order and
// exclusion hold, and every hand-off still works.
func TestMutex_ReconnectMidQueueStillExcludes(t *testing.T) {
	const n = 4
	path := testPath(t)
	holder := newClient(t)
	c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b })
	longQueue(t, holder, path)
	held, err := newMutex(t, holder, path).Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]*mutex.Mutex, n)
	for i := range ms {
		ms[i] = newMutex(t, c, path)
	}
	var holders atomic.Int32
	order, wg := queueWaiters(t, c, path, ms, &holders)
	ctx := t.Context()

	proxy.Reset()
	late := newMutex(t, holder, path)
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	lateHeld := make(chan *mutex.Hold, 1)
	go func() {
		h, err := late.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		lateHeld <- h
	}()
	wantFIFO(t, order, wg, n)
	h := <-lateHeld
	if h == nil {
		t.Fatal("the late waiter got no hold")
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
