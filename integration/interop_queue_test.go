package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/recipes/queue"
	"github.com/go-curator/curator/zktest"
)

// queueItem is one item an interop test puts: its bytes and the argument
// of its kind (id, priority, or due time in ms since the epoch).
type queueItem struct {
	data []byte
	arg  string
}

// queueCase is one kind of queue in the interop tests: the items Java and
// Go put (one by one, then one PutMulti of multi under multiArg), and the
// order a single consumer must hand them out in.
type queueCase struct {
	kind     string
	items    []queueItem
	multi    [][]byte
	multiArg string
	// order gives the expected delivery order of items (indexes) with the
	// multi's items, in order, at multiAt.
	order   []int
	multiAt int
	// javaMulti is false where Curator has no putMulti (DistributedIdQueue).
	javaMulti bool
}

// want is the bytes a consumer must get, in order.
func (qc queueCase) want() [][]byte {
	var out [][]byte
	for i, idx := range qc.order {
		if i == qc.multiAt {
			out = append(out, qc.multi...)
		}
		out = append(out, qc.items[idx].data)
	}
	if qc.multiAt >= len(qc.order) {
		out = append(out, qc.multi...)
	}
	return out
}

// queueBytes are item payloads of every shape: empty, binary, text.
var queueBytes = [][]byte{
	{},
	{0x00, 0x01, 0x02, 0xfe, 0xff},
	[]byte("héllo, queue"),
	bytes.Repeat([]byte{0xab}, 300),
}

func queueCases(now time.Time) []queueCase {
	ms := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).UnixMilli(), 10) }
	return []queueCase{
		{kind: interop.QueuePlain, javaMulti: true,
			items: []queueItem{{queueBytes[0], ""}, {queueBytes[1], ""}, {queueBytes[2], ""}, {queueBytes[3], ""}},
			multi: [][]byte{[]byte("m0"), {}, []byte("m2")}, order: []int{0, 1, 2, 3}, multiAt: 4},
		{kind: interop.QueueID,
			items: []queueItem{{queueBytes[1], "a"}, {queueBytes[2], "b/c|d"}, {queueBytes[0], "a"}, {queueBytes[3], "e"}},
			multi: [][]byte{[]byte("m0"), []byte("m1")}, multiArg: "f", order: []int{0, 1, 2, 3}, multiAt: 4},
		// Lower numbers first; negative ones before all others.
		{kind: interop.QueuePriority, javaMulti: true,
			items: []queueItem{{queueBytes[1], "5"}, {queueBytes[2], "-3"}, {queueBytes[3], "100000"}, {queueBytes[0], "0"}},
			multi: [][]byte{[]byte("m0"), []byte("m1")}, multiArg: "7", order: []int{1, 3, 0, 2}, multiAt: 3},
		// All due already, so a single consumer hands them out by due time.
		{kind: interop.QueueDelay, javaMulti: true,
			items: []queueItem{{queueBytes[1], ms(-3 * time.Second)}, {queueBytes[2], ms(-5 * time.Second)}, {queueBytes[3], ms(-time.Second)}, {queueBytes[0], ms(-4 * time.Second)}},
			multi: [][]byte{[]byte("m0"), []byte("m1")}, multiArg: ms(-2 * time.Second), order: []int{1, 3, 0, 2}, multiAt: 3},
	}
}

// goQueue is one of the Go queue kinds behind one shape.
type goQueue struct {
	start    func(ctx context.Context) error
	close    func(ctx context.Context) error
	put      func(ctx context.Context, data []byte, arg string) error
	putMulti func(ctx context.Context, items [][]byte, arg string) error
	remove   func(ctx context.Context, id string) (int, error)
}

