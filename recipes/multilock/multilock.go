package multilock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/recipes/mutex"
)

// Errors of the multi lock. Match them with errors.Is.
var (
	// ErrInvalidArgument reports a bad argument: no locks or paths, a nil
	// lock, a nil client, an invalid or repeated path, a nil option, a
	// negative wait, a nil ctx, a nil or zero MultiLock. The error also
	// matches the framework's specific sentinel (framework.ErrNilClient,
	// framework.ErrInvalidPath or framework.ErrInvalidArgument).
	ErrInvalidArgument = errors.New("multilock: invalid argument")
	// ErrNotOwner reports the release, or the fencing token, of a Hold
	// already released.
	ErrNotOwner = errors.New("multilock: not held")
	// ErrNodeVanished reports that a lock node of a MultiLock over paths
	// is gone: it kept vanishing while a lock was acquired until the retry
	// policy gave up, or a fencing token found it gone. The error also
	// matches mutex.ErrNodeVanished.
	ErrNodeVanished = errors.New("multilock: lock node vanished (session expired?)")
	// ErrSessionLost reports that the session a lock node of a MultiLock
	// over paths belongs to is no longer the client's (the error also
	// matches mutex.ErrSessionLost), or that a lock's hold was lost (its
	// Lost() closed) before Acquire or TryAcquire could return the Hold.
	ErrSessionLost = errtext.Sentinel("multilock: the lock node's session is lost", framework.ErrSessionLost)
)

// Member is a hold that a MultiLock takes from one of its locks:
// mutex.Hold, rwlock.Hold, semaphoremutex.Hold and semaphorev2.Lease are
// Members.
type Member interface {
	// Lost returns a channel closed when the hold can no longer be
	// trusted.
	Lost() <-chan struct{}
	// FencingToken returns the hold's fencing token.
	FencingToken() (int64, error)
	// Node returns the path of the hold's node.
	Node() string
	// Release gives the hold up.
	Release(ctx context.Context) error
}

// Locker is a lock a MultiLock can hold. [Of] makes one of mutex.Mutex,
// either side of an rwlock.Lock, semaphoremutex.Mutex, a
// semaphorev2.Semaphore, or your own lock.
type Locker interface {
	// Acquire waits until the lock is held, or ctx ends, and returns the
	// hold.
	Acquire(ctx context.Context) (Member, error)
	// TryAcquire is Acquire with a bound: nil, false and no error when
	// wait passes first; wait == 0 tries once.
	TryAcquire(ctx context.Context, wait time.Duration) (Member, bool, error)
}

// Of returns the Locker of l, a lock whose Acquire and TryAcquire return
// its own hold type, as every lock of this module does:
//
//	multilock.New(multilock.Of(stock), multilock.Of(prices.WriteLock()))
func Of[H Member](l interface {
	Acquire(context.Context) (H, error)
	TryAcquire(context.Context, time.Duration) (H, bool, error)
}) Locker {
	return locker[H]{l}
}

type locker[H Member] struct {
	l interface {
		Acquire(context.Context) (H, error)
		TryAcquire(context.Context, time.Duration) (H, bool, error)
	}
}

func (a locker[H]) Acquire(ctx context.Context) (Member, error) {
	h, err := a.l.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return h, nil
}

func (a locker[H]) TryAcquire(ctx context.Context, wait time.Duration) (Member, bool, error) {
	h, ok, err := a.l.TryAcquire(ctx, wait)
	if err != nil || !ok {
		return nil, false, err
	}
	return h, true, nil
}

// MultiLock holds several locks as one: Curator's InterProcessMultiLock.
// It is safe for concurrent use as far as its locks are.
//
// The zero MultiLock is not usable: make one with [New] or
// [NewFromPaths]. Its methods, and those of a nil *MultiLock, return an
// error matching [ErrInvalidArgument]; none panics. A MultiLock may be
// copied: it holds only its list of locks.
type MultiLock struct {
	locks []Locker
}

// Option configures a MultiLock over paths. An option given a bad value returns an
// error matching [ErrInvalidArgument], which the constructor returns.
type Option func(*options) error

type options struct {
	mutex []mutex.Option
}

// WithData sets the data of the mutexes' nodes that NewFromPaths makes,
// instead of the client's default data.
func WithData(b []byte) Option {
	return func(o *options) error { o.mutex = append(o.mutex, mutex.WithData(b)); return nil }
}

// New returns a MultiLock over locks, which it acquires in this order. It
// does no I/O. An empty list or a nil lock is an error matching
// [ErrInvalidArgument].
func New(locks ...Locker) (*MultiLock, error) {
	if len(locks) == 0 {
		return nil, recipe.BadArg(ErrInvalidArgument, "no locks")
	}
	for i, l := range locks {
		if l == nil {
			return nil, recipe.BadArg(ErrInvalidArgument, "lock %d is nil", i)
		}
	}
	return &MultiLock{locks: slices.Clone(locks)}, nil
}

// NewFromPaths returns a MultiLock over a new mutex.Mutex for each path,
// acquired in this order, as Curator's InterProcessMultiLock(client,
// paths). It does no I/O. A nil client, an empty list, an invalid path, a
// path listed twice (which could never be acquired) and a nil option are
// errors matching [ErrInvalidArgument].
func NewFromPaths(client *framework.Client, paths []string, opts ...Option) (*MultiLock, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if len(paths) == 0 {
		return nil, recipe.BadArg(ErrInvalidArgument, "no paths")
	}
	var o options
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	locks := make([]Locker, len(paths))
	seen := make(map[string]bool, len(paths))
	for i, p := range paths {
		if err := framework.ValidatePath(p); err != nil {
			return nil, recipe.Invalid(ErrInvalidArgument, err)
		}
		if seen[p] {
			return nil, recipe.BadArg(ErrInvalidArgument, "path %q listed twice", p)
		}
		seen[p] = true
		m, err := mutex.New(client, p, o.mutex...)
		if err != nil {
			return nil, exported(errtext.Errorf("multilock: %w", err))
		}
		locks[i] = Of(m)
	}
	return &MultiLock{locks: locks}, nil
}

