package semaphorev2

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// Errors of the semaphore. Match them with errors.Is.
var (
	// ErrInvalidArgument reports a bad argument: a nil client, an invalid
	// path, maxLeases, qty or a fixed maximum out of range, a negative
	// wait, a nil option, lease or count, a nil ctx, a nil or zero
	// Semaphore or Lease. The error also matches the framework's specific
	// sentinel (framework.ErrNilClient, framework.ErrInvalidPath or
	// framework.ErrInvalidArgument).
	ErrInvalidArgument = errors.New("semaphorev2: invalid argument")
	// ErrForeignLease reports a lease returned to a semaphore that did not
	// grant it.
	ErrForeignLease = errors.New("semaphorev2: lease belongs to another semaphore")
	// ErrNotOwner reports the release of a lease already returned, or the
	// fencing token of one.
	ErrNotOwner = errors.New("semaphorev2: lease already returned")
	// ErrLeaseClosed is ErrNotOwner.
	//
	// Deprecated: Use ErrNotOwner, the name every recipe gives the
	// condition.
	ErrLeaseClosed = ErrNotOwner
	// ErrNodeVanished reports that our node disappeared during an acquire
	// (the session expired, or someone deleted it) and the client's retry
	// policy gave up starting again.
	ErrNodeVanished = errors.New("semaphorev2: node vanished while acquiring (session lost?)")
	// ErrSessionLost reports a lease lost: an acquire that would have
	// returned a lease already lost (a lease AcquireN took first, or the
	// one it granted last, saw its Lost() close, on a Suspended under the
	// standard error policy or with its session, before the call could
	// return; the call returned every lease it took), a Lease.Check that
	// found the lease lost or its session's lease ended on the client's
	// clock, or a Lease.Release after its session was lost.
	ErrSessionLost = errtext.Sentinel("semaphorev2: the lease was lost", framework.ErrSessionLost)
)

// Curator's names under the semaphore's path.
const (
	lockParent  = "locks"
	leaseParent = "leases"
	lockName    = "lock-"
	leaseName   = "lease-"
)

// Semaphore is a distributed counting semaphore with leases. It is safe for
// concurrent use, and holds no resources of its own: there is nothing to
// close, only leases to return.
//
// The zero Semaphore is not usable: make one with [New] or
// [NewWithCount]. Its methods, and those of a nil *Semaphore, return an
// error matching [ErrInvalidArgument] (or report nothing); none panics. A
// Semaphore must not be copied after first use.
type Semaphore struct {
	client   *framework.Client
	path     string
	leases   string // <path>/leases
	locks    string // <path>/locks
	lock     *lockcore.Core
	lockData []byte
	data     []byte
	max      maxSource

	contended atomic.Int64 // when the fast path last met contention (sinceBase), 0 for never
}

// maxSource says how many leases the semaphore allows now, and wakes
// waiters when that may have grown.
type maxSource interface {
	get() int
	// watch returns a channel that receives after each change of the
	// maximum, and a function that stops it. A fixed maximum returns nil.
	watch() (<-chan struct{}, func())
}

type fixedMax int

func (m fixedMax) get() int                       { return int(m) }
func (fixedMax) watch() (<-chan struct{}, func()) { return nil, func() {} }

// Option configures a Semaphore. An option given a bad value returns an
// error matching [ErrInvalidArgument], which [New] returns.
type Option func(*options) error

// options are what the Options set.
type options struct {
	data []byte
}

// WithData sets the data written to this semaphore's lease nodes
// (Curator's setNodeData), instead of the client's default data.
func WithData(b []byte) Option {
	return func(o *options) error { o.data = append([]byte{}, b...); return nil }
}

// WithNodeData is WithData.
//
// Deprecated: Use WithData, the name every recipe gives the option.
func WithNodeData(b []byte) Option { return WithData(b) }

