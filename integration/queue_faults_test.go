package integration

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/queue"
	"github.com/go-curator/curator/zktest"
)

// qHolder is a lock-safe consumer that holds the first item it gets until
// its ctx ends, and records what it got and why it stopped.
type qHolder struct {
	got   chan queue.Item
	cause chan error
}

func newQHolder() *qHolder {
	return &qHolder{got: make(chan queue.Item, 16), cause: make(chan error, 16)}
}

func (h *qHolder) consume(ctx context.Context, it queue.Item) error {
	h.got <- it
	<-ctx.Done()
	h.cause <- context.Cause(ctx)
	return context.Cause(ctx)
}

func qStart(t *testing.T, c *framework.Client, p string, opts ...queue.Option) *queue.Queue {
	t.Helper()
	q, err := queue.New(c, p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close(context.Background()) })
	return q
}

func qRecv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(15 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// TestQueue_LockSafe_RedeliveredAfterSessionExpiry: a lock-safe consumer
// whose session expires mid-item is told (its ctx ends with
// ErrSessionLost), does not delete the item, and the item goes to the next
// consumer with the same token.
func TestQueue_LockSafe_RedeliveredAfterSessionExpiry(t *testing.T) {
	t.Parallel()
	cA, cB := newClient(t), newClient(t)
	p := qTestPath(t)
	locks := p + "-locks"
	a := newQHolder()
	qStart(t, cA, p, queue.WithLockPath(locks), queue.WithConsumer(a.consume))
	prod, _ := queue.New(cB, p)
	if err := prod.Put(t.Context(), []byte("job")); err != nil {
		t.Fatal(err)
	}
	first := qRecv(t, a.got, "A's item")
	if err := zktest.ExpireSession(t.Context(), zktest.Shared(t).ConnectString(), cA.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	if cause := qRecv(t, a.cause, "A's ctx to end"); !errors.Is(cause, queue.ErrSessionLost) {
		t.Fatalf("A's ctx ended with %v; want ErrSessionLost", cause)
	}
	var bGot []queue.Item
	var mu sync.Mutex
	bDone := make(chan struct{}, 1)
	qStart(t, cB, p, queue.WithLockPath(locks), queue.WithConsumer(func(ctx context.Context, it queue.Item) error {
		mu.Lock()
		bGot = append(bGot, it)
		mu.Unlock()
		bDone <- struct{}{}
		return nil
	}))
	qRecv(t, bDone, "B's item")
	mu.Lock()
	defer mu.Unlock()
	if len(bGot) != 1 || bGot[0].Token != first.Token || string(bGot[0].Data) != "job" {
		t.Fatalf("B got %+v; want the job with A's token %+v", bGot, first.Token)
	}
	eventually(t, 5*time.Second, func() bool { return len(qItems(t, cB, p)) == 0 && len(children(t, cB, locks)) == 0 },
		"the item and its lock deleted once B consumed it")
	select {
	case it := <-a.got:
		t.Fatalf("A got the item again after losing it: %+v", it)
	default:
	}
}

// TestQueue_LockSafe_DeadConsumersItemTakenUpAtOnce: B, refused the lock
// of the item A holds, takes the item as soon as A dies, with no further
// put (Curator's consumer waits for the next put).
func TestQueue_LockSafe_DeadConsumersItemTakenUpAtOnce(t *testing.T) {
	t.Parallel()
	cA, cB := newClient(t), newClient(t)
	p := qTestPath(t)
	locks := p + "-locks"
	a := newQHolder()
	qStart(t, cA, p, queue.WithLockPath(locks), queue.WithConsumer(a.consume))
	prod, _ := queue.New(cB, p)
	if err := prod.Put(t.Context(), []byte("job")); err != nil {
		t.Fatal(err)
	}
	first := qRecv(t, a.got, "A's item")
	b := qStart(t, cB, p, queue.WithLockPath(locks))
	items := b.Items()
	// B lists the item, is refused its lock and waits: its session then
	// watches A's lock node.
	slAwaitWatch(t, cB, locks+"/"+first.Node, "B to watch A's lock")
	cA.Close() // A dies mid-item: its session and lock go
	d := qRecv(t, items, "B's item")
	if d.Token != first.Token || string(d.Data) != "job" {
		t.Fatalf("B got %+v; want A's item (token %+v)", d.Item, first.Token)
	}
	d.Done(nil)
	eventually(t, 5*time.Second, func() bool { return len(qItems(t, cB, p)) == 0 }, "the item deleted")
}

// TestQueue_PutLostReplyIsIndeterminateAndNotDoubled: a put whose reply is
// lost after the server applied it returns ErrIndeterminate and leaves one
// item, not two.
func TestQueue_PutLostReplyIsIndeterminateAndNotDoubled(t *testing.T) {
	t.Parallel()
	px, err := zktest.NewProxy(zktest.Shared(t).ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	c := startClient(t, builder(t, px.Addr()))
	obs := newClient(t)
	p := qTestPath(t)
	q, _ := queue.New(c, p)
	if err := q.Put(t.Context(), []byte("first")); err != nil { // makes the path
		t.Fatal(err)
	}
	before := px.LostReplies()
	px.LoseNextReply(zktest.OpCreate)
	err = q.Put(t.Context(), []byte("second"))
	if px.LostReplies()-before != 1 {
		t.Fatal("the proxy lost no reply: the test did not test")
	}
	if !errors.Is(err, framework.ErrIndeterminate) {
		t.Fatalf("Put with its reply lost = %v; want ErrIndeterminate", err)
	}
	if got := qItems(t, obs, p); len(got) != 2 {
		t.Fatalf("items %q; want 2 (the first and the applied second, once)", got)
	}
}

// TestQueue_CloseMidItem: Close ends the consumer's ctx; the item it
// failed is left in place, unlocked, for another consumer, and Items is
// closed.
func TestQueue_CloseMidItem(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	p := qTestPath(t)
	locks := p + "-locks"
	a := newQHolder()
	q := qStart(t, c, p, queue.WithLockPath(locks), queue.WithConsumer(a.consume))
	if err := q.Put(t.Context(), []byte("job")); err != nil {
		t.Fatal(err)
	}
	qRecv(t, a.got, "the item")
	if err := q.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if cause := qRecv(t, a.cause, "the consumer's ctx"); !errors.Is(cause, context.Canceled) {
		t.Fatalf("consumer's ctx ended with %v; want context.Canceled", cause)
	}
	if got := qItems(t, c, p); len(got) != 1 {
		t.Fatalf("items %q; want the job left in place", got)
	}
	if got := children(t, c, locks); len(got) != 0 {
		t.Fatalf("locks %q left", got)
	}
	if got := children(t, c, p+"-line"); len(got) != 0 {
		t.Fatalf("line nodes %q left", got)
	}
	if err := q.Put(t.Context(), []byte("x")); !errors.Is(err, queue.ErrClosed) {
		t.Fatalf("Put after Close = %v; want ErrClosed", err)
	}
	if err := q.Close(t.Context()); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	// Items of a closed channel-form queue is closed.
	q2 := qStart(t, c, p, queue.WithLockPath(locks))
	ch := q2.Items()
	d := qRecv(t, ch, "the job again")
	if string(d.Data) != "job" {
		t.Fatalf("got %q", d.Data)
	}
	done := make(chan error, 1)
	go func() { done <- q2.Close(t.Context()) }() // Done never called: Close must not hang
	if err := qRecv(t, done, "Close"); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-ch; ok {
		t.Fatal("Items not closed after Close")
	}
	if got := qItems(t, c, p); len(got) != 1 {
		t.Fatalf("items %q; want the job still in place (never Done)", got)
	}
}

// TestQueue_LockSafe_FinishLostReply: the reply to the multi that deletes
// a consumed item and its lock is lost after the server applied it: the
// item is consumed once, and neither it nor its lock is left.
func TestQueue_LockSafe_FinishLostReply(t *testing.T) {
	t.Parallel()
	px, err := zktest.NewProxy(zktest.Shared(t).ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	c := startClient(t, builder(t, px.Addr()))
	obs := newClient(t)
	p := qTestPath(t)
	locks := p + "-locks"
	prod, _ := queue.New(obs, p)
	got := newQCollector()
	var mu sync.Mutex
	var reported []error
	qStart(t, c, p, queue.WithLockPath(locks), queue.WithConsumer(got.consume), queue.WithErrorHandler(func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	}))
	before := px.LostReplies()
	px.LoseNextReply(zktest.OpMulti)
	if err := prod.Put(t.Context(), []byte("job")); err != nil {
		t.Fatal(err)
	}
	got.wait(t, 1)
	eventually(t, 10*time.Second, func() bool { return px.LostReplies()-before == 1 }, "the multi's reply lost")
	eventually(t, 10*time.Second, func() bool { return len(qItems(t, obs, p)) == 0 && len(children(t, obs, locks)) == 0 },
		"the item and its lock deleted")
	if err := prod.Put(t.Context(), []byte("next")); err != nil {
		t.Fatal(err)
	}
	got.wait(t, 2)
	if d := got.data(); len(d) != 2 || d[0] != "job" || d[1] != "next" {
		t.Fatalf("consumed %q; want job once, then next", d)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, err := range reported {
		t.Logf("reported: %v", err)
	}
}

// TestQueue_IdleConsumerSurvivesExpiry: an idle consumer (the head of the
// line, watching the directory) whose session expires joins the line
// again on its new session, leaves no node of the old one, and gets the
// next item.
func TestQueue_IdleConsumerSurvivesExpiry(t *testing.T) {
	t.Parallel()
	c, obs := newClient(t), newClient(t)
	p := qTestPath(t)
	got := newQCollector()
	qStart(t, c, p, queue.WithConsumer(got.consume))
	eventually(t, 10*time.Second, func() bool { return len(children(t, obs, p+"-line")) == 1 }, "the consumer in the line")
	old := children(t, obs, p+"-line")[0]
	if err := zktest.ExpireSession(t.Context(), zktest.Shared(t).ConnectString(), c.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() bool {
		l := children(t, obs, p+"-line")
		return len(l) == 1 && l[0] != old
	}, "the consumer back in the line on its new session, alone")
	prod, _ := queue.New(obs, p)
	if err := prod.Put(t.Context(), []byte("after")); err != nil {
		t.Fatal(err)
	}
	got.wait(t, 1)
	if d := got.data(); len(d) != 1 || d[0] != "after" {
		t.Fatalf("consumed %q; want after", d)
	}
}

// TestQueue_LockSafe_ConsumedAsSessionEndsNotRedelivered: a consumer
// finishes its item (returns nil) just as its session expires: the lock
// went with the session, but nobody took the item meanwhile, so the queue
// finishes it on the new session instead of leaving it for redelivery.
func TestQueue_LockSafe_ConsumedAsSessionEndsNotRedelivered(t *testing.T) {
	t.Parallel()
	c, obs := newClient(t), newClient(t)
	p := qTestPath(t)
	locks := p + "-locks"
	var mu sync.Mutex
	var got []string
	var causes []error
	consumed := make(chan struct{}, 4)
	qStart(t, c, p, queue.WithLockPath(locks), queue.WithConsumer(func(ctx context.Context, it queue.Item) error {
		if string(it.Data) == "job" {
			if err := zktest.ExpireSession(ctx, zktest.Shared(t).ConnectString(), c.ZooKeeper()); err != nil {
				t.Error(err)
			}
			<-ctx.Done() // the loss is seen; the work was done all the same
		}
		mu.Lock()
		got = append(got, string(it.Data))
		causes = append(causes, context.Cause(ctx))
		mu.Unlock()
		consumed <- struct{}{}
		return nil
	}))
	prod, _ := queue.New(obs, p)
	if err := prod.Put(t.Context(), []byte("job")); err != nil {
		t.Fatal(err)
	}
	qRecv(t, consumed, "the job consumed")
	if err := prod.Put(t.Context(), []byte("next")); err != nil {
		t.Fatal(err)
	}
	qRecv(t, consumed, "the next item")
	eventually(t, 5*time.Second, func() bool { return len(qItems(t, obs, p)) == 0 && len(children(t, obs, locks)) == 0 },
		"no item or lock left")
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != "job,next" || !errors.Is(causes[0], queue.ErrSessionLost) {
		t.Fatalf("consumed %q with causes %v; want job once (its ctx ended by ErrSessionLost), then next", got, causes)
	}
}
