package atomiclong

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// Get reads the value; a missing node reads as 0. Its Result always
// succeeds, with PreValue == PostValue.
func (l *Long) Get(ctx context.Context) (Result, error) {
	if err := l.check(ctx); err != nil {
		return Result{}, err
	}
	v, _, err := l.read(ctx)
	if err != nil {
		return Result{}, err
	}
	return Result{Succeeded: true, PreValue: v, PostValue: v}, nil
}

// Increment adds 1; see Add.
func (l *Long) Increment(ctx context.Context) (Result, error) { return l.Add(ctx, 1) }

// Decrement subtracts 1; see Add.
func (l *Long) Decrement(ctx context.Context) (Result, error) { return l.Add(ctx, -1) }

// Add adds delta with a compare-and-set, creating the node if it is
// missing, under the optimistic policy and then the promoted lock, if any.
// Arithmetic wraps around, as Java's long does in Curator. Succeeded is
// false, without an error, when every try lost to another writer; with
// the default promoted lock that does not happen: a loser queues and
// tries until a write wins, or returns ctx's error. If the
// connection was lost before a write's reply, Add stops there with an
// error matching ErrIndeterminate: the addition may or may not have
// happened (once at most), and the Result holds the values of that write.
func (l *Long) Add(ctx context.Context, delta int64) (Result, error) {
	return l.trySet(ctx, func(prev int64) int64 { return prev + delta })
}

// Subtract subtracts delta; see Add.
func (l *Long) Subtract(ctx context.Context, delta int64) (Result, error) {
	return l.trySet(ctx, func(prev int64) int64 { return prev - delta })
}

// TrySet sets the value to n with a compare-and-set, like Add.
func (l *Long) TrySet(ctx context.Context, n int64) (Result, error) {
	return l.trySet(ctx, func(int64) int64 { return n })
}

// ForceSet writes n whatever the current value, creating the node if it
// is missing. It has no atomicity guarantee. An error matching
// ErrIndeterminate means the value may or may not be n; ForceSet writes an
// absolute value, so calling it again is safe.
func (l *Long) ForceSet(ctx context.Context, n int64) error {
	if err := l.check(ctx); err != nil {
		return err
	}
	data := encode(n)
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
		return recipe.Wrapf(ErrInvalidArgument, "atomiclong: force set %s: %w", l.path, err)
	}
	return nil
}

// CompareAndSet sets the value to n if it is expected, in one try. A
// missing node never matches: call Initialize first. (Unlike Curator,
// which compares bytes, an existing node with no data matches 0.) If the
// connection was lost before the write's reply, the error matches
// ErrIndeterminate: the value may or may not be n now.
func (l *Long) CompareAndSet(ctx context.Context, expected, n int64) (Result, error) {
	if err := l.check(ctx); err != nil {
		return Result{}, err
	}
	start := time.Now()
	res := Result{Stats: Stats{OptimisticTries: 1}}
	v, stat, err := l.read(ctx)
	if err != nil {
		return Result{}, err
	}
	res.PreValue, res.PostValue = v, v
	if stat != nil && v == expected {
		_, ok, err := l.write(ctx, stat, n)
		if errors.Is(err, ErrIndeterminate) {
			res.PostValue = n
			res.Stats.OptimisticTime = time.Since(start)
			return res, err
		}
		if err != nil {
			return Result{}, err
		}
		if ok {
			res.Succeeded, res.PostValue = true, n
		}
	}
	res.Stats.OptimisticTime = time.Since(start)
	return res, nil
}

// Initialize creates the node with the value n if it does not exist. It
// returns false if the node already existed. If the connection was lost
// before the create's reply, the error matches ErrIndeterminate: the node
// exists, or will not, and this call may or may not have created it.
func (l *Long) Initialize(ctx context.Context, n int64) (bool, error) {
	if err := l.check(ctx); err != nil {
		return false, err
	}
	_, err := l.client.Create().CreatingParentContainersIfNeeded().ForPath(ctx, l.path, encode(n))
	if errors.Is(err, zk.ErrNodeExists) && !errors.Is(err, ErrIndeterminate) {
		return false, nil
	}
	if err != nil {
		return false, recipe.Wrapf(ErrInvalidArgument, "atomiclong: initialize %s: %w", l.path, err)
	}
	return true, nil
}

// read returns the value and the node's stat, or 0 and a nil stat if the
// node is missing.
func (l *Long) read(ctx context.Context) (int64, *zk.Stat, error) {
	data, stat, err := l.client.GetData().ForPath(ctx, l.path)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, recipe.Wrapf(ErrInvalidArgument, "atomiclong: read %s: %w", l.path, err)
	}
	v, err := decode(l.path, data)
	if err != nil {
		return 0, nil, err
	}
	return v, stat, nil
}

// write stores n: a create if stat is nil, else a set at stat's version.
// It returns the node's new stat (a zero stat of version 0 after a
// create) and true, false without an error if another writer got there
// first, or an error matching ErrIndeterminate if the outcome is unknown.
func (l *Long) write(ctx context.Context, stat *zk.Stat, n int64) (*zk.Stat, bool, error) {
	var err error
	var ns *zk.Stat
	if stat == nil {
		_, err = l.client.Create().CreatingParentContainersIfNeeded().ForPath(ctx, l.path, encode(n))
		ns = &zk.Stat{}
	} else {
		if stat.Version == -1 {
			// The version wrapped after math.MaxInt32 on a server without
			// ZOOKEEPER-4743: a set at -1 would be a blind write.
			return nil, false, fmt.Errorf("%w: %s (use ForceSet, or upgrade ZooKeeper)", ErrVersionOverflow, l.path)
		}
		ns, err = l.client.SetData().WithVersion(stat.Version).ForPath(ctx, l.path, encode(n))
	}
	switch {
	case err == nil:
		return ns, true, nil
	case errors.Is(err, ErrIndeterminate):
		// Checked first: a retry that met our own first attempt's effect
		// wraps BadVersion or NodeExists too, and must not read as a lost
		// race, or the caller's next try would apply the change again.
		return nil, false, recipe.Wrapf(ErrInvalidArgument, "atomiclong: write %s: %w", l.path, err)
	case errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrBadVersion), errors.Is(err, zk.ErrNoNode):
		return nil, false, nil
	}
	return nil, false, recipe.Wrapf(ErrInvalidArgument, "atomiclong: write %s: %w", l.path, err)
}
