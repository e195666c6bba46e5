package atomiccore

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

// trySet is Curator's DistributedAtomicValue.trySet: optimistic tries
// under the policy, then, if they lost and a promoted lock is set, more
// tries under that lock. With a lock, the optimistic tries stop at the
// first lost race: the operation queues instead of sleeping.
func (l *Core[T]) trySet(ctx context.Context, next func(T) T) (Result[T], error) {
	var res Result[T]
	if l.lock == nil || !l.turns.takeQueue() {
		start := time.Now()
		err := l.tries(ctx, next, l.policy, &res, &res.Stats.OptimisticTries, true)
		res.Stats.OptimisticTime = time.Since(start)
		if err != nil || res.Succeeded || l.lock == nil {
			return res, err
		}
	}
	start := time.Now()
	err := l.promoted(ctx, next, &res)
	res.Stats.PromotedLockTime = time.Since(start)
	return res, err
}

// promoted takes the promoted lock, waiting at most its maxWait (or as
// long as ctx allows), and makes its tries under it. Not getting the lock
// in time is a failed Result, not an error. A failed release is logged,
// not returned: the mutex deletes its node in the background, and an error
// here would invite the caller to repeat an increment that happened.
func (l *Core[T]) promoted(ctx context.Context, next func(T) T, res *Result[T]) error {
	var h *mutex.Hold
	if l.lock.maxWait < 0 {
		var err error
		if h, err = l.lock.m.Acquire(ctx); err != nil {
			return err
		}
	} else {
		var held bool
		var err error
		if h, held, err = l.lock.m.TryAcquire(ctx, l.lock.maxWait); err != nil || !held {
			return err
		}
	}
	defer func() {
		rctx, cancel := recipe.Detached(ctx)
		defer cancel()
		if err := h.Release(rctx); err != nil {
			l.client.Logger().Warn(l.errs.Prefix+": release promoted lock", "path", l.lock.path, "err", err)
		}
	}()
	return l.tries(ctx, next, l.lock.policy, res, &res.Stats.PromotedLockTries, false)
}

// tries runs compare-and-set tries until one wins, policy refuses another
// try (a nil policy never does), an error that is not a lost race happens,
// or ctx ends. A write with an unknown outcome (ErrIndeterminate) ends the
// tries with its error: it is not a lost race, and trying again could
// apply the change twice. The policy decides whether to try again; the
// waits between tries are the contention's (see contention), not the
// policy's. With a promoted lock, the optimistic tries end at the first
// lost race, and the operation queues for the lock. Under the lock
// (optimistic false) every try reads first, lets a streak of another
// writer finish (awaitStreak), and only a jitter of up to half a try
// separates the tries.
func (l *Core[T]) tries(ctx context.Context, next func(T) T, policy retry.Policy, res *Result[T], count *int, optimistic bool) error {
	start := time.Now()
	wait := func(d time.Duration) error { return retry.Sleep(ctx, d) }
	c := &l.turns
	yielded := int32(-1) // the version this operation yielded at
	if optimistic {
		d, v := c.pause()
		if err := wait(d); err != nil {
			return err
		}
		yielded = v
	}
	// An optimistic operation that sleeps after lost races: sleeps is how
	// many; woke whether it has just woken from one; seen the version its
	// last write tried; and looked the version and time of its last read.
	sleeps, woke, seen := 0, false, int32(-1)
	var looked int32
	var lookedAt time.Time
	for n := 0; ; {
		t0 := time.Now()
		var v T
		var stat *zk.Stat
		cached := false
		if n == 0 && optimistic {
			v, stat, cached = c.last(t0)
		}
		if !cached {
			var err error
			if v, stat, err = l.read(ctx); err != nil {
				return err
			}
			if n == 0 && yielded >= 0 && stat != nil && stat.Version == yielded {
				c.unused(t0) // no one took the turn
			}
			if !optimistic && c.queuedRead(stat, t0) {
				// Another writer has written since this Core's last
				// write and is likely on the streak that began when it
				// released the lock: let it finish, then write.
				if v, stat, err = l.awaitStreak(ctx, v, stat); err != nil {
					return err
				}
			}
		}
		if woke && c.streaking(seen, looked, lookedAt, stat, t0) {
			// Another Core is on a streak too short to yield: a write now
			// would lose, or win by chance and cut the streak short, which
			// makes two slow operations. Sleep on.
			looked, lookedAt = stat.Version, t0
			if _, again := policy.AllowRetry(n, time.Since(start)); !again {
				res.PreValue, res.PostValue = v, v
				return nil
			}
			if err := wait(c.sleep(sleeps)); err != nil {
				return err
			}
			sleeps++
			continue
		}
		*count++
		res.PreValue = v
		nv := next(v)
		ns, ok, err := l.write(ctx, stat, nv)
		if err != nil {
			c.lost()
			if errors.Is(err, ErrIndeterminate) {
				res.PostValue = nv // what the write may have stored
			}
			return err
		}
		now := time.Now()
		if ok {
			res.Succeeded, res.PostValue = true, nv
			c.won(nv, ns, now, now.Sub(t0))
			return nil
		}
		res.PostValue = v
		c.lost()
		c.contended(now)
		if stat != nil {
			seen, looked, lookedAt = stat.Version, stat.Version, t0
		}
		if policy != nil {
			if _, again := policy.AllowRetry(n, now.Sub(start)); !again {
				return nil
			}
		}
		if optimistic && l.lock != nil {
			return nil // queue for the promoted lock instead of sleeping
		}
		d := c.quick()
		quick := n == 0 || woke
		woke = false
		if optimistic && quick {
			d = c.quick()
		} else if optimistic {
			d = c.sleep(sleeps)
			sleeps++
			woke = stat != nil
		}
		if err := wait(d); err != nil {
			return err
		}
		n++
	}
}

