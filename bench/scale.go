package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
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
	Handoffs      int   // acquisitions by waiters before the drain stopped
	WatchesAfter  int64 // wchs once all are done: left-over watches (-1: drain stopped early)

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
//
// The drain stops after drainBound: the waiter that then holds the lock
// keeps it while the notifications are counted, and closing the client ends
// the session, and with it the waits of those still queued.
func runScale(ctx context.Context, connect, path string, n int, drainBound time.Duration) (*ScaleResult, error) {
	c, err := newCurator(ctx, connect)
	if err != nil {
		return nil, err
	}
	m, err := mutex.New(c, path)
	if err != nil {
		c.Close()
		return nil, err
	}
	res := &ScaleResult{Waiters: n}

	var (
		wg            sync.WaitGroup
		mu            sync.Mutex
		order         []int64
		errs          []error
		stopAt        atomic.Pointer[time.Time] // set when the drain starts
		stopped       atomic.Bool               // the drain stopped at stopAt
		parked        = make(chan struct{})     // closed by the waiter that stopped it
		resume        = make(chan struct{})
		resumeOnce    = sync.OnceFunc(func() { close(resume) })
		release       = make(chan struct{})
		releaseOnce   = sync.OnceFunc(func() { close(release) })
		held          = make(chan error, 1)
		released      = make(chan error, 1)
		wctx, cancelW = context.WithCancel(ctx)
	)
	// On every return: close the session first, so that waiters still
	// queued end without a cascade of deletes and wake-ups; then let the
	// parked ones go and join everybody.
	defer func() {
		c.Close()
		cancelW()
		releaseOnce()
		resumeOnce()
		wg.Wait()
	}()
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}

	// The holder, on its own goroutine: the Mutex is reentrant per goroutine.
	wg.Go(func() {
		h, err := m.Acquire(wctx)
		held <- err
		if err != nil {
			return
		}
		<-release
		released <- h.Release(context.WithoutCancel(wctx))
	})
	if err := <-held; err != nil {
		return nil, fmt.Errorf("holder: %w", err)
	}
	watches0, err := totalWatches(ctx, connect)
	if err != nil {
		return nil, err
	}

	// BENCH_HEAPPROF=file writes a heap profile of every allocation live
	// once the waiters are queued (go tool pprof -sample_index=inuse_space).
	if os.Getenv("BENCH_HEAPPROF") != "" {
		runtime.MemProfileRate = 1
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	begin := time.Now()
	for range n {
		wg.Go(func() {
			h, err := m.Acquire(wctx)
			if err != nil {
				if !stopped.Load() {
					fail(err)
				}
				return
			}
			// Only the holder appends, so order is the order of holds.
			seq, err := parseSeq(h.Node())
			mu.Lock()
			order = append(order, seq)
			mu.Unlock()
			if err != nil {
				fail(err)
			}
			if t := stopAt.Load(); t != nil && time.Now().After(*t) && stopped.CompareAndSwap(false, true) {
				close(parked)
				<-resume
				h.Release(context.WithoutCancel(wctx)) // the session is gone: nothing to check
				return
			}
			if err := h.Release(context.WithoutCancel(wctx)); err != nil {
				fail(err)
			}
		})
	}

	// Queued means every waiter's node exists and every waiter watches its
	// predecessor.
	deadline := time.Now().Add(max(5*time.Minute, time.Duration(n)*30*time.Millisecond))
	for {
		st, err := c.CheckExists().ForPath(ctx, path)
		if err != nil {
			return nil, err
		}
		w, err := totalWatches(ctx, connect)
		if err != nil {
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
			return nil, fmt.Errorf("waiters not queued after %v: %d nodes, %d watches", time.Since(begin).Round(time.Second), kids, w-watches0)
		}
		time.Sleep(50 * time.Millisecond)
	}
	res.QueueTime = time.Since(begin)
	time.Sleep(200 * time.Millisecond) // let the last waiters park
	runtime.GC()
	runtime.ReadMemStats(&after)
	if f := os.Getenv("BENCH_HEAPPROF"); f != "" {
		if w, err := os.Create(f); err == nil {
			pprof.WriteHeapProfile(w)
			w.Close()
		}
	}
	g1 := runtime.NumGoroutine()
	res.HeapPer = (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
	res.StackPer = (float64(after.StackInuse) - float64(before.StackInuse)) / float64(n)
	res.GoroutPer = float64(g1-g0) / float64(n)

	// The drain: the holder releases and the waiters pass the lock on.
	n0, err := notifications(ctx, connect)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	stop := start.Add(drainBound)
	stopAt.Store(&stop)
	releaseOnce()
	if err := <-released; err != nil {
		return nil, fmt.Errorf("holder release: %w", err)
	}
	drained := make(chan struct{})
	go func() {
		for {
			mu.Lock()
			done := len(order) == n
			mu.Unlock()
			if done || stopped.Load() {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		close(drained)
	}()
	select {
	case <-drained:
	case <-parked:
	}
	<-drained
	if !stopped.Load() {
		// The last waiter may still be releasing.
		for w := 0; w < 200; w++ {
			if cur, err := totalWatches(ctx, connect); err == nil && cur == watches0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	res.ChainTime = time.Since(start)
	n1, err := notifications(ctx, connect)
	if err != nil {
		return nil, err
	}
	res.Notifications = n1 - n0
	res.WatchesAfter = -1
	if !stopped.Load() {
		if w, err := totalWatches(ctx, connect); err == nil {
			res.WatchesAfter = w - watches0
		}
	}

	mu.Lock()
	defer mu.Unlock()
	res.Handoffs = len(order)
	res.Errors = len(errs)
	if len(errs) > 0 {
		res.FirstErr = errs[0].Error()
	}
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			res.OutOfOrd++
		}
	}
	res.FIFO = res.OutOfOrd == 0
	return res, nil
}
