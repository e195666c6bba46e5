package integration

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/queue"
	"github.com/go-curator/curator/zktest"
)

// BenchmarkQueue_BigDrain queues QUEUE_BIG_N items (default 50,000) as
// single-item nodes on a private server, then drains them with 4
// consumers on 4 clients (plain mode), and reports the drain rate over the
// first and the last tenth of the items: a consumer that re-read the
// directory per item would slow down as the directory grows; ours lists
// it only when its own list runs dry.
//
//	go test -run XXX -bench BenchmarkQueue_BigDrain -benchtime 1x .
func BenchmarkQueue_BigDrain(b *testing.B) {
	n := 50000
	if s := os.Getenv("QUEUE_BIG_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	const consumers, batch = 4, 1000
	cl := zktest.Start(b)
	for range b.N {
		prod := startClient(b, builder(b, cl.ConnectString()))
		p := fmt.Sprintf("/big-%d", time.Now().UnixNano())
		ctx := context.Background()
		if _, err := prod.Create().ForPath(ctx, p, nil); err != nil {
			b.Fatal(err)
		}
		item := []byte{0, 1, 0, 1, 1, 0, 0, 0, 4, 'i', 't', 'e', 'm', 2} // Curator's encoding of "item"
		for i := 0; i < n; i += batch {
			tx := prod.Transaction()
			for j := i; j < min(i+batch, n); j++ {
				tx = tx.Create(p+"/queue-", item, framework.PersistentSequential)
			}
			if _, err := tx.Commit(ctx); err != nil {
				b.Fatal(err)
			}
		}
		var mu sync.Mutex
		stamps := make([]time.Time, 0, n)
		all := make(chan struct{})
		b.ResetTimer()
		start := time.Now()
		var qs []*queue.Queue
		for range consumers {
			c := startClient(b, builder(b, cl.ConnectString()))
			q, err := queue.New(c, p, queue.WithConsumer(func(ctx context.Context, it queue.Item) error {
				mu.Lock()
				stamps = append(stamps, time.Now())
				if len(stamps) == n {
					close(all)
				}
				mu.Unlock()
				return nil
			}))
			if err != nil {
				b.Fatal(err)
			}
			if err := q.Start(ctx); err != nil {
				b.Fatal(err)
			}
			qs = append(qs, q)
		}
		<-all
		b.StopTimer()
		for _, q := range qs {
			q.Close(ctx)
		}
		tenth := n / 10
		rate := func(from, to time.Time) float64 { return float64(tenth) / to.Sub(from).Seconds() }
		b.ReportMetric(rate(start, stamps[tenth-1]), "items/s-first-tenth")
		b.ReportMetric(rate(stamps[n-tenth-1], stamps[n-1]), "items/s-last-tenth")
		b.ReportMetric(float64(n)/stamps[n-1].Sub(start).Seconds(), "items/s")
	}
}
