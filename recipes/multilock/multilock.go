package multilock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
)

// Errors of the multi lock.
var (
	ErrInvalidArgument = errors.New("multilock: invalid argument")
)

// Locker is a lock a MultiLock can hold: mutex.Mutex and both sides of an
// rwlock.Lock are Lockers.
type Locker interface {
	// Acquire waits until the lock is held, or ctx ends.
	Acquire(ctx context.Context) error
	// TryAcquire is Acquire with a bound: false and no error when wait
	// passes first; wait == 0 tries once.
	TryAcquire(ctx context.Context, wait time.Duration) (bool, error)
	// Release gives the lock up.
	Release(ctx context.Context) error
}

// MultiLock holds several locks as one. It is safe for concurrent use as
// far as its locks are.
type MultiLock struct {
	locks []Locker
}

// New returns a MultiLock over locks, which it acquires in this order. It
// does no I/O. An empty list or a nil lock is an error.
func New(locks ...Locker) (*MultiLock, error) {
	if len(locks) == 0 {
		return nil, fmt.Errorf("%w: no locks", ErrInvalidArgument)
	}
	for i, l := range locks {
		if l == nil {
			return nil, fmt.Errorf("%w: lock %d is nil", ErrInvalidArgument, i)
		}
	}
	return &MultiLock{locks: slices.Clone(locks)}, nil
}

// NewFromPaths returns a MultiLock over a new mutex.Mutex for each path,
// acquired in this order, as Curator's InterProcessMultiLock(client,
// paths). It does no I/O. An empty list, a bad path and a path listed
// twice (which could never be acquired) are errors.
func NewFromPaths(client *framework.Client, paths []string) (*MultiLock, error) {
	if client == nil {
		return nil, fmt.Errorf("multilock: %w", framework.ErrNilClient)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: no paths", ErrInvalidArgument)
	}
	locks := make([]Locker, len(paths))
	seen := make(map[string]bool, len(paths))
	for i, p := range paths {
		if seen[p] {
			return nil, fmt.Errorf("%w: path %q listed twice", ErrInvalidArgument, p)
		}
		seen[p] = true
		m, err := mutex.New(client, p)
		if err != nil {
			return nil, fmt.Errorf("multilock: %w", err)
		}
		locks[i] = m
	}
	return &MultiLock{locks: locks}, nil
}

func (m *MultiLock) check() error {
	if m == nil || len(m.locks) == 0 {
		return fmt.Errorf("%w: nil multilock", ErrInvalidArgument)
	}
	return nil
}

// Acquire takes every lock in order, each waiting until it is held or ctx
// ends. If one fails, the ones taken are released in reverse order and
// its error is returned, joined with any release errors.
func (m *MultiLock) Acquire(ctx context.Context) error {
	if err := m.check(); err != nil {
		return err
	}
	for i, l := range m.locks {
		if err := l.Acquire(ctx); err != nil {
			return errors.Join(fmt.Errorf("multilock: acquire lock %d: %w", i, err), m.undo(ctx, i))
		}
	}
	return nil
}

// TryAcquire is Acquire with a bound on the whole: each lock waits for
// what is left of wait (and tries at least once). If a lock is not taken
// in time, the ones taken are released in reverse order and TryAcquire
// returns false, with no error unless a release failed. wait == 0 tries
// each lock once. A negative wait is an error.
func (m *MultiLock) TryAcquire(ctx context.Context, wait time.Duration) (bool, error) {
	if err := m.check(); err != nil {
		return false, err
	}
	if wait < 0 {
		return false, fmt.Errorf("%w: negative wait %v", ErrInvalidArgument, wait)
	}
	deadline := time.Now().Add(wait)
	for i, l := range m.locks {
		ok, err := l.TryAcquire(ctx, max(time.Until(deadline), 0))
		if err != nil {
			return false, errors.Join(fmt.Errorf("multilock: acquire lock %d: %w", i, err), m.undo(ctx, i))
		}
		if !ok {
			return false, m.undo(ctx, i)
		}
	}
	return true, nil
}

// undo releases the first n locks in reverse order.
func (m *MultiLock) undo(ctx context.Context, n int) error {
	var errs []error
	for i := n - 1; i >= 0; i-- {
		if err := m.locks[i].Release(ctx); err != nil {
			errs = append(errs, fmt.Errorf("multilock: release lock %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// Release releases every lock in reverse order, going on past failures,
// and returns their errors joined.
func (m *MultiLock) Release(ctx context.Context) error {
	if err := m.check(); err != nil {
		return err
	}
	return m.undo(ctx, len(m.locks))
}