// New returns a semaphore on path that allows maxLeases leases at once.
// Every process using path must pass the same maxLeases: nothing checks
// that they agree (as in Curator). New does no I/O. A nil client, an
// invalid path, maxLeases < 1 or a nil option is an error matching
// [ErrInvalidArgument].
func New(client *framework.Client, path string, maxLeases int, opts ...Option) (*Semaphore, error) {
	if maxLeases < 1 {
		return nil, recipe.BadArg(ErrInvalidArgument, "maxLeases %d < 1", maxLeases)
	}
	return newSemaphore(client, path, fixedMax(maxLeases), opts)
}

func newSemaphore(client *framework.Client, path string, max maxSource, opts []Option) (*Semaphore, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	s := &Semaphore{
		client: client, path: path, max: max,
		leases: framework.JoinPath(path, leaseParent),
		locks:  framework.JoinPath(path, lockParent),
	}
	var o options
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	s.data = o.data
	lock, err := lockcore.New(client, s.locks, lockName, lockcore.MaxLeases(1))
	if err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	s.lock = lock
	s.lockData = client.DefaultData()
	if s.data == nil {
		s.data = client.DefaultData()
	}
	return s, nil
}

// Path returns the semaphore's path.
func (s *Semaphore) Path() string {
	if s == nil {
		return ""
	}
	return s.path
}

// MaxLeases returns the number of leases the semaphore allows now: the
// fixed maximum, or the shared count's cached value.
func (s *Semaphore) MaxLeases() int {
	if s == nil || s.max == nil {
		return 0
	}
	return s.max.get()
}

func (s *Semaphore) check() error {
	if s == nil || s.lock == nil {
		return recipe.Zero(ErrInvalidArgument, "Semaphore")
	}
	return nil
}

// Participants returns the names of the lease nodes under <path>/leases, in
// the order of their sequence numbers, as Curator's getParticipantNodes
// does: the leases held, plus any acquire that is deciding right now. A
// missing path gives an empty list.
func (s *Semaphore) Participants(ctx context.Context) ([]string, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	kids, err := s.client.GetChildren().ForPath(ctx, s.leases)
	if errors.Is(err, zk.ErrNoNode) {
		return []string{}, nil
	}
	if err != nil {
		return nil, recipe.Wrapf(ErrInvalidArgument, "semaphorev2: participants %s: %w", s.path, err)
	}
	lockcore.Sort(kids, leaseName)
	return kids, nil
}

// ReturnLease closes a lease that this semaphore granted. A nil lease is
// [ErrInvalidArgument], a lease of another semaphore (another path or
// client) is [ErrForeignLease], and one already returned or closed is
// [ErrNotOwner]; none of them touches ZooKeeper.
func (s *Semaphore) ReturnLease(ctx context.Context, l *Lease) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if l == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil lease")
	}
	if l.client != s.client || l.sem != s.path {
		return fmt.Errorf("%w: %s is not under %s", ErrForeignLease, l.node, s.leases)
	}
	if !l.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: %s", ErrNotOwner, l.node)
	}
	return l.delete(ctx)
}

// ReturnAll returns every lease, even after an error, and joins the
// errors of those that failed.
func (s *Semaphore) ReturnAll(ctx context.Context, leases []*Lease) error {
	var errs []error
	for _, l := range leases {
		errs = append(errs, s.ReturnLease(ctx, l))
	}
	return errors.Join(errs...)
}

// returnQuietly closes leases taken by a failed acquire, with a detached,
// bounded context.
func (s *Semaphore) returnQuietly(ctx context.Context, leases []*Lease) {
	for _, l := range leases {
		if l.closed.CompareAndSwap(false, true) {
			l.obs.Release(l.lost)
			s.deleteNode(ctx, l.node)
		}
	}
}

// deleteNode deletes one of our nodes with a detached, bounded context and
// a guaranteed delete, so that it goes even when ctx is cancelled.
func (s *Semaphore) deleteNode(ctx context.Context, node string) {
	_ = recipe.Delete(ctx, s.client, node)
}
