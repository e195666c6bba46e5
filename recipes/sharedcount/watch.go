package sharedcount

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

// Bounds of the wait before the loop tries again after a failed read.
const (
	minRetryWait = 50 * time.Millisecond
	maxRetryWait = 5 * time.Second
	// refreshWait bounds how long a lost TrySetCount waits for the watch
	// loop to read the winner's value before it reads it itself.
	refreshWait = 100 * time.Millisecond
)

// run is the watch loop: it re-reads the node and sets a new watch after
// every watch event (a change, a deletion, or the end of the session that
// held the watch) and after every Reconnected. A failed read is tried
// again after a growing wait, or at the next Reconnected. It ends at Close,
// or when the client closes.
func (s *shared[T]) run(watch <-chan zk.Event) {
	defer close(s.done)
	ctx := s.ctx
	var (
		retryC <-chan time.Time
		timer  *time.Timer
		wait   = minRetryWait
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-watch:
			watch = nil
		case <-s.reread:
		case <-retryC:
			retryC = nil
		}
		var err error
		watch, err = s.refresh(ctx, watch)
		retryable := framework.IsRetryable(err)
		switch {
		case err == nil:
			wait = minRetryWait
			if timer != nil {
				timer.Stop()
			}
			retryC = nil
			continue
		case ctx.Err() != nil || errors.Is(err, framework.ErrClosed):
			return
		case !retryable:
			s.report(err)
		}
		// Corrupt data under a live watch waits for the next change;
		// anything else is read again later.
		if (watch == nil || retryable) && retryC == nil {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			retryC = timer.C
			wait = min(2*wait, maxRetryWait)
		}
	}
}

// refresh reads the node into the cache. With no live watch it sets one: a
// data watch, or an existence watch if the node is gone, so that its
// re-creation is seen. It returns the live watch, which may be non-nil
// along with an error (corrupt data is watched until it changes).
func (s *shared[T]) refresh(ctx context.Context, watch <-chan zk.Event) (<-chan zk.Event, error) {
	if watch != nil {
		data, stat, err := s.client.GetData().ForPath(ctx, s.path)
		if errors.Is(err, zk.ErrNoNode) {
			return watch, nil // the live watch reports the deletion
		}
		if err != nil {
			return watch, err
		}
		return watch, s.store(data, stat)
	}
	for {
		data, stat, w, err := s.client.GetData().ForPathW(ctx, s.path)
		if err == nil {
			return w, s.store(data, stat)
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return nil, err
		}
		stat, w, err = s.client.CheckExists().ForPathW(ctx, s.path)
		if err != nil {
			return nil, err
		}
		if stat == nil {
			return w, nil // watch for the node's re-creation
		}
		// Created in between: its existence watch fires soon and is
		// harmless; read it now.
	}
}

// store decodes data and caches it unless the cache is newer.
func (s *shared[T]) store(data []byte, stat *zk.Stat) error {
	v, err := s.codec.decode(s.path, data)
	if err != nil {
		return err
	}
	s.update(v, stat)
	return nil
}

// readNow reads the node without a watch and caches it. A missing node is
// not an error: the loop's watch reports it.
func (s *shared[T]) readNow(ctx context.Context) error {
	data, stat, err := s.client.GetData().ForPath(ctx, s.path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "sharedcount: read %s: %w", s.path, err)
	}
	return s.store(data, stat)
}

// set writes v whatever the node's version, and caches it.
func (s *shared[T]) set(ctx context.Context, v T) error {
	if err := s.usable(); err != nil {
		return err
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	v = s.codec.clone(v)
	stat, err := s.client.SetData().ForPath(ctx, s.path, s.codec.encode(v))
	if err != nil {
		// An ErrIndeterminate passes through wrapped: the value may or may
		// not be v now, and the watch loop will tell.
		return recipe.Wrapf(ErrInvalidArgument, "sharedcount: set %s: %w", s.path, err)
	}
	s.update(v, stat)
	return nil
}

// trySet writes v only if the node is still at prev's version. It returns
// false without a round trip if prev is older than the cache, false after
// refreshing the cache if another writer got there first, and an error
// matching ErrIndeterminate if the write's outcome is unknown.
func (s *shared[T]) trySet(ctx context.Context, prev VersionedValue[T], v T) (bool, error) {
	if err := s.usable(); err != nil {
		return false, err
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return false, err
	}
	if prev.Version == -1 {
		// ZooKeeper wraps the version after math.MaxInt32, and servers
		// without ZOOKEEPER-4743 reach -1, which means "any version": a
		// compare-and-set there would be a blind write. Curator throws
		// IllegalTrySetVersionException.
		return false, fmt.Errorf("%w: %s (use a blind set, or upgrade ZooKeeper)", ErrVersionOverflow, s.path)
	}
	s.mu.Lock()
	stale := prev.Mzxid < s.cur.Mzxid
	s.mu.Unlock()
	if stale {
		return false, nil
	}
	v = s.codec.clone(v)
	t0 := time.Now()
	stat, err := s.client.SetData().WithVersion(prev.Version).ForPath(ctx, s.path, s.codec.encode(v))
	switch {
	case err == nil:
		s.update(v, stat)
		return true, nil
	case errors.Is(err, ErrIndeterminate):
		// Checked first: a retry that met our own first attempt's write
		// wraps BadVersion too. Reporting false would invite the caller
		// to apply its change again. The watch loop brings the value.
		return false, recipe.Wrapf(ErrInvalidArgument, "sharedcount: set %s: %w", s.path, err)
	case errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoNode):
		// Another writer won. Spread out from the other losers, then let
		// the watch loop bring the winner's value, or read it here if
		// that takes too long.
		if err := retry.Sleep(ctx, recipe.Jitter(time.Since(t0), maxJitter)); err != nil {
			return false, err
		}
		if s.waitNewer(ctx, prev.Mzxid, refreshWait) {
			return false, nil
		}
		return false, s.readNow(ctx)
	}
	return false, recipe.Wrapf(ErrInvalidArgument, "sharedcount: set %s: %w", s.path, err)
}
