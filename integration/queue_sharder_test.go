package integration

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/queue"
)

// TestQueueSharder_LeaderAddsAQueueOverThreshold: two sharders over one
// path (two clients); filling the only queue past the threshold makes the
// leader add one queue-<uuid> (never more than the maximum), which the
// other sharder takes up too.
func TestQueueSharder_LeaderAddsAQueueOverThreshold(t *testing.T) {
	t.Parallel()
	p := qTestPath(t)
	leader := p + "-leader"
	var sharders []*queue.Sharder[*queue.Queue]
	var clients []*framework.Client
	for range 2 {
		c := newClient(t)
		clients = append(clients, c)
		s, err := queue.NewSharder(c, p, leader, func(qp string, opts ...queue.Option) (*queue.Queue, error) {
			// Each consumer holds its first item: the rest fill the queue.
			return queue.New(c, qp, append(opts, queue.WithConsumer(func(ctx context.Context, it queue.Item) error {
				<-ctx.Done()
				return ctx.Err()
			}))...)
		},
			queue.WithNewQueueThreshold(3), queue.WithThresholdCheck(100*time.Millisecond), queue.WithMaxQueues(2))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(context.Background()) })
		sharders = append(sharders, s)
	}
	first := sharders[0].QueuePaths()
	if len(first) != 1 || !regexp.MustCompile(`^`+p+`/queue-[0-9a-f-]{36}$`).MatchString(first[0]) {
		t.Fatalf("first sharder's queues %q; want one %s/queue-<uuid>", first, p)
	}
	if got := sharders[1].QueuePaths(); len(got) != 1 || got[0] != first[0] {
		t.Fatalf("second sharder's queues %q; want the first's %q", got, first)
	}
	for range 6 {
		if err := sharders[1].Queue().Put(t.Context(), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, func() bool { return sharders[0].ShardQty() == 2 && sharders[1].ShardQty() == 2 },
		"both sharders to manage two queues")
	time.Sleep(300 * time.Millisecond) // a few more checks: the maximum holds
	if kids := children(t, clients[0], p); len(kids) != 2 || strings.Join(sharders[0].QueuePaths(), ",") != strings.Join(sharders[1].QueuePaths(), ",") {
		t.Fatalf("queues %q, sharders %q and %q; want the same two", kids, sharders[0].QueuePaths(), sharders[1].QueuePaths())
	}
	// The new queue's idle consumers line up outside the sharder's
	// directory, where a Java QueueSharder would take a line for a queue.
	newQ := strings.TrimPrefix(strings.Join(slices.DeleteFunc(sharders[0].QueuePaths(), func(s string) bool { return s == first[0] }), ""), p+"/")
	eventually(t, 10*time.Second, func() bool { return len(children(t, clients[0], p+"-lines/"+newQ)) == 2 },
		"the new queue's two consumers in its line")
	// The new queue is under half the threshold: preferred.
	for range 5 {
		if q := sharders[0].Queue(); q == nil {
			t.Fatal("Queue() = nil")
		}
	}
	if err := sharders[0].Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if q := sharders[0].Queue(); q != nil {
		t.Fatalf("Queue() after Close = %v; want nil", q)
	}
}
