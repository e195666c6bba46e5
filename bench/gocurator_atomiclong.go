package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-curator/curator/recipes/atomiclong"
)

func init() {
	goRunners[kindAtomicLong] = goAtomicLong
	delete(goMissing, kindAtomicLong)
}

// goAtomicLong runs recipes/atomiclong: each worker increments with its own
// client and Long, under the client's retry policy and with the Long's
// defaults (its promoted lock's queue at the counter's path plus "-lock",
// joined at a lost race), as the Curator peer runs DistributedAtomicLong
// with its defaults (no promotion).
func goAtomicLong(ctx context.Context, s spec) (*Result, error) {
	cs, err := newCurators(ctx, s.connect, s.clients)
	if err != nil {
		return nil, err
	}
	defer closeCurators(cs)
	var tries, calls, maxTries, slowest, promoted atomic.Int64
	perClient := make([]atomic.Int64, len(cs))
	steps := make([]step, len(cs))
	for i, c := range cs {
		l, err := atomiclong.New(c, s.path, c.RetryPolicy())
		if err != nil {
			return nil, err
		}
		steps[i] = func(ctx context.Context, t *tally) error {
			// The increment is never cut short by the end of the window,
			// so that every success is counted and the final value checks.
			start := time.Now()
			res, err := l.Increment(context.WithoutCancel(ctx))
			end := time.Now()
			if err != nil {
				return err
			}
			t.attempt(end)
			if !end.Before(t.t0) {
				// The call ended inside the window or after it (the last
				// call of each worker): what a caller waited.
				d := int64(end.Sub(start))
				for m := slowest.Load(); d > m && !slowest.CompareAndSwap(m, d); m = slowest.Load() {
				}
			}
			if t.inWindow(end) {
				n := int64(res.Stats.OptimisticTries + res.Stats.PromotedLockTries)
				tries.Add(n)
				calls.Add(1)
				if res.Stats.PromotedLockTries > 0 {
					promoted.Add(1)
				}
				for m := maxTries.Load(); n > m && !maxTries.CompareAndSwap(m, n); m = maxTries.Load() {
				}
			}
			if res.Succeeded {
				t.totalOK.Add(1)
				t.record(start, end)
				if t.inWindow(end) {
					perClient[i].Add(1)
				}
			}
			return nil
		}
	}
	r := measure(ctx, s, steps)
	for i := range perClient {
		r.PerClient = append(r.PerClient, perClient[i].Load())
	}
	r.Slowest = time.Duration(slowest.Load())
	n, err := readInt(ctx, cs[0], s.path, 8)
	if err != nil {
		return nil, err
	}
	r.Final = &n
	if c := calls.Load(); c > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("tries per increment: mean %.1f, max %d; %.0f%% of the calls through the promoted lock",
			float64(tries.Load())/float64(c), maxTries.Load(), 100*float64(promoted.Load())/float64(c)))
	}
	return r, nil
}