// streaking reports, at now, whether stat shows another writer on a
// streak that has not reached yieldStreak versions since this operation's
// last write tried version seen, and that writes back to back: at least
// one version per four tries since the operation looked at version looked
// at lookedAt. A writer that is not hot, or a node no one writes, gets a
// try.
func (c *contention[T]) streaking(seen, looked int32, lookedAt time.Time, stat *zk.Stat, now time.Time) bool {
	if seen < 0 || stat == nil || stat.Version <= looked || stat.Version-seen >= yieldStreak {
		return false
	}
	hot := time.Duration(stat.Version-looked) * 4 * c.tryOr1ms()
	return hot >= now.Sub(lookedAt)
}

// The shape of the waits; see contention.
const (
	maxLatency = 10 * time.Second
	smoothing  = 8                     // the usual try is a moving average over about this many
	fresh      = 10 * time.Millisecond // how long a Core writes on its last write without reading
	sleepTries = 200                   // a waiter's first sleep, in tries...
	minSleep   = 50 * time.Millisecond // ...but at least this
	maxSleep   = 500 * time.Millisecond
	sleepCap   = 8 // a sleep doubles up to this many first sleeps
	yieldTries = 3 // a yield lasts this many (one-request) tries: a waiter's retry is a read and a write
	// quietAfterYield is how long a Core does not yield after a yield that
	// no one took.
	quietAfterYield = 20 * time.Millisecond
	// yieldStreak is how many operations a Core wins in a row before it
	// may yield: each hand-over makes about two slow operations (the
	// waiter's, and the next of the Core that yielded, which loses and
	// sleeps), so hand-overs stay under 1 % of the operations.
	yieldStreak = 512
	// With a promoted lock, a Core that met another writer within
	// contendedFor queues its next operation after queuedStreak wins in a
	// row.
	queuedStreak = 16
	// streakChecks is how many reads the lock's holder makes over one
	// streak of the writer before it (see awaitStreak); twice as many at
	// most, if that writer's tries are slower than the holder's.
	streakChecks = 4
	contendedFor = 500 * time.Millisecond
	// gapContendedFor is how long after the last contention a gap in the
	// zxids between two of a streak's writes counts as contention.
	gapContendedFor = 10 * contendedFor
)