// newGoQueue builds a Go queue of kind at p.
func newGoQueue(t *testing.T, c *framework.Client, kind, p string, opts ...queue.Option) goQueue {
	t.Helper()
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	at := func(s string) time.Time { n, _ := strconv.ParseInt(s, 10, 64); return time.UnixMilli(n) }
	switch kind {
	case interop.QueuePlain:
		q, err := queue.New(c, p, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return goQueue{start: q.Start, close: q.Close,
			put:      func(ctx context.Context, d []byte, _ string) error { return q.Put(ctx, d) },
			putMulti: func(ctx context.Context, d [][]byte, _ string) error { return q.PutMulti(ctx, d) }}
	case interop.QueueID:
		q, err := queue.NewID(c, p, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return goQueue{start: q.Start, close: q.Close, put: q.Put, putMulti: q.PutMulti, remove: q.Remove}
	case interop.QueuePriority:
		q, err := queue.NewPriority(c, p, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return goQueue{start: q.Start, close: q.Close,
			put:      func(ctx context.Context, d []byte, a string) error { return q.Put(ctx, d, atoi(a)) },
			putMulti: func(ctx context.Context, d [][]byte, a string) error { return q.PutMulti(ctx, d, atoi(a)) }}
	case interop.QueueDelay:
		q, err := queue.NewDelay(c, p, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return goQueue{start: q.Start, close: q.Close,
			put:      func(ctx context.Context, d []byte, a string) error { return q.Put(ctx, d, at(a)) },
			putMulti: func(ctx context.Context, d [][]byte, a string) error { return q.PutMulti(ctx, d, at(a)) }}
	}
	t.Fatalf("unknown kind %q", kind)
	return goQueue{}
}

// goTaken records what a Go consumer was handed.
type goTaken struct {
	mu    sync.Mutex
	items []queue.Item
}

func (g *goTaken) consume(_ context.Context, it queue.Item) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.items = append(g.items, it)
	return nil
}

func (g *goTaken) data() [][]byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out [][]byte
	for _, it := range g.items {
		out = append(out, it.Data)
	}
	return out
}

// sameItems reports the first difference between got and want, or "".
func sameItems(got, want [][]byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d items %s, want %d %s", len(got), hexItems(got), len(want), hexItems(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			return fmt.Sprintf("item %d is %x, want %x (got %s, want %s)", i, got[i], want[i], hexItems(got), hexItems(want))
		}
	}
	return ""
}

func hexItems(items [][]byte) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "[%x]", it)
	}
	return b.String()
}

// queueLeft lists the item nodes ("queue-" children) left at p and the
// locks left at lockPath ("" for none).
func queueLeft(t *testing.T, c *framework.Client, p, lockPath string) []string {
	t.Helper()
	var left []string
	for _, k := range children(t, c, p) {
		if strings.HasPrefix(k, "queue-") {
			left = append(left, p+"/"+k)
		}
	}
	if lockPath != "" {
		for _, k := range children(t, c, lockPath) {
			left = append(left, lockPath+"/"+k)
		}
	}
	return left
}

