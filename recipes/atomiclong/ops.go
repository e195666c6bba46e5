package atomiclong

import (
	"context"
)

// Get reads the value; a missing node reads as 0. Its Result always
// succeeds, with PreValue == PostValue.
func (l *Long) Get(ctx context.Context) (Result, error) {
	if err := l.check(ctx); err != nil {
		return Result{}, err
	}
	r, err := l.c.Get(ctx)
	return result(r), err
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

// trySet runs the core's compare-and-set tries.
func (l *Long) trySet(ctx context.Context, next func(int64) int64) (Result, error) {
	if err := l.check(ctx); err != nil {
		return Result{}, err
	}
	r, err := l.c.TrySet(ctx, next)
	return result(r), err
}

// ForceSet writes n whatever the current value, creating the node if it
// is missing. It has no atomicity guarantee. An error matching
// ErrIndeterminate means the value may or may not be n; ForceSet writes an
// absolute value, so calling it again is safe.
func (l *Long) ForceSet(ctx context.Context, n int64) error {
	if err := l.check(ctx); err != nil {
		return err
	}
	return l.c.ForceSet(ctx, n)
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
	r, err := l.c.CompareAndSet(ctx, expected, n)
	return result(r), err
}

// Initialize creates the node with the value n if it does not exist. It
// returns false if the node already existed. If the connection was lost
// before the create's reply, the error matches ErrIndeterminate: the node
// exists, or will not, and this call may or may not have created it.
func (l *Long) Initialize(ctx context.Context, n int64) (bool, error) {
	if err := l.check(ctx); err != nil {
		return false, err
	}
	return l.c.Initialize(ctx, n)
}
