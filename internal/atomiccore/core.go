package atomiccore

import (
	"context"
	"fmt"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/retry"
)

// Codec is how a recipe stores its values: Encode makes a node's data,
// Decode reads it (no data included; an error must name path and wrap the
// recipe's corrupt-data sentinel), and Equal compares two values for
// CompareAndSet.
type Codec[T any] struct {
	Encode func(T) []byte
	Decode func(path string, data []byte) (T, error)
	Equal  func(a, b T) bool
}

// Errors are a recipe's prefix ("atomiclong") and its sentinels.
type Errors struct {
	Prefix string
	// Invalid is the recipe's ErrInvalidArgument, and Overflow its
	// ErrVersionOverflow.
	Invalid, Overflow error
}

// Core is one value at one path: what a recipe's type wraps.
type Core[T any] struct {
	client *framework.Client
	path   string
	policy retry.Policy
	lock   *promotion // nil: optimistic only
	turns  contention[T]
	codec  Codec[T]
	errs   Errors
}

// promotion is the promoted lock: Curator's PromotedToLock.
type promotion struct {
	path    string
	maxWait time.Duration // < 0: as long as the operation's ctx allows
	policy  retry.Policy  // nil: try until a write wins or ctx ends
	m       locker
}

// locker is what the promoted lock needs of recipes/mutex.
type locker interface {
	Acquire(ctx context.Context) (*mutex.Hold, error)
	TryAcquire(ctx context.Context, wait time.Duration) (*mutex.Hold, bool, error)
}

// DefaultLockSuffix names the default promoted lock: the value's path with
// this suffix, a sibling of the value's node.
const DefaultLockSuffix = "-lock"

// Options are what a recipe's options set. The zero Options is the
// default: a promoted lock at the value's path plus DefaultLockSuffix.
type Options struct {
	lock *promotion
	// explicit and unqueued record WithPromotedLock and
	// WithoutPromotedLock, the last given winning.
	explicit, unqueued bool
}

// PromotedLock is the recipes' WithPromotedLock: it validates its
// arguments against the recipe's errs.
func PromotedLock(errs Errors, o *Options, lockPath string, maxWait time.Duration, policy retry.Policy) error {
	switch {
	case maxWait < 0:
		return recipe.BadArg(errs.Invalid, "negative promoted lock wait %v", maxWait)
	case policy == nil:
		return recipe.BadArg(errs.Invalid, "nil promoted lock retry policy")
	}
	if err := framework.ValidatePath(lockPath); err != nil {
		return recipe.Invalid(errs.Invalid, fmt.Errorf("promoted lock: %w", err))
	}
	o.lock = &promotion{path: lockPath, maxWait: maxWait, policy: policy}
	o.explicit, o.unqueued = true, false
	return nil
}

// NoPromotedLock is the recipes' WithoutPromotedLock.
func NoPromotedLock(o *Options) {
	o.lock, o.explicit, o.unqueued = nil, false, true
}

// New returns a Core at path, after the checks every recipe's New makes:
// a nil client or policy, an invalid path or the root, and a bad promoted
// lock are errors matching errs.Invalid. It does no I/O.
func New[T any](client *framework.Client, path string, policy retry.Policy, codec Codec[T], errs Errors, o Options) (*Core[T], error) {
	if client == nil {
		return nil, recipe.NilClient(errs.Invalid)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, recipe.Invalid(errs.Invalid, err)
	}
	if path == "/" {
		return nil, recipe.Invalid(errs.Invalid,
			fmt.Errorf("%w %q: the root cannot hold a value", framework.ErrInvalidPath, path))
	}
	if policy == nil {
		return nil, recipe.BadArg(errs.Invalid, "nil retry policy")
	}
	c := &Core[T]{client: client, path: path, policy: policy, lock: o.lock, codec: codec, errs: errs}
	if !o.explicit && !o.unqueued {
		c.lock = &promotion{path: path + DefaultLockSuffix, maxWait: -1}
	}
	if p := c.lock; p != nil {
		if p.path == path {
			return nil, recipe.BadArg(errs.Invalid, "promoted lock path %q is the value's own path", path)
		}
		if err := framework.ValidatePath(p.path); err != nil {
			return nil, recipe.Invalid(errs.Invalid, fmt.Errorf("promoted lock: %w", err))
		}
		m, err := mutex.New(client, p.path)
		if err != nil {
			return nil, recipe.Wrapf(errs.Invalid, "%s: promoted lock: %w", errs.Prefix, err)
		}
		p.m = m
		c.turns.queued = true
	}
	return c, nil
}

// Path returns the value's path.
func (c *Core[T]) Path() string { return c.path }

// LockPath returns the promoted lock's path, "" for none.
func (c *Core[T]) LockPath() string {
	if c.lock == nil {
		return ""
	}
	return c.lock.path
}

// Result is the outcome of an operation; see recipes/atomiclong's Result.
type Result[T any] struct {
	Succeeded           bool
	PreValue, PostValue T
	Stats               Stats
}

// Stats tells how an operation went: Curator's AtomicStats; see
// recipes/atomiclong's Stats.
type Stats struct {
	OptimisticTries, PromotedLockTries int
	OptimisticTime, PromotedLockTime   time.Duration
}

// Check returns an error if c cannot run operations with ctx; typ names
// the recipe's type in the error of a nil or zero value.
func (c *Core[T]) Check(ctx context.Context, errs Errors, typ string) error {
	if c == nil || c.client == nil {
		return recipe.Zero(errs.Invalid, typ)
	}
	if err := recipe.CheckCtx(errs.Invalid, ctx); err != nil {
		return err
	}
	if err := c.client.Check(); err != nil {
		return recipe.Wrapf(errs.Invalid, "%s: %s: %w", errs.Prefix, c.path, err)
	}
	return nil
}

// ErrIndeterminate is framework.ErrIndeterminate: a write whose outcome is
// unknown.
var ErrIndeterminate = framework.ErrIndeterminate