// TestQueueInterop_JavaAndGoShareEveryKind: for each of Curator's four
// QueueBuilder queues, plain and lock-safe, items Java puts (one by one
// and one putMulti) come out of a Go consumer with the same bytes in the
// kind's order, and items Go puts come out of a Java consumer the same
// way; nothing is left in the queue or its lock directory.
func TestQueueInterop_JavaAndGoShareEveryKind(t *testing.T) {
	t.Parallel()
	connect := zktest.Shared(t).ConnectString()
	for _, qc := range queueCases(time.Now()) {
		t.Run(qc.kind, func(t *testing.T) {
			t.Parallel()
			c := newClient(t)
			j := interop.StartQueue(t, connect)
			for _, locked := range []bool{false, true} {
				mode := "plain"
				if locked {
					mode = "locksafe"
				}
				base := testPath(t) + "/" + mode
				lockPath := ""
				var opts []queue.Option
				jo := interop.QueueOptions{Consume: true}
				if locked {
					lockPath = base + "-locks"
					opts = append(opts, queue.WithLockPath(lockPath))
					jo.LockPath = lockPath
				}
				t.Run(mode+"/java-puts-go-takes", func(t *testing.T) {
					p := base + "/j2g"
					ctx := javaCtx(t, 60*time.Second)
					jq, err := interop.StartJavaQueue(ctx, j, mode+"-j2g-producer", qc.kind, p, interop.QueueOptions{LockPath: lockPath})
					if err != nil {
						t.Fatalf("start the Curator producer: %v", err)
					}
					defer jq.Close(ctx)
					for _, it := range qc.items {
						if err := jq.Put(ctx, it.data, it.arg); err != nil {
							t.Fatalf("Curator put: %v", err)
						}
					}
					want := qc.want()
					if qc.javaMulti {
						if err := jq.PutMulti(ctx, qc.multi, qc.multiArg); err != nil {
							t.Fatalf("Curator putMulti: %v", err)
						}
					} else {
						want = slices.DeleteFunc(want, func(b []byte) bool {
							return slices.ContainsFunc(qc.multi, func(m []byte) bool { return bytes.Equal(m, b) })
						})
					}
					var got goTaken
					gq := newGoQueue(t, c, qc.kind, p, append(slices.Clone(opts), queue.WithConsumer(got.consume))...)
					if err := gq.start(t.Context()); err != nil {
						t.Fatal(err)
					}
					waitFor(t, func() string { return sameItems(got.data(), want) })
					if err := gq.close(t.Context()); err != nil {
						t.Fatal(err)
					}
					if d := sameItems(got.data(), want); d != "" {
						t.Fatalf("Go consumer of Curator's items: %s", d)
					}
					checkTokens(t, got.items)
					if left := queueLeft(t, c, p, lockPath); len(left) > 0 {
						t.Fatalf("left after the Go consumer took everything: %q", left)
					}
				})
				t.Run(mode+"/go-puts-java-takes", func(t *testing.T) {
					p := base + "/g2j"
					ctx := javaCtx(t, 60*time.Second)
					gq := newGoQueue(t, c, qc.kind, p, opts...)
					if err := gq.start(t.Context()); err != nil {
						t.Fatal(err)
					}
					defer gq.close(t.Context())
					for _, it := range qc.items {
						if err := gq.put(t.Context(), it.data, it.arg); err != nil {
							t.Fatalf("Go put: %v", err)
						}
					}
					if err := gq.putMulti(t.Context(), qc.multi, qc.multiArg); err != nil {
						t.Fatalf("Go PutMulti: %v", err)
					}
					jq, err := interop.StartJavaQueue(ctx, j, mode+"-g2j-consumer", qc.kind, p, jo)
					if err != nil {
						t.Fatalf("start the Curator consumer: %v", err)
					}
					want := qc.want()
					var got [][]byte
					waitFor(t, func() string {
						got, err = jq.Taken(ctx)
						if err != nil {
							return err.Error()
						}
						return sameItems(got, want)
					})
					// Curator deletes a node once its last item is consumed:
					// wait for that before closing its queue, which would
					// interrupt the delete.
					waitFor(t, func() string {
						if left := queueLeft(t, c, p, lockPath); len(left) > 0 {
							return fmt.Sprintf("left after the Curator consumer took everything: %q", left)
						}
						return ""
					})
					if err := jq.Close(ctx); err != nil {
						t.Fatal(err)
					}
				})
			}
		})
	}
}

// checkTokens fails t unless every item has its own Token, and the items
// of one node share its zxid with indexes 0, 1, ...
func checkTokens(t *testing.T, items []queue.Item) {
	t.Helper()
	seen := map[queue.Token]bool{}
	next := map[string]int{}
	for _, it := range items {
		if seen[it.Token] {
			t.Fatalf("token %+v handed out twice", it.Token)
		}
		seen[it.Token] = true
		if it.Token.Index != next[it.Node] {
			t.Fatalf("item %d of node %s has index %d", next[it.Node], it.Node, it.Token.Index)
		}
		next[it.Node]++
	}
}