// contention is what the operations of one Core share, to take turns with
// other writers of the node: the value and version of this Core's last
// write, while fresh, so that the next operation can write without
// reading; a moving average of the duration of one try; and when the next
// operation yields.
//
// The turns work like Curator's: the writer that wins keeps writing, and
// the writers that lose sleep, so that most operations end in one try.
// Three things differ. The winner writes at the version of its own last
// write, one request instead of a read and a write, while that write is
// fresh. It yields: a lost race is a transaction too, so another writer's
// request between two of its writes shows as a gap in the node's
// modification zxids, and then, once it has won yieldStreak operations in
// a row, its next operation pauses for yieldTries of its tries (a waiter's
// retry is a read and a write) and reads. And a waiter retries at once
// (after a jitter of up to half a try) after its first lost race and
// after the first lost race that follows each sleep, which lands in that
// pause; after the second it sleeps. The sleeps are sleepTries tries long
// (clamped to minSleep..maxSleep), random between half and all of that,
// and double after each, up to sleepCap times the first. A yield that no
// one took (the version read after the pause is still the Core's own)
// stops the yields for quietAfterYield, so that a lone writer on an
// ensemble busy with other work, whose zxids have gaps anyway, rarely
// pauses. A waiter that wakes reads, and sleeps on without writing while
// another writer is on a streak too short to yield (see streaking).
//
// That is a Core without a promoted lock. With one (queued), a loser does
// not sleep: it queues for the lock at its first lost race, and the lock's
// holder retries at once. The winner does not pause either: once it has
// met another writer in the last contendedFor (a lost race, or another's
// write found under the lock) and then won queuedStreak operations in a
// row, its next operation queues behind the others, so the lock's holder
// writes uncontested and goes on to win its own streak. Each writer then
// gets, per round of the queue, one operation under the lock and a streak
// of up to queuedStreak written on its own last write. The lock's holder
// lets the streak of the writer before it finish: when its first read
// finds another writer's streak under way (queuedRead), it reads every
// quarter streak until that streak is over (awaitStreak), then writes;
// spinning instead costs two requests a try, through the server's log.
type contention[T any] struct {
	mu      sync.Mutex
	try     time.Duration
	fast    time.Duration // like try, but down at once to a faster try
	ok      bool          // value, version, mzxid and at are this Core's last write
	value   T
	version int32
	mzxid   int64
	at      time.Time
	yield   bool // the next operation pauses first
	streak  int  // operations that won since this Core last lost a race
	// quietUntil is when the Core may yield again after a yield no one
	// took.
	quietUntil time.Time
	// queued is set, before first use, for a Core with a promoted lock.
	// contendedAt is when this Core last met another writer: a lost race,
	// or a read under the lock that found another's write since its own.
	// queueNext sends the next operation to the lock's queue.
	queued, queueNext bool
	contendedAt       time.Time
}

// contended records, at now, a race lost to another writer.
func (c *contention[T]) contended(now time.Time) {
	c.mu.Lock()
	c.contendedAt = now
	c.mu.Unlock()
}

// queuedRead records, at now, the stat an operation read under the
// promoted lock: another writer's version since this Core's own last write
// is contention. It reports whether another writer has written at least
// twice since then, which is a streak under way.
func (c *contention[T]) queuedRead(stat *zk.Stat, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if stat != nil && stat.Version != c.version {
		c.contendedAt = now
	}
	return stat != nil && stat.Version-c.version >= 2
}

// takeQueue reports whether the next operation goes straight to the
// promoted lock's queue, and clears the request.
func (c *contention[T]) takeQueue() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queueNext
	c.queueNext = false
	return q
}

// pause returns how long a new operation waits before its first try: a
// yield of yieldTries tries if other writers' requests reached the server
// between this Core's last two writes. It returns the version of the last
// write the yield follows, or -1 without a yield.
func (c *contention[T]) pause() (time.Duration, int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.yield {
		return 0, -1
	}
	c.yield, c.ok = false, false
	return yieldTries * c.try, c.version
}

// unused records, at now, a yield that no one took: the zxids' gaps were
// other work on the server, or a waiter that had gone back to sleep. The
// Core does not yield again for quietAfterYield.
func (c *contention[T]) unused(now time.Time) {
	c.mu.Lock()
	c.quietUntil = now.Add(quietAfterYield)
	c.mu.Unlock()
}

// last returns the value and version of this Core's last write if it is
// fresh at now, for a write without a read.
func (c *contention[T]) last(now time.Time) (T, *zk.Stat, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ok || now.Sub(c.at) > fresh {
		var zero T
		return zero, nil, false
	}
	return c.value, &zk.Stat{Version: c.version}, true
}

