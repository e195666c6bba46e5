package atomiclong

import (
	"context"

	"github.com/go-curator/curator/internal/recipe"
)

// Cached hands out the values of a Long one at a time from ranges it
// takes factor at a time: Curator's CachedAtomicLong. Each Next that needs
// a new range adds factor to the Long, one compare-and-set; the others
// make no request. Values are unique across every Cached and every other
// writer that adds to the Long, and increase within one Cached; across
// Cached they interleave by range.
//
// A range whose Add failed or ended in doubt is never used: after an
// error matching ErrIndeterminate the range may have been taken, and
// using it could hand out values that another process also takes if it
// was not, so the next Next takes a new range (a range lost this way is a
// gap in the values, never a duplicate).
//
// Cached is safe for concurrent use (Curator's is not). The zero Cached
// is not usable: make one with [NewCached]. A Cached must not be copied.
type Cached struct {
	long   *Long
	factor int64
	// sem guards the range: a one-slot channel, so a Next waiting for
	// another's Add can give up when its ctx ends.
	sem  chan struct{}
	pre  int64 // the range's first value
	next int64 // how many of the range were handed out; factor: none left
}

// NewCached returns a Cached that takes factor values of l at a time. A
// nil or zero Long, or a factor below 1, is an error matching
// ErrInvalidArgument.
func NewCached(l *Long, factor int) (*Cached, error) {
	if l == nil || l.c == nil {
		return nil, recipe.Zero(ErrInvalidArgument, "Long")
	}
	if factor < 1 {
		return nil, recipe.BadArg(ErrInvalidArgument, "cache factor %d, want at least 1", factor)
	}
	f := int64(factor)
	return &Cached{long: l, factor: f, sem: make(chan struct{}, 1), next: f}, nil
}

// Next returns the next value: PreValue is the value handed out and
// PostValue is PreValue+1, as Curator's CachedAtomicLong reports them.
// When a new range is needed, its Add's Stats are the Result's, and if
// that Add did not succeed, neither does Next: Succeeded false, values 0
// (as Curator), and the Add's error if any (see Long.Add). A ctx that ends while Next waits for
// another Next's Add returns the ctx's error.
func (c *Cached) Next(ctx context.Context) (Result, error) {
	if c == nil || c.long == nil {
		return Result{}, recipe.Zero(ErrInvalidArgument, "Cached")
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return Result{}, err
	}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	defer func() { <-c.sem }()
	var res Result
	if c.next >= c.factor {
		r, err := c.long.Add(ctx, c.factor)
		if err != nil || !r.Succeeded {
			return Result{Stats: r.Stats}, err
		}
		c.pre, c.next, res.Stats = r.PreValue, 0, r.Stats
	}
	res.Succeeded = true
	res.PreValue = c.pre + c.next
	res.PostValue = res.PreValue + 1
	c.next++
	return res, nil
}