// TestQueueInterop_IDQueueRemoveBothWays: Go's IDQueue.Remove removes the
// items Curator's DistributedIdQueue put under an id (with Curator's '/'
// and '|' fixing) and Curator's remove removes Go's, each counting them;
// the other items stay for a consumer.
func TestQueueInterop_IDQueueRemoveBothWays(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	j := interop.StartQueue(t, zktest.Shared(t).ConnectString())
	ctx := javaCtx(t, 60*time.Second)
	p := testPath(t)

	jq, err := interop.StartJavaQueue(ctx, j, "ids", interop.QueueID, p, interop.QueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gq := newGoQueue(t, c, interop.QueueID, p)
	if err := gq.start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer gq.close(t.Context())
	for i, id := range []string{"x/1", "keep", "x/1", "x|1"} {
		if err := jq.Put(ctx, []byte{byte(i)}, id); err != nil {
			t.Fatal(err)
		}
	}
	// "x/1" and "x|1" are both stored as "x_1".
	if n, err := gq.remove(t.Context(), "x/1"); err != nil || n != 3 {
		t.Fatalf("Go Remove(x/1) of Curator's items = %d, %v; want 3", n, err)
	}
	for i, id := range []string{"y", "keep", "y"} {
		if err := gq.put(t.Context(), []byte{byte(10 + i)}, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := gq.putMulti(t.Context(), [][]byte{{20}, {21}}, "y"); err != nil {
		t.Fatal(err)
	}
	if n, err := jq.Remove(ctx, "y"); err != nil || n != 3 {
		t.Fatalf("Curator remove(y) of Go's items = %d, %v; want 3 nodes", n, err)
	}
	if err := jq.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var got goTaken
	consumer := newGoQueue(t, c, interop.QueueID, p, queue.WithConsumer(got.consume))
	if err := consumer.start(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := [][]byte{{1}, {11}}
	waitFor(t, func() string { return sameItems(got.data(), want) })
	if err := consumer.close(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, it := range got.items {
		if it.ID != "keep" {
			t.Fatalf("item %x has ID %q, want keep", it.Data, it.ID)
		}
	}
	if left := queueLeft(t, c, p, ""); len(left) > 0 {
		t.Fatalf("left: %q", left)
	}
}

// TestQueueInterop_SimpleQueueBothWays: Curator's SimpleDistributedQueue
// and Go's SimpleQueue share one queue: what one offers the other peeks
// and polls, in order, with the same bytes, and the queue ends empty for
// both.
func TestQueueInterop_SimpleQueueBothWays(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	j := interop.StartQueue(t, zktest.Shared(t).ConnectString())
	ctx := javaCtx(t, 60*time.Second)
	p := testPath(t)
	sq, err := queue.NewSimple(c, p)
	if err != nil {
		t.Fatal(err)
	}

	// Java offers, Go peeks and takes.
	for _, b := range queueBytes {
		if err := interop.SimpleOffer(ctx, j, p, b); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := sq.Peek(t.Context()); err != nil || !bytes.Equal(b, queueBytes[0]) {
		t.Fatalf("Go Peek of Curator's queue = %x, %v; want %x", b, err, queueBytes[0])
	}
	var got [][]byte
	for range queueBytes {
		tctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		b, err := sq.Take(tctx)
		cancel()
		if err != nil {
			t.Fatalf("Go Take: %v", err)
		}
		got = append(got, b)
	}
	if d := sameItems(got, queueBytes); d != "" {
		t.Fatalf("Go took Curator's items: %s", d)
	}
	if _, err := sq.Poll(t.Context()); !errors.Is(err, queue.ErrEmpty) {
		t.Fatalf("Go Poll of the emptied queue: %v, want ErrEmpty", err)
	}

	// Go offers, Java peeks and polls.
	for _, b := range queueBytes {
		if err := sq.Offer(t.Context(), b); err != nil {
			t.Fatal(err)
		}
	}
	if b, ok, err := interop.SimplePeek(ctx, j, p); err != nil || !ok || !bytes.Equal(b, queueBytes[0]) {
		t.Fatalf("Curator peek of Go's queue = %x, %v, %v; want %x", b, ok, err, queueBytes[0])
	}
	got = nil
	for range queueBytes {
		b, ok, err := interop.SimplePoll(ctx, j, p, 5000)
		if err != nil || !ok {
			t.Fatalf("Curator poll: %v (got an item: %v)", err, ok)
		}
		got = append(got, b)
	}
	if d := sameItems(got, queueBytes); d != "" {
		t.Fatalf("Curator took Go's items: %s", d)
	}
	if _, ok, err := interop.SimplePeek(ctx, j, p); err != nil || ok {
		t.Fatalf("Curator peek of the emptied queue: item %v, %v", ok, err)
	}
	if kids := children(t, c, p); len(kids) > 0 {
		t.Fatalf("left: %q", kids)
	}
}
