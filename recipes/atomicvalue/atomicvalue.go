package atomicvalue

import (
	"context"
	"errors"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/atomiccore"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/retry"
)

// Errors returned by this package. Match them with errors.Is.
var (
	// ErrCorrupt reports an Integer's node whose data is neither empty nor
	// 4 bytes long.
	ErrCorrupt = errors.New("atomicvalue: corrupt data")
	// ErrInvalidArgument reports a bad argument: a nil client or retry
	// policy, an invalid path or the root, a nil option, a bad promoted
	// lock, a nil ctx, a nil or zero value. The error also matches the
	// framework's specific sentinel (framework.ErrNilClient,
	// framework.ErrInvalidPath or framework.ErrInvalidArgument). A client
	// not started or closed gives framework.ErrNotStarted or ErrClosed.
	ErrInvalidArgument = errors.New("atomicvalue: invalid argument")
	ErrVersionOverflow = errors.New("atomicvalue: the node's version overflowed to -1, which ZooKeeper reads as any version")
	// ErrIndeterminate reports a write whose outcome is unknown; it is
	// framework.ErrIndeterminate itself. See the package doc.
	ErrIndeterminate = framework.ErrIndeterminate
)

// errs are this package's prefix and sentinels, for the shared core.
var errs = atomiccore.Errors{Prefix: "atomicvalue", Invalid: ErrInvalidArgument, Overflow: ErrVersionOverflow}

// DefaultLockSuffix names the promoted lock of a value made without
// [WithPromotedLock] or [WithoutPromotedLock]: the value's path with this
// suffix, a sibling of its node.
const DefaultLockSuffix = "-lock"

// Option configures a Value or an Integer. An option given a bad value
// returns an error matching [ErrInvalidArgument], which the constructor
// returns.
type Option func(*options) error

// options are what the Options set: the shared core's.
type options struct {
	core atomiccore.Options
}

// WithPromotedLock sets the promoted lock, Curator's PromotedToLock: an
// InterProcessMutex at lockPath, whose queue an operation joins after a
// lost race, waiting at most maxWait for its turn (0 tries once), and
// under which it tries again as policy allows. Processes that share a
// value, Java ones included, should share its lock path. An invalid
// lockPath, a negative maxWait or a nil policy is an error.
func WithPromotedLock(lockPath string, maxWait time.Duration, policy retry.Policy) Option {
	return func(o *options) error {
		return atomiccore.PromotedLock(errs, &o.core, lockPath, maxWait, policy)
	}
}

// WithoutPromotedLock makes a value optimistic only, as Curator's without
// PromotedToLock: an operation that loses a race sleeps and tries again
// while its policy allows, and writes no node but the value's.
func WithoutPromotedLock() Option {
	return func(o *options) error {
		atomiccore.NoPromotedLock(&o.core)
		return nil
	}
}

// Result is the outcome of an operation: Curator's AtomicValue. Always
// check Succeeded: only Get and ForceSet always succeed.
//
// With an error matching ErrIndeterminate, Succeeded is false and the
// Result tells what may have happened: PreValue is the value the last try
// read, PostValue the value its write, applied or not, would have stored.
type Result[T any] struct {
	// Succeeded reports whether the operation wrote (or, for Get, read)
	// the value.
	Succeeded bool
	// PreValue is the value read before the write (nil or 0 for a missing
	// node).
	PreValue T
	// PostValue is the value written; when Succeeded is false without an
	// error, it is PreValue: nothing was written.
	PostValue T
	// Stats counts the tries and the time they took.
	Stats Stats
}

// Stats tells how an operation went: Curator's AtomicStats.
type Stats struct {
	// OptimisticTries counts the compare-and-set tries made without the
	// promoted lock.
	OptimisticTries int
	// PromotedLockTries counts the tries made holding the promoted lock.
	PromotedLockTries int
	// OptimisticTime is the time spent in the optimistic tries, sleeps
	// included.
	OptimisticTime time.Duration
	// PromotedLockTime is the time spent on the promoted lock: waiting for
	// it, the tries under it, and its release.
	PromotedLockTime time.Duration
}

// result converts the core's result, copying slices with cp.
func result[T any](r atomiccore.Result[T], cp func(T) T) Result[T] {
	return Result[T]{Succeeded: r.Succeeded, PreValue: cp(r.PreValue), PostValue: cp(r.PostValue), Stats: Stats(r.Stats)}
}

// newCore applies opts and builds the core of a Value or an Integer.
func newCore[T any](client *framework.Client, path string, policy retry.Policy, codec atomiccore.Codec[T], opts []Option) (*atomiccore.Core[T], error) {
	var o options
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	return atomiccore.New(client, path, policy, codec, errs, o.core)
}

// check returns an error if c cannot run operations with ctx; typ names
// the type for a nil one.
func check[T any](ctx context.Context, c *atomiccore.Core[T], isNil bool, typ string) error {
	if isNil {
		return recipe.Zero(ErrInvalidArgument, typ)
	}
	return c.Check(ctx, errs, typ)
}
