package atomiclong

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/retry"
)

// Errors returned by this package. Match them with errors.Is.
var (
	ErrCorrupt = errors.New("atomiclong: corrupt data")
	// ErrInvalidArgument reports a bad argument: a nil client or retry
	// policy, an invalid path or the root, a nil option, a bad promoted
	// lock, a nil ctx, a nil or zero Long. The error also matches the
	// framework's specific sentinel (framework.ErrNilClient,
	// framework.ErrInvalidPath or framework.ErrInvalidArgument).
	ErrInvalidArgument = errors.New("atomiclong: invalid argument")
	ErrVersionOverflow = errors.New("atomiclong: the node's version overflowed to -1, which ZooKeeper reads as any version")
	// ErrIndeterminate reports a write whose outcome is unknown: the
	// connection was lost before its reply came, so the server may or may
	// not have applied it. It is framework.ErrIndeterminate itself, so
	// either name matches. See the package doc: read the value and decide;
	// never repeat an increment blindly.
	ErrIndeterminate = framework.ErrIndeterminate
)

// Long is a distributed int64: Curator's DistributedAtomicLong. It is safe
// for concurrent use and holds no resources, so it has no Start or Close.
//
// The zero Long is not usable: make one with [New]. Its methods, and those
// of a nil *Long, return an error matching [ErrInvalidArgument]; none
// panics. A Long must not be copied after first use.
type Long struct {
	client *framework.Client
	path   string
	policy retry.Policy
	lock   *promotion // nil: optimistic only
	turns  contention
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

// newLocker builds the promoted lock: Curator's InterProcessMutex.
func newLocker(c *framework.Client, path string) (locker, error) {
	m, err := mutex.New(c, path)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// DefaultLockSuffix names the promoted lock of a Long made without
// [WithPromotedLock] or [WithoutPromotedLock]: the counter's path with this
// suffix, a sibling of the counter node.
const DefaultLockSuffix = "-lock"

// Option configures a Long. An option given a bad value returns an error
// matching [ErrInvalidArgument], which [New] returns.
type Option func(*options) error

// options are what the Options set.
type options struct {
	lock *promotion
	// explicit and unqueued record WithPromotedLock and
	// WithoutPromotedLock, the last given winning.
	explicit, unqueued bool
}

// WithPromotedLock sets the promoted lock, Curator's PromotedToLock: an
// InterProcessMutex at lockPath, whose queue an operation joins after a
// lost race (see the package doc), waiting at most maxWait for its turn
// (0 tries once), and under which it tries again as policy allows.
// Processes that share a counter, Java ones included, should share its
// lock path. Without this option a Long queues at the counter's path plus
// [DefaultLockSuffix], waiting as long as the operation's ctx allows, with
// its own policy. An invalid lockPath, a negative maxWait or a nil policy
// is an error.
func WithPromotedLock(lockPath string, maxWait time.Duration, policy retry.Policy) Option {
	return func(o *options) error {
		switch {
		case maxWait < 0:
			return recipe.BadArg(ErrInvalidArgument, "negative promoted lock wait %v", maxWait)
		case policy == nil:
			return recipe.BadArg(ErrInvalidArgument, "nil promoted lock retry policy")
		}
		if err := framework.ValidatePath(lockPath); err != nil {
			return recipe.Invalid(ErrInvalidArgument, fmt.Errorf("promoted lock: %w", err))
		}
		o.lock = &promotion{path: lockPath, maxWait: maxWait, policy: policy}
		o.explicit, o.unqueued = true, false
		return nil
	}
}

// WithoutPromotedLock makes a Long optimistic only, as Curator's
// DistributedAtomicLong without PromotedToLock: an operation that loses a
// race sleeps and tries again while its policy allows, and writes no node
// but the counter's. Under heavy contention such an operation can wait
// seconds, or fail, while others win every race.
func WithoutPromotedLock() Option {
	return func(o *options) error {
		o.lock, o.explicit, o.unqueued = nil, false, true
		return nil
	}
}

// New returns a Long stored at path. policy decides how many tries an
// operation makes (and, if it limits elapsed time, for how long), before
// and under the promoted lock; see the package doc for the waits between
// them. New validates its arguments and does no I/O: a nil client or
// policy, an invalid path, a negative maxWait or a nil option is an
// error.
func New(client *framework.Client, path string, policy retry.Policy, opts ...Option) (*Long, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	if path == "/" {
		return nil, recipe.Invalid(ErrInvalidArgument,
			fmt.Errorf("%w %q: the root cannot hold a value", framework.ErrInvalidPath, path))
	}
	if policy == nil {
		return nil, recipe.BadArg(ErrInvalidArgument, "nil retry policy")
	}
	var o options
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	l := &Long{client: client, path: path, policy: policy, lock: o.lock}
	if !o.explicit && !o.unqueued {
		l.lock = &promotion{path: path + DefaultLockSuffix, maxWait: -1}
	}
	if p := l.lock; p != nil {
		if p.path == path {
			return nil, recipe.BadArg(ErrInvalidArgument, "promoted lock path %q is the counter's own path", path)
		}
		if err := framework.ValidatePath(p.path); err != nil {
			return nil, recipe.Invalid(ErrInvalidArgument, fmt.Errorf("promoted lock: %w", err))
		}
		m, err := newLocker(client, p.path)
		if err != nil {
			return nil, recipe.Wrapf(ErrInvalidArgument, "atomiclong: promoted lock: %w", err)
		}
		p.m = m
		l.turns.queued = true
	}
	return l, nil
}

// Result is the outcome of an operation. Always check Succeeded: only Get
// and ForceSet always succeed.
//
// With an error matching ErrIndeterminate, Succeeded is false and the
// Result tells what may have happened: PreValue is the value the last try
// read, PostValue the value its write, applied or not, would have stored.
type Result struct {
	// Succeeded reports whether the operation wrote (or, for Get, read)
	// the value.
	Succeeded bool
	// PreValue is the value read before the write (0 for a missing node).
	PreValue int64
	// PostValue is the value written; when Succeeded is false without an
	// error, it is PreValue: nothing was written.
	PostValue int64
	// Stats counts the tries and the time they took.
	Stats Stats
}

// Stats tells how an operation went: Curator's AtomicStats.
type Stats struct {
	// OptimisticTries counts the compare-and-set tries made without the
	// promoted lock.
	OptimisticTries int
	// PromotedLockTries counts the tries made holding the promoted lock;
	// 0 when the optimistic tries sufficed or the lock was not taken.
	PromotedLockTries int
	// OptimisticTime is the time spent in the optimistic tries, sleeps
	// included.
	OptimisticTime time.Duration
	// PromotedLockTime is the time spent on the promoted lock: waiting for
	// it, the tries under it, and its release.
	PromotedLockTime time.Duration
}

// check returns an error if l cannot run operations with ctx.
func (l *Long) check(ctx context.Context) error {
	if l == nil || l.client == nil {
		return recipe.Zero(ErrInvalidArgument, "Long")
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if err := l.client.Check(); err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "atomiclong: %s: %w", l.path, err)
	}
	return nil
}
