package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/queue"
)

// qCollector records what a consumer got, in order.
type qCollector struct {
	mu    sync.Mutex
	items []queue.Item
	ch    chan struct{}
}

func newQCollector() *qCollector { return &qCollector{ch: make(chan struct{}, 1024)} }

func (q *qCollector) consume(ctx context.Context, it queue.Item) error {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.mu.Unlock()
	q.ch <- struct{}{}
	return nil
}

func (q *qCollector) data() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var s []string
	for _, it := range q.items {
		s = append(s, string(it.Data))
	}
	return s
}

// wait waits for n items in all.
func (q *qCollector) wait(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		q.mu.Lock()
		got := len(q.items)
		q.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-q.ch:
		case <-timeout:
			t.Fatalf("got %d items, want %d: %q", got, n, q.data())
		}
	}
}

// qItems lists the item nodes ("queue-...") under p.
func qItems(t *testing.T, c *framework.Client, p string) []string {
	t.Helper()
	var out []string
	for _, k := range children(t, c, p) {
		if strings.HasPrefix(k, "queue-") {
			out = append(out, k)
		}
	}
	return out
}

func qClose(t *testing.T, closer func(context.Context) error) {
	t.Helper()
	if err := closer(t.Context()); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestQueue_FIFOSingleConsumer(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	p := qTestPath(t)
	prod, err := queue.New(c, p)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 0; i < 10; i++ {
		want = append(want, fmt.Sprint("item-", i))
		if err := prod.Put(t.Context(), []byte(want[i])); err != nil {
			t.Fatal(err)
		}
	}
	if err := prod.PutMulti(t.Context(), [][]byte{[]byte("m-0"), []byte("m-1"), {}}); err != nil {
		t.Fatal(err)
	}
	want = append(want, "m-0", "m-1", "")
	got := newQCollector()
	q, err := queue.New(c, p, queue.WithConsumer(got.consume))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	got.wait(t, len(want))
	if err := prod.Put(t.Context(), []byte("late")); err != nil { // woken from the line
		t.Fatal(err)
	}
	want = append(want, "late")
	got.wait(t, len(want))
	qClose(t, q.Close)
	if d := got.data(); strings.Join(d, ",") != strings.Join(want, ",") {
		t.Fatalf("consumed %q; want %q", d, want)
	}
	tokens := map[queue.Token]bool{}
	for i, it := range got.items {
		if tokens[it.Token] || it.Token.Zxid == 0 {
			t.Errorf("item %d: token %+v repeated or zero", i, it.Token)
		}
		tokens[it.Token] = true
	}
	if m := got.items[10:13]; m[0].Token.Zxid != m[2].Token.Zxid || m[0].Token.Index != 0 || m[2].Token.Index != 2 || m[0].Node != m[1].Node {
		t.Errorf("PutMulti's items: %+v; want one node, indexes 0..2", m)
	}
	if left := qItems(t, c, p); len(left) != 0 {
		t.Errorf("items left: %q", left)
	}
	if left := children(t, c, p+"-line"); len(left) != 0 {
		t.Errorf("line nodes left after Close: %q", left)
	}
}

func TestQueue_NodeNamesAndBytesMatchCurator(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	base := qTestPath(t)
	ctx := t.Context()
	seq := `\d{10}`
	check := func(p string, re string) {
		t.Helper()
		kids := children(t, c, p)
		if len(kids) != 1 || !regexp.MustCompile("^"+re+"$").MatchString(kids[0]) {
			t.Fatalf("%s: children %q; want one matching %s", p, kids, re)
		}
		b, _, err := c.GetData().ForPath(ctx, p+"/"+kids[0])
		if err != nil {
			t.Fatal(err)
		}
		want := []byte{0, 1, 0, 1, 1, 0, 0, 0, 3, 'a', 'b', 'c', 2}
		if strings.HasPrefix(kids[0], "qn-") {
			want = []byte("abc")
		}
		if !bytes.Equal(b, want) {
			t.Fatalf("%s: data %v; want %v", kids[0], b, want)
		}
	}
	q, _ := queue.New(c, base+"/plain")
	if err := q.Put(ctx, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	check(base+"/plain", "queue-"+seq)

	pq, _ := queue.NewPriority(c, base+"/prio")
	if err := pq.Put(ctx, []byte("abc"), -2); err != nil {
		t.Fatal(err)
	}
	check(base+"/prio", "queue-0FFFFFFFE"+seq)
	pq2, _ := queue.NewPriority(c, base+"/prio2")
	if err := pq2.Put(ctx, []byte("abc"), 26); err != nil {
		t.Fatal(err)
	}
	check(base+"/prio2", "queue-10000001A"+seq)

	dq, _ := queue.NewDelay(c, base+"/delay")
	at := time.UnixMilli(0x18C3A2B1C00)
	if err := dq.Put(ctx, []byte("abc"), at); err != nil {
		t.Fatal(err)
	}
	check(base+"/delay", `queue-\|18C3A2B1C00\|`+seq)

	iq, _ := queue.NewID(c, base+"/id")
	if err := iq.Put(ctx, []byte("abc"), "order/7|x"); err != nil {
		t.Fatal(err)
	}
	check(base+"/id", `queue-\|order_7_x\|`+seq)

	sq, _ := queue.NewSimple(c, base+"/simple")
	if err := sq.Offer(ctx, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	check(base+"/simple", "qn-"+seq)
}

func TestPriorityQueue_LowestFirst(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	p := qTestPath(t)
	pq, err := queue.NewPriority(c, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range []int{5, -3, 0, 5, 1 << 20, -1} {
		if err := pq.Put(t.Context(), []byte(fmt.Sprint(pr)), pr); err != nil {
			t.Fatal(err)
		}
	}
	if err := pq.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 6 {
		d := <-pq.Items()
		got = append(got, string(d.Data))
		d.Done(nil)
	}
	qClose(t, pq.Close)
	if want := "-3,-1,0,5,5,1048576"; strings.Join(got, ",") != want {
		t.Fatalf("order %q; want %s", got, want)
	}
}

func TestDelayQueue_NotBeforeItsTime(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	p := qTestPath(t)
	dq, err := queue.NewDelay(c, p, queue.WithLockPath(p+"-locks"))
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(1500 * time.Millisecond)
	if err := dq.Put(t.Context(), []byte("later"), later); err != nil {
		t.Fatal(err)
	}
	if err := dq.Put(t.Context(), []byte("past"), time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := dq.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 2 {
		d := <-dq.Items()
		if string(d.Data) == "later" && time.Now().Before(later) {
			t.Errorf("item due at %v delivered at %v", later, time.Now())
		}
		got = append(got, string(d.Data))
		d.Done(nil)
	}
	qClose(t, dq.Close)
	if strings.Join(got, ",") != "past,later" {
		t.Fatalf("order %q; want past, later", got)
	}
	eventually(t, 5*time.Second, func() bool { return len(qItems(t, c, p)) == 0 }, "items deleted")
}

func TestIDQueue_RemoveDeletesEveryItemWithTheID(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	p := qTestPath(t)
	iq, err := queue.NewID(c, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "a", "a/x", "c", "a"} {
		if err := iq.Put(t.Context(), []byte(id), id); err != nil {
			t.Fatal(err)
		}
	}
	n, err := iq.Remove(t.Context(), "a")
	if n != 3 || err != nil {
		t.Fatalf("Remove(a) = %d, %v; want 3, nil", n, err)
	}
	if n, err := iq.Remove(t.Context(), "a/x"); n != 1 || err != nil {
		t.Fatalf("Remove(a/x) = %d, %v; want 1", n, err)
	}
	if n, err := iq.Remove(t.Context(), "zzz"); n != 0 || err != nil {
		t.Fatalf("Remove(zzz) = %d, %v; want 0", n, err)
	}
	if _, err := iq.Remove(t.Context(), ""); !errors.Is(err, queue.ErrInvalidArgument) {
		t.Fatalf("Remove(\"\") = %v; want ErrInvalidArgument", err)
	}
	items := iq.Items() // before Start: consuming starts with Start
	if err := iq.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 2 {
		d := <-items
		got = append(got, d.ID+"="+string(d.Data))
	}
	qClose(t, iq.Close)
	if strings.Join(got, ",") != "b=b,c=c" {
		t.Fatalf("left %q; want b, c", got)
	}
}

func TestSimpleQueue_OfferTakePollPeek(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	p := qTestPath(t)
	sq, err := queue.NewSimple(c, p)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := sq.Poll(ctx); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("Poll on no queue = %v; want ErrEmpty", err)
	}
	got := make(chan string, 1)
	go func() {
		b, err := sq.Take(ctx)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(b)
	}()
	for _, s := range []string{"one", "two", "three"} {
		if err := sq.Offer(ctx, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if s := <-got; s != "one" {
		t.Fatalf("Take = %q; want one", s)
	}
	if b, err := sq.Peek(ctx); string(b) != "two" || err != nil {
		t.Fatalf("Peek = %q, %v", b, err)
	}
	if b, err := sq.Poll(ctx); string(b) != "two" || err != nil {
		t.Fatalf("Poll = %q, %v", b, err)
	}
	if b, err := sq.Take(ctx); string(b) != "three" || err != nil {
		t.Fatalf("Take = %q, %v", b, err)
	}
	if _, err := sq.Peek(ctx); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("Peek on empty = %v; want ErrEmpty", err)
	}
	tctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := sq.Take(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Take on empty with a deadline = %v", err)
	}
}

// qTestPath is testPath made unique per run, so that -count > 1 finds no
// item a run before left in place.
func qTestPath(t *testing.T) string {
	t.Helper()
	return testPath(t) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
}
