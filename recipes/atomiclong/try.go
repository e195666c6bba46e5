package atomiclong

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/retry"
)

// trySet is Curator's DistributedAtomicValue.trySet: optimistic tries
// under the policy, then, if they all lost and a promoted lock is set, more
// tries under that lock.
func (l *Long) trySet(ctx context.Context, next func(int64) int64) (Result, error) {
	if err := l.check(ctx); err != nil {
		return Result{}, err
	}
	var res Result
	start := time.Now()
	err := l.tries(ctx, next, l.policy, &res, &res.Stats.OptimisticTries, true)
	res.Stats.OptimisticTime = time.Since(start)
	if err != nil || res.Succeeded || l.lock == nil {
		return res, err
	}
	start = time.Now()
	err = l.promoted(ctx, next, &res)
	res.Stats.PromotedLockTime = time.Since(start)
	return res, err
}

// promoted takes the promoted lock, waiting at most its maxWait, and makes
// its tries under it. Not getting the lock in time is a failed Result, not
// an error. A failed release is logged, not returned: the mutex deletes its
// node in the background, and an error here would invite the caller to
// repeat an increment that happened.
func (l *Long) promoted(ctx context.Context, next func(int64) int64, res *Result) error {
	h, held, err := l.lock.m.TryAcquire(ctx, l.lock.maxWait)
	if err != nil || !held {
		return err
	}
	defer func() {
		rctx, cancel := recipe.Detached(ctx)
		defer cancel()
		if err := h.Release(rctx); err != nil {
			l.client.Logger().Warn("atomiclong: release promoted lock", "path", l.lock.path, "err", err)
		}
	}()
	return l.tries(ctx, next, l.lock.policy, res, &res.Stats.PromotedLockTries, false)
}

// tries runs read + compare-and-set until one wins, policy refuses another
// try, an error that is not a lost race happens, or ctx ends. A write with
// an unknown outcome (ErrIndeterminate) ends the tries with its error: it
// is not a lost race, and trying again could apply the change twice. The policy
// decides whether to try again; the waits between tries are the
// contention's (see contention), not the policy's. Under the promoted
// lock (gated false) only a short jitter separates the tries.
func (l *Long) tries(ctx context.Context, next func(int64) int64, policy retry.Policy, res *Result, count *int, gated bool) error {
	start := time.Now()
	wait := func(d time.Duration) error { return retry.Sleep(ctx, d) }
	if gated {
		if err := wait(l.turns.gate(start, time.Now())); err != nil {
			return err
		}
	}
	for n := 0; ; n++ {
		t0 := time.Now()
		*count++
		v, stat, err := l.read(ctx)
		if err != nil {
			return err
		}
		res.PreValue = v
		nv := next(v)
		ok, err := l.write(ctx, stat, nv)
		if err != nil {
			if errors.Is(err, ErrIndeterminate) {
				res.PostValue = nv // what the write may have stored
			}
			return err
		}
		if ok {
			res.Succeeded, res.PostValue = true, nv
			if gated {
				l.turns.won(time.Since(start))
			}
			return nil
		}
		res.PostValue = v
		now := time.Now()
		if gated {
			l.turns.lost(now)
		}
		if _, again := policy.AllowRetry(n, now.Sub(start)); !again {
			return nil
		}
		d := recipe.Jitter(now.Sub(t0), maxJitter)
		if gated {
			d = max(d, l.turns.gate(start, now))
		}
		if err := wait(d); err != nil {
			return err
		}
	}
}

// The shape of the waits; see contention.
const (
	gateShare  = 0.7 // an op under contention waits until it is this share of the usual latency old
	smoothing  = 8   // the usual latency is a moving average over about this many ops
	maxJitter  = 20 * time.Millisecond
	maxLatency = 10 * time.Second
)

// contention orders the tries of the operations of one Long by age, so
// that under contention the oldest operation is the one that retries
// first, and no operation starves. It keeps lat, a moving average of the
// latency of the operations, and the time of the last lost race. While
// races are being lost (the last one less than lat ago), an operation does
// not try before it is gateShare*lat old: new operations queue behind old
// ones instead of racing them. An operation past that age retries after a
// random jitter of up to two tries' durations, which spreads the old ones
// out. Without contention nothing waits.
//
// Curator sleeps the policy's sleep instead, typically 100 ms or more: the
// winner of a race keeps winning while the others sleep, which gives high
// throughput but a long tail (seconds, under 16-way contention).
type contention struct {
	mu       sync.Mutex
	lat      time.Duration
	lastLoss time.Time
}

// gate returns how long an operation that started at start should wait at
// now before its next try.
func (c *contention) gate(start, now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastLoss.IsZero() || now.Sub(c.lastLoss) > c.lat {
		return 0
	}
	return time.Duration(gateShare*float64(c.lat)) - now.Sub(start)
}

// lost records a lost race at now.
func (c *contention) lost(now time.Time) {
	c.mu.Lock()
	c.lastLoss = now
	c.mu.Unlock()
}

// won records the latency of a successful operation.
func (c *contention) won(lat time.Duration) {
	lat = min(lat, maxLatency)
	c.mu.Lock()
	c.lat += (lat - c.lat) / smoothing
	c.mu.Unlock()
}
