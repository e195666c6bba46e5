package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/go-curator/curator/recipes/mutex"
)

// ScaleResult is what the scale case measured: n goroutines of one process
// queued on one go-curator Mutex through one client.
type ScaleResult struct {
	Waiters int

	QueueTime   time.Duration // from the first Acquire to all n queued
	HeapPer     float64       // heap bytes per queued waiter
	StackPer    float64       // goroutine stack bytes per queued waiter
	GoroutPer   float64       // goroutines per queued waiter
	WatchesHeld int64         // server watches while all wait (wchs)
	ChainTime   time.Duration // from the holder's release to the last waiter's

	// Notifications is how many watch notifications the server sent
	// while the queue drained (mntr's *_watch_count sums), for Handoffs
	// releases that had a waiter behind them.
	Notifications int64
	Handoffs      int
	WatchesAfter  int64 // wchs once all are done: left-over watches

	FIFO     bool
	OutOfOrd int // acquisitions that came before a lower sequence
	Errors   int
	FirstErr string
}

// watchSums are mntr's counters of watch notifications sent, by event type.
var watchSums = []string{
	"zk_sum_node_created_watch_count", "zk_sum_node_deleted_watch_count",
	"zk_sum_node_changed_watch_count", "zk_sum_node_children_watch_count",
}

func notifications(ctx context.Context, connect string) (int64, error) {
	m, err := mntr(ctx, connect)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, k := range watchSums {
		v, err := strconv.ParseInt(m[k], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("mntr %s = %q: %w", k, m[k], err)
		}
		n += v
	}
	return n, nil
}

// runScale queues n waiters on one Mutex of one client behind a holder,
// measures their cost, then releases and checks that they acquire in FIFO
// order with one watch notification per hand-off. It needs the server to
// itself: mntr and wchs count every client's watches.
func runScale(ctx context.Context, connect, path string, n int) (*ScaleResult, error) {
	c, err := newCurator(ctx, connect)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	m, err := mutex.New(c, path)
	if err != nil {
		return nil, err
	}
	res := &ScaleResult{Waiters: n, Handoffs: n}

	// The holder: its own goroutine, since the Mutex is reentrant per
	// goroutine.
	held, release, released := make(chan error, 1), make(chan struct{}), make(chan error, 1)
	go func() {
		err := m.Acquire(ctx)
		held <- err
		if err != nil {
			return
		}
		<-release
		released <- m.Release(context.WithoutCancel(ctx))
	}()
	if err := <-held; err != nil {
		return nil, fmt.Errorf("holder: %w", err)
	}
	watches0, err := totalWatches(ctx, connect)
	if err != nil {
		return nil, err
	}

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		order []int64
		errs  []error
		begin = time.Now()
	)
	wctx, cancelWaiters := context.WithCancel(ctx)
	defer cancelWaiters()
	for range n {
		wg.Go(func() {
			err := m.Acquire(wctx)
			if err == nil {
				// Only the holder appends, so order is the order of holds.
				seq, perr := parseSeq(m.Node())
				mu.Lock()
				order = append(order, seq)
				mu.Unlock()
				err = errors.Join(perr, m.Release(context.WithoutCancel(wctx)))
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}

	// Queued means every waiter's node exists and every waiter watches its
	// predecessor.
	deadline := time.Now().Add(max(2*time.Minute, time.Duration(n)*20*time.Millisecond))
	for {
		st, err := c.CheckExists().ForPath(ctx, path)
		if err != nil {
			cancelWaiters()
			return nil, err
		}
		w, err := totalWatches(ctx, connect)
		if err != nil {
			cancelWaiters()
			return nil, err
		}
		kids := 0
		if st != nil {
			kids = int(st.NumChildren)
		}
		if kids == n+1 && w-watches0 >= int64(n) {
			res.WatchesHeld = w - watches0
			break
		}
		if time.Now().After(deadline) {
			cancelWaiters()
			return nil, fmt.Errorf("waiters not queued after %v: %d nodes, %d watches", time.Since(begin).Round(time.Second), kids, w-watches0)
		}
		time.Sleep(50 * time.Millisecond)
	}
	res.QueueTime = time.Since(begin)
	time.Sleep(200 * time.Millisecond) // let the last waiters park
	runtime.GC()
	runtime.ReadMemStats(&after)
	g1 := runtime.NumGoroutine()
	res.HeapPer = (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
	res.StackPer = (float64(after.StackInuse) - float64(before.StackInuse)) / float64(n)
	res.GoroutPer = float64(g1-g0) / float64(n)

	n0, err := notifications(ctx, connect)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	close(release)
	if err := <-released; err != nil {
		return nil, fmt.Errorf("holder release: %w", err)
	}
	wg.Wait()
	res.ChainTime = time.Since(start)
	n1, err := notifications(ctx, connect)
	if err != nil {
		return nil, err
	}
	res.Notifications = n1 - n0
	if res.WatchesAfter, err = totalWatches(ctx, connect); err == nil {
		res.WatchesAfter -= watches0
	}

	res.Errors = len(errs)
	if len(errs) > 0 {
		res.FirstErr = errs[0].Error()
	}
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			res.OutOfOrd++
		}
	}
	res.FIFO = res.OutOfOrd == 0 && len(order) == n
	return res, nil
}