func (m *MultiLock) usable() error {
	if m == nil || len(m.locks) == 0 {
		return recipe.Zero(ErrInvalidArgument, "MultiLock")
	}
	return nil
}

// exported makes err, which a lock returned, also match this package's
// sentinels for the conditions its users must handle.
func exported(err error) error {
	var also []error
	for _, m := range []struct{ lock, ours error }{
		{mutex.ErrNodeVanished, ErrNodeVanished},
		{mutex.ErrSessionLost, ErrSessionLost},
		{framework.ErrSessionLost, ErrSessionLost}, // any other lock's loss
	} {
		if slices.Contains(also, m.ours) {
			continue
		}
		if errors.Is(err, m.lock) {
			also = append(also, m.ours)
		}
	}
	if recipe.IsBadArg(err) {
		also = append(also, ErrInvalidArgument)
	}
	return errtext.Also(err, also...)
}

// Acquire takes every lock in order, each waiting until it is held or ctx
// ends, and returns the hold of them all. If one fails, the ones taken are
// released in reverse order and its error is returned, joined with any
// release errors.
//
// No Hold is returned with its Lost() already closed: if a lock taken
// earlier is lost (Suspended under the standard error policy, or its
// session lost) before the last one is held, the wait for the rest ends,
// every lock taken is released, and the error matches [ErrSessionLost].
func (m *MultiLock) Acquire(ctx context.Context) (*Hold, error) {
	if err := m.usable(); err != nil {
		return nil, err
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return nil, err
	}
	held := make([]Member, 0, len(m.locks))
	for i, l := range m.locks {
		h, _, err := acquireAfter(ctx, i, held, func(ctx context.Context) (Member, bool, error) {
			h, err := l.Acquire(ctx)
			return h, err == nil, err
		})
		if err != nil {
			return nil, failed(ctx, i, err, held, h)
		}
		held = append(held, h)
	}
	return newHold(held), nil
}

// TryAcquire is [MultiLock.Acquire] with a bound on the whole: each lock
// waits for what is left of wait (and tries at least once). If a lock is
// not taken in time, the ones taken are released in reverse order and
// TryAcquire returns nil and false, with no error unless a release
// failed. wait == 0 tries each lock once. A negative wait is an error
// matching [ErrInvalidArgument]. A lock lost before the last is held
// fails the call as in Acquire.
func (m *MultiLock) TryAcquire(ctx context.Context, wait time.Duration) (*Hold, bool, error) {
	if err := m.usable(); err != nil {
		return nil, false, err
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return nil, false, err
	}
	if wait < 0 {
		return nil, false, recipe.BadArg(ErrInvalidArgument, "negative wait %v", wait)
	}
	deadline := time.Now().Add(wait)
	held := make([]Member, 0, len(m.locks))
	for i, l := range m.locks {
		h, ok, err := acquireAfter(ctx, i, held, func(ctx context.Context) (Member, bool, error) {
			return l.TryAcquire(ctx, max(time.Until(deadline), 0))
		})
		if err != nil {
			return nil, false, failed(ctx, i, err, held, h)
		}
		if !ok {
			return nil, false, undo(ctx, held)
		}
		held = append(held, h)
	}
	return newHold(held), true, nil
}

// acquireAfter runs acquire, the acquire of lock i, under a ctx that ends
// as soon as a hold of held (the locks before i) is lost. If one of held,
// or the hold acquire took, is lost by the time acquire returns, it
// returns an error matching ErrSessionLost, with the hold acquire took
// (if any) for the caller to release; otherwise acquire's outcome.
func acquireAfter(ctx context.Context, i int, held []Member, acquire func(context.Context) (Member, bool, error)) (Member, bool, error) {
	lost := make([]<-chan struct{}, len(held))
	for j, h := range held {
		lost[j] = h.Lost()
	}
	actx, stop := recipe.CancelOnClose(ctx, lost...)
	h, ok, err := acquire(actx)
	stop()
	if !ok {
		h = nil
	}
	if h != nil {
		held, lost = append(held[:len(held):len(held)], h), append(lost, h.Lost())
	}
	for j, ch := range lost {
		if chans.IsClosed(ch) {
			return h, false, fmt.Errorf("%w: the hold of lock %d (%s) was lost before lock %d was held",
				ErrSessionLost, j, held[j].Node(), i)
		}
	}
	return h, ok, err
}

// failed reports the failure err of the acquire of lock i, after it
// releases held and, if the acquire took it, h.
func failed(ctx context.Context, i int, err error, held []Member, h Member) error {
	if h != nil {
		held = append(held, h)
	}
	return errors.Join(exported(errtext.Errorf("multilock: acquire lock %d: %w", i, err)), undo(ctx, held))
}

// undo releases held in reverse order, going on past failures, and joins
// their errors.
func undo(ctx context.Context, held []Member) error {
	var errs []error
	for i := len(held) - 1; i >= 0; i-- {
		if err := held[i].Release(ctx); err != nil {
			errs = append(errs, exported(errtext.Errorf("multilock: release lock %d: %w", i, err)))
		}
	}
	return errors.Join(errs...)
}
