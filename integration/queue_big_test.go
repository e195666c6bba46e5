package integration

import (
	"context"
	"fmt"
	"os"
	"slices"
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

// BenchmarkQueue_Throughput4x4 runs 4 producers and 4 consumers (8
// clients) on a private server, each producer putting b.N/4 items, and
// reports items/s and the p50 and p99 put-to-take latency, in plain and
// lock-safe mode.
//
//	go test -run XXX -bench BenchmarkQueue_Throughput4x4 -benchtime 4000x .
func BenchmarkQueue_Throughput4x4(b *testing.B) {
	cl := zktest.Start(b)
	for _, lockSafe := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "locksafe"}[lockSafe], func(b *testing.B) {
			const producers, consumers = 4, 4
			p := fmt.Sprintf("/tp-%d", time.Now().UnixNano())
			var opts []queue.Option
			if lockSafe {
				opts = append(opts, queue.WithLockPath(p+"-locks"))
			}
			ctx := context.Background()
			var mu sync.Mutex
			lat := make([]time.Duration, 0, b.N)
			n := b.N / producers * producers
			all := make(chan struct{})
			var qs []*queue.Queue
			for range consumers {
				c := startClient(b, builder(b, cl.ConnectString()))
				q, err := queue.New(c, p, append(opts, queue.WithConsumer(func(ctx context.Context, it queue.Item) error {
					sent, _ := strconv.ParseInt(string(it.Data), 10, 64)
					mu.Lock()
					lat = append(lat, time.Since(time.Unix(0, sent)))
					if len(lat) == n {
						close(all)
					}
					mu.Unlock()
					return nil
				}))...)
				if err != nil {
					b.Fatal(err)
				}
				if err := q.Start(ctx); err != nil {
					b.Fatal(err)
				}
				qs = append(qs, q)
			}
			var ps []*queue.Queue
			for range producers {
				q, err := queue.New(startClient(b, builder(b, cl.ConnectString())), p)
				if err != nil {
					b.Fatal(err)
				}
				ps = append(ps, q)
			}
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for _, q := range ps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range n / producers {
						if err := q.Put(ctx, []byte(strconv.FormatInt(time.Now().UnixNano(), 10))); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			if n > 0 {
				<-all
			}
			el := time.Since(start)
			b.StopTimer()
			for _, q := range qs {
				q.Close(ctx)
			}
			if n == 0 {
				return
			}
			slices.Sort(lat)
			b.ReportMetric(float64(n)/el.Seconds(), "items/s")
			b.ReportMetric(float64(lat[n/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[n*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
