package atomiclong

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
	c *atomiccore.Core[int64]
}

// errs are this package's prefix and sentinels, for the shared core.
var errs = atomiccore.Errors{Prefix: "atomiclong", Invalid: ErrInvalidArgument, Overflow: ErrVersionOverflow}

// codec is Curator's 8-byte long.
var codec = atomiccore.Codec[int64]{Encode: encode, Decode: decode, Equal: func(a, b int64) bool { return a == b }}

// DefaultLockSuffix names the promoted lock of a Long made without
// [WithPromotedLock] or [WithoutPromotedLock]: the counter's path with this
// suffix, a sibling of the counter node.
const DefaultLockSuffix = "-lock"

// Option configures a Long. An option given a bad value returns an error
// matching [ErrInvalidArgument], which [New] returns.
type Option func(*options) error

// options are what the Options set: the shared core's.
type options struct {
	core atomiccore.Options
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
		return atomiccore.PromotedLock(errs, &o.core, lockPath, maxWait, policy)
	}
}

// WithoutPromotedLock makes a Long optimistic only, as Curator's
// DistributedAtomicLong without PromotedToLock: an operation that loses a
// race sleeps and tries again while its policy allows, and writes no node
// but the counter's. Under heavy contention such an operation can wait
// seconds, or fail, while others win every race.
func WithoutPromotedLock() Option {
	return func(o *options) error {
		atomiccore.NoPromotedLock(&o.core)
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
	var o options
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	c, err := atomiccore.New(client, path, policy, codec, errs, o.core)
	if err != nil {
		return nil, err
	}
	return &Long{c: c}, nil
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
	if l == nil {
		return recipe.Zero(ErrInvalidArgument, "Long")
	}
	return l.c.Check(ctx, errs, "Long")
}

// result converts the core's result.
func result(r atomiccore.Result[int64]) Result {
	return Result{Succeeded: r.Succeeded, PreValue: r.PreValue, PostValue: r.PostValue, Stats: Stats(r.Stats)}
}
