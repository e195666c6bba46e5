package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
func viewInStep(t *testing.T, v *framework.ChildrenView, want func() []string, what string) {
	t.Helper()
	var got []string
	eventually(t, 10*time.Second, func() bool {
		kids, ok := v.Children()
		if !ok {
			return false
		}
		slices.Sort(kids)
		got = kids
		return slices.Equal(kids, want())
	}, fmt.Sprintf("%s: the view lists %v", what, got))
}

func TestChildrenView_FollowsTheServer(t *testing.T) {
	c, other := newClient(t), newClient(t)
	ctx := t.Context()
	path := testPath(t)
	v, err := c.ChildrenView(path)
	if err != nil {
		t.Fatal(err)
	}
	none := func() []string { return nil }
	viewInStep(t, v, none, "no node yet")

	if _, err := other.Create().CreatingParentsIfNeeded().ForPath(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	var made []string
	for range 6 {
		p, err := other.Create().WithMode(framework.EphemeralSequential).ForPath(ctx, path+"/n-", nil)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, p)
	}
	for _, p := range made[1:3] {
		if err := other.Delete().ForPath(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	server := func() []string { return children(t, other, path) }
	viewInStep(t, v, server, "after creates and deletes")

	// The node goes and comes back: a new node numbers its children from 0.
	for _, p := range append(made[:1], made[3:]...) {
		if err := other.Delete().ForPath(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Delete().ForPath(ctx, path); err != nil {
		t.Fatal(err)
	}
	viewInStep(t, v, none, "node deleted")
	if _, err := other.Create().ForPath(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Create().WithMode(framework.EphemeralSequential).ForPath(ctx, path+"/n-", nil); err != nil {
		t.Fatal(err)
	}
	viewInStep(t, v, server, "node made again")
	t.Cleanup(func() { other.Delete().DeletingChildrenIfNeeded().ForPath(context.Background(), path) })
}

func TestChildrenView_BadInput(t *testing.T) {
	c := newClient(t)
	if _, err := c.ChildrenView("no-slash"); !errors.Is(err, framework.ErrInvalidPath) {
		t.Fatalf("ChildrenView(bad path) = %v, want ErrInvalidPath", err)
	}
	if _, err := (*framework.Client)(nil).ChildrenView("/x"); !errors.Is(err, framework.ErrNilClient) {
		t.Fatalf("nil client ChildrenView = %v, want ErrNilClient", err)
	}
	if kids, ok := (*framework.ChildrenView)(nil).Children(); ok || kids != nil {
		t.Fatalf("nil view Children = %v, %v; want nil, false", kids, ok)
	}
	if kids, ok := new(framework.ChildrenView).Children(); ok || kids != nil {
		t.Fatalf("zero view Children = %v, %v; want nil, false", kids, ok)
	}
	closed := newClient(t)
	v, err := closed.ChildrenView("/x")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	if kids, ok := v.Children(); ok || kids != nil {
		t.Fatalf("Children after Close = %v, %v; want nil, false", kids, ok)
	}
}

// longQueue makes path's queue long enough (64 children) for waiters to
// decide from the client's children view: plain ephemeral nodes whose
// names sort after every lock node, so they stand ahead of nobody.
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

// viewQueue is a long queue on one path: another client's holder, then n
// waiters of a proxied client whose children view of the path is in step.
type viewQueue struct {
	path   string
	c      *framework.Client
	proxy  *zktest.Proxy
	holder *framework.Client
	held   *mutex.Hold
	order  chan int
	wg     *sync.WaitGroup
}

func newViewQueue(t *testing.T, n int) *viewQueue {
	t.Helper()
	q := &viewQueue{path: testPath(t), holder: newClient(t)}
	q.c, q.proxy = proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b })
	longQueue(t, q.holder, q.path)
	var err error
	if q.held, err = newMutex(t, q.holder, q.path).Acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	ms := make([]*mutex.Mutex, n)
	for i := range ms {
		ms[i] = newMutex(t, q.c, q.path)
	}
	var holders atomic.Int32
	q.order, q.wg = queueWaiters(t, q.c, q.path, ms, &holders)
	v, err := q.c.ChildrenView(q.path)
	if err != nil {
		t.Fatal(err)
	}
	viewInStep(t, v, func() []string { return children(t, q.holder, q.path) }, "waiters queued")
	return q
}

// TestMutex_HandOffsReadNoChildren checks the view's point: in a long
// queue, a waiter woken by its predecessor's delete, whose predecessor was
// not the holder when it queued, decides from the client's view instead of
// reading the children again. Before the view, each such hand-off read
// them once.
func TestMutex_HandOffsReadNoChildren(t *testing.T) {
	const n = 5
	q := newViewQueue(t, n)
	reads := q.proxy.Requests(zktest.OpGetChildren, zktest.OpGetChildren2)
	if err := q.held.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantFIFO(t, q.order, q.wg, n)
	if got := q.proxy.Requests(zktest.OpGetChildren, zktest.OpGetChildren2) - reads; got != 0 {
		t.Fatalf("%d children reads during %d hand-offs; want none", got, n)
	}
}

// TestMutex_ViewNeverSkipsANodeItMayNotRead: ZooKeeper sends a watcher no
// event of a node its client may not read. A contender of another identity
// queues, with a node nobody else may read, while our client's view is in
// step; a readable contender queues behind it, and ours behind that. When
// the readable one leaves, our waiter must not take the lock from its view
// (which never heard of the unreadable node): the view learns that an
// event is missing (the server's sequence numbers skip one) and the waiter
// reads.
func TestMutex_ViewNeverSkipsANodeItMayNotRead(t *testing.T) {
	path := testPath(t)
	c, other := newClient(t), newClient(t)
	ctx := t.Context()
	longQueue(t, c, path)
	v, err := c.ChildrenView(path)
	if err != nil {
		t.Fatal(err)
	}
	viewInStep(t, v, func() []string { return children(t, c, path) }, "long queue")

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
