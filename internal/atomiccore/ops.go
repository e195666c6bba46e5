package atomiccore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// Get reads the value; a missing node reads as the zero T (the codec's
// reading of no data for a node without data).
func (l *Core[T]) Get(ctx context.Context) (Result[T], error) {
	v, _, err := l.read(ctx)
	if err != nil {
		return Result[T]{}, err
	}
	return Result[T]{Succeeded: true, PreValue: v, PostValue: v}, nil
}

// TrySet stores next(the current value) with compare-and-set tries, under
// the optimistic policy and then the promoted lock, if any. Callers check
// ctx and c with Check first.
func (l *Core[T]) TrySet(ctx context.Context, next func(T) T) (Result[T], error) {
	return l.trySet(ctx, next)
}

// ForceSet writes n whatever the current value, creating the node if it
// is missing.
func (l *Core[T]) ForceSet(ctx context.Context, n T) error {
	data := l.codec.Encode(n)
	// The writes are blind and absolute, so an indeterminate outcome needs
	// no care here: a missing node is created, and an existing one (made
	// by another writer, or by our own create whose reply was lost) set.
	_, err := l.client.SetData().ForPath(ctx, l.path, data)
	if errors.Is(err, zk.ErrNoNode) {
		_, err = l.client.Create().CreatingParentContainersIfNeeded().ForPath(ctx, l.path, data)
		if errors.Is(err, zk.ErrNodeExists) {
			_, err = l.client.SetData().ForPath(ctx, l.path, data)
		}
	}
	if err != nil {
		return recipe.Wrapf(l.errs.Invalid, "%s: force set %s: %w", l.errs.Prefix, l.path, err)
	}
	return nil
}

// CompareAndSet sets the value to n if it equals expected (by the codec's
// Equal), in one try. A missing node never matches.
func (l *Core[T]) CompareAndSet(ctx context.Context, expected, n T) (Result[T], error) {
	start := time.Now()
	res := Result[T]{Stats: Stats{OptimisticTries: 1}}
	v, stat, err := l.read(ctx)
	if err != nil {
		return Result[T]{}, err
	}
	res.PreValue, res.PostValue = v, v
	if stat != nil && l.codec.Equal(v, expected) {
		_, ok, err := l.write(ctx, stat, n)
		if errors.Is(err, ErrIndeterminate) {
			res.PostValue = n
			res.Stats.OptimisticTime = time.Since(start)
			return res, err
		}
		if err != nil {
			return Result[T]{}, err
		}
		if ok {
			res.Succeeded, res.PostValue = true, n
		}
	}
	res.Stats.OptimisticTime = time.Since(start)
	return res, nil
}

// Initialize creates the node with the value n if it does not exist, and
// reports whether it did.
func (l *Core[T]) Initialize(ctx context.Context, n T) (bool, error) {
	_, err := l.client.Create().CreatingParentContainersIfNeeded().ForPath(ctx, l.path, l.codec.Encode(n))
	if errors.Is(err, zk.ErrNodeExists) && !errors.Is(err, ErrIndeterminate) {
		return false, nil
	}
	if err != nil {
		return false, recipe.Wrapf(l.errs.Invalid, "%s: initialize %s: %w", l.errs.Prefix, l.path, err)
	}
	return true, nil
}

// read returns the value and the node's stat, or the zero T and a nil
// stat if the node is missing.
func (l *Core[T]) read(ctx context.Context) (T, *zk.Stat, error) {
	var zero T
	data, stat, err := l.client.GetData().ForPath(ctx, l.path)
	if errors.Is(err, zk.ErrNoNode) {
		return zero, nil, nil
	}
	if err != nil {
		return zero, nil, recipe.Wrapf(l.errs.Invalid, "%s: read %s: %w", l.errs.Prefix, l.path, err)
	}
	v, err := l.codec.Decode(l.path, data)
	if err != nil {
		return zero, nil, err
	}
	return v, stat, nil
}

// write stores n: a create if stat is nil, else a set at stat's version.
// It returns the node's new stat (a zero stat of version 0 after a
// create) and true, false without an error if another writer got there
// first, or an error matching ErrIndeterminate if the outcome is unknown.
func (l *Core[T]) write(ctx context.Context, stat *zk.Stat, n T) (*zk.Stat, bool, error) {
	var err error
	var ns *zk.Stat
	if stat == nil {
		_, err = l.client.Create().CreatingParentContainersIfNeeded().ForPath(ctx, l.path, l.codec.Encode(n))
		ns = &zk.Stat{}
	} else {
		if stat.Version == -1 {
			// The version wrapped after math.MaxInt32 on a server without
			// ZOOKEEPER-4743: a set at -1 would be a blind write.
			return nil, false, fmt.Errorf("%w: %s (use ForceSet, or upgrade ZooKeeper)", l.errs.Overflow, l.path)
		}
		ns, err = l.client.SetData().WithVersion(stat.Version).ForPath(ctx, l.path, l.codec.Encode(n))
	}
	switch {
	case err == nil:
		return ns, true, nil
	case errors.Is(err, ErrIndeterminate):
		// Checked first: a retry that met our own first attempt's effect
		// wraps BadVersion or NodeExists too, and must not read as a lost
		// race, or the caller's next try would apply the change again.
		return nil, false, recipe.Wrapf(l.errs.Invalid, "%s: write %s: %w", l.errs.Prefix, l.path, err)
	case errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoNode):
		return nil, false, nil
	}
	return nil, false, recipe.Wrapf(l.errs.Invalid, "%s: write %s: %w", l.errs.Prefix, l.path, err)
}