// won records a write of v at now, which made the node's stat ns and
// whose try took try.
func (c *contention[T]) won(v T, ns *zk.Stat, now time.Time, try time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.try += (min(try, maxLatency) - c.try) / smoothing
	if c.fast <= 0 || try < c.fast {
		c.fast = try
	} else {
		c.fast += (min(try, maxLatency) - c.fast) / smoothing
	}
	c.streak++
	gap := c.ok && ns.Version == c.version+1 && c.mzxid > 0 && ns.Mzxid > c.mzxid+1
	switch {
	case c.queued:
		// Others wait in the lock's queue: after a few wins, queue
		// behind them. A request of another writer between two of our
		// writes (the lock's holder losing to this streak, say) is
		// contention too, if there was some lately: a streak slower
		// than contendedFor must still end, and a lone writer on a busy
		// ensemble, whose zxids have gaps anyway, must not queue.
		if gap && now.Sub(c.contendedAt) < gapContendedFor {
			c.contendedAt = now
		}
		if c.streak >= queuedStreak && now.Sub(c.contendedAt) < contendedFor {
			c.queueNext, c.streak = true, 0
		}
	case gap && c.streak >= yieldStreak && !now.Before(c.quietUntil):
		c.yield, c.streak = true, 0
	}
	c.ok, c.value, c.version, c.mzxid, c.at = true, v, ns.Version, ns.Mzxid, now
}

// lost records a lost race, or an error: the last write is stale.
func (c *contention[T]) lost() {
	c.mu.Lock()
	c.ok, c.streak = false, 0
	c.mu.Unlock()
}

// quick returns the wait before a retry at once: a jitter of up to half a
// try.
func (c *contention[T]) quick() time.Duration {
	return rand.N(c.tryOr1ms()/2 + 1)
}

// awaitStreak lets the streak of another writer finish before the
// promoted lock's holder writes: the writer that held the lock before
// writes on after its release, up to queuedStreak operations, and queues
// again. stat is the holder's first read, v its value. The holder reads
// every quarter streak (by the streak's pace, or at first by its own
// fastest recent tries) until the node's version
// is a streak past that read, or stops moving (the streak ended early), or
// is gone; it returns the last read. Reads are cheap for the server next
// to writes, which go through its log: a write that loses to the streak
// costs more than the reads.
func (l *Core[T]) awaitStreak(ctx context.Context, v T, stat *zk.Stat) (T, *zk.Stat, error) {
	c := &l.turns
	// The streak is queuedStreak wins counting the previous holder's own
	// write under the lock, and has usually written once or twice since
	// its release by the time of this read.
	target := stat.Version + queuedStreak - 2
	step := int32(max(queuedStreak/streakChecks, 1))
	fast := c.fastTry()
	pace := fast // one version of the streak, until measured
	last := time.Now()
	for range 2 * streakChecks {
		if stat.Version >= target {
			break
		}
		if err := retry.Sleep(ctx, time.Duration(min(target-stat.Version, step))*pace); err != nil {
			return v, stat, err
		}
		prev := stat.Version
		nv, ns, err := l.read(ctx)
		if err != nil {
			return v, stat, err
		}
		v, stat = nv, ns
		if stat == nil || stat.Version <= prev {
			break
		}
		now := time.Now()
		// A stall of the other writer (or of this process) would make
		// the pace, and the next wait, long: a read is cheaper than an
		// idle lock.
		pace = min(now.Sub(last)/time.Duration(stat.Version-prev), 2*fast)
		last = now
	}
	return v, stat, nil
}

// sleep returns the sth sleep (from 0) of an operation.
func (c *contention[T]) sleep(s int) time.Duration {
	base := min(max(sleepTries*c.tryOr1ms(), minSleep), maxSleep)
	w := base * time.Duration(min(1<<min(s, 30), sleepCap))
	return w/2 + rand.N(w/2+1)
}

// fastTry returns the usual try's length, taken down at once by a fast
// try and up slowly by slow ones, so that a stall on the server does not
// stretch the holder's waits for long; 1 ms before any try.
func (c *contention[T]) fastTry() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fast <= 0 {
		return time.Millisecond
	}
	return c.fast
}

func (c *contention[T]) tryOr1ms() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.try <= 0 {
		return time.Millisecond
	}
	return c.try
}
