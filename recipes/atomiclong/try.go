package atomiclong

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

// releaseBound bounds the release of the promoted lock after the caller's
// ctx has ended.
const releaseBound = 10 * time.Second

// trySet is Curator's DistributedAtomicValue.trySet: optimistic tries
// under the policy, then, if they all lost and a promoted lock is set, more
// tries under that lock.
func (l *Long) trySet(ctx context.Context, next func(int64) int64) (Result, error) {
	if err := l.check(); err != nil {
		return Result{}, err
	}
	var res Result
	start := time.Now()
	err := l.tries(ctx, next, l.policy, &res, &res.Stats.OptimisticTries)
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
	held, err := l.lock.m.TryAcquire(ctx, l.lock.maxWait)
	if err != nil || !held {
		return err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseBound)
		defer cancel()
		if err := l.lock.m.Release(rctx); err != nil {
			l.client.Logger().Warn("atomiclong: release promoted lock", "path", l.lock.path, "err", err)
		}
	}()
	return l.tries(ctx, next, l.lock.policy, res, &res.Stats.PromotedLockTries)
}

// tries runs read + compare-and-set until one wins, policy refuses another
// try, an error that is not a lost race happens, or ctx ends. The policy
// decides whether to try again; the sleep between tries is contention's
// (see backoff), not the policy's.
func (l *Long) tries(ctx context.Context, next func(int64) int64, policy retry.Policy, res *Result, count *int) error {
	start := time.Now()
	var b backoff
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
			return err
		}
		if ok {
			res.Succeeded, res.PostValue = true, nv
			return nil
		}
		res.PostValue = v
		b.lost(time.Since(t0), version(stat))
		if _, again := policy.AllowRetry(n, time.Since(start)); !again {
			return nil
		}
		if err := retry.Sleep(ctx, b.sleep()); err != nil {
			return err
		}
	}
}

func version(stat *zk.Stat) int32 {
	if stat == nil {
		return -1
	}
	return stat.Version
}

// Bounds of the backoff's base, the duration of one try.
const (
	minBase   = 50 * time.Microsecond
	maxBase   = 20 * time.Millisecond
	maxWindow = time.Second
	maxGrowth = 128 // the window grows to at most this many bases
)

// backoff spaces the tries of one operation that keeps losing races. A lost
// race means another writer won, so the counter moved on; sleeping long
// helps no one. The sleep is uniform in [0, window) (full jitter). The
// window starts at the duration of one try (about two round trips), doubles
// with each lost race up to maxGrowth tries, and is at least one try per
// other writer seen between this operation's reads, so a crowd spreads
// over a window as wide as itself.
type backoff struct {
	base, window time.Duration
	ver          int32
	seen         bool
}

// lost records a lost race: the try took took, after reading version ver.
func (b *backoff) lost(took time.Duration, ver int32) {
	if b.base == 0 {
		b.base = min(max(took, minBase), maxBase)
		b.window = b.base
	} else {
		b.window *= 2
	}
	if b.seen && ver > b.ver {
		// Others wrote ver-b.ver times since our last read.
		b.window = max(b.window, b.base*time.Duration(ver-b.ver))
	}
	b.window = min(b.window, b.base*maxGrowth, maxWindow)
	b.ver, b.seen = ver, true
}

// sleep returns the next sleep.
func (b *backoff) sleep() time.Duration {
	if b.window <= 0 {
		return 0
	}
	return rand.N(b.window)
}
