package semaphoremutex

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/semaphorev2"
)

// Errors of the lock.
var (
	ErrNotHeld         = errors.New("semaphoremutex: not held")
	ErrInvalidArgument = errors.New("semaphoremutex: invalid argument")
)

// Mutex is a distributed lock that is not reentrant and that any goroutine
// may release. It is safe for concurrent use.
type Mutex struct {
	sem *semaphorev2.Semaphore

	mu    sync.Mutex
	lease *semaphorev2.Lease
}

// New returns a lock on path. It does no I/O. A nil client or an invalid
// path is an error.
func New(client *framework.Client, path string) (*Mutex, error) {
	sem, err := semaphorev2.New(client, path, 1)
	if err != nil {
		return nil, fmt.Errorf("semaphoremutex: %w", err)
	}
	return &Mutex{sem: sem}, nil
}

func (m *Mutex) check() error {
	if m == nil || m.sem == nil {
		return fmt.Errorf("%w: nil mutex", ErrInvalidArgument)
	}
	return nil
}

// Acquire waits until it holds the lock, or ctx ends. It blocks while the
// lock is held, even by this Mutex on this goroutine. A cancelled wait
// leaves no node behind and returns the ctx error.
func (m *Mutex) Acquire(ctx context.Context) error {
	if err := m.check(); err != nil {
		return err
	}
	l, err := m.sem.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("semaphoremutex: %w", err)
	}
	m.hold(l)
	return nil
}

// TryAcquire is Acquire bounded by wait, as Curator's acquire(time, unit):
// it returns false and no error when wait passes first. wait == 0 tries
// once; a negative wait is ErrInvalidArgument.
func (m *Mutex) TryAcquire(ctx context.Context, wait time.Duration) (bool, error) {
	if err := m.check(); err != nil {
		return false, err
	}
	if wait < 0 {
		return false, fmt.Errorf("%w: negative wait %v", ErrInvalidArgument, wait)
	}
	l, ok, err := m.sem.TryAcquire(ctx, wait)
	if err != nil {
		return false, fmt.Errorf("semaphoremutex: %w", err)
	}
	if ok {
		m.hold(l)
	}
	return ok, nil
}

func (m *Mutex) hold(l *semaphorev2.Lease) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lease = l
}

// Release releases the lock, from any goroutine. It returns ErrNotHeld if
// this Mutex does not hold it. If the delete fails the hold is still
// dropped, the Mutex stays usable, and a guaranteed delete finishes the
// job in the background.
func (m *Mutex) Release(ctx context.Context) error {
	if err := m.check(); err != nil {
		return err
	}
	m.mu.Lock()
	l := m.lease
	m.lease = nil
	m.mu.Unlock()
	if l == nil {
		return ErrNotHeld
	}
	if err := l.Close(ctx); err != nil {
		return fmt.Errorf("semaphoremutex: release: %w", err)
	}
	return nil
}

func (m *Mutex) current() *semaphorev2.Lease {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lease
}

// IsAcquiredInThisProcess reports whether this Mutex holds the lock.
func (m *Mutex) IsAcquiredInThisProcess() bool { return m.current() != nil }

// FencingToken returns the fencing token of the current hold (see
// semaphorev2.Lease.FencingToken), or ErrNotHeld.
func (m *Mutex) FencingToken() (int64, error) {
	l := m.current()
	if l == nil {
		return 0, ErrNotHeld
	}
	return l.FencingToken(), nil
}

// Lost returns a channel closed when the current hold can no longer be
// trusted (see the package doc). Without a hold it is already closed.
func (m *Mutex) Lost() <-chan struct{} {
	return m.current().Lost() // a nil lease's channel is closed
}

// Participants returns the names of the lease nodes, as the semaphore's
// Participants: the holder's, plus any contender deciding right now.
func (m *Mutex) Participants(ctx context.Context) ([]string, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	p, err := m.sem.Participants(ctx)
	if err != nil {
		return nil, fmt.Errorf("semaphoremutex: %w", err)
	}
	return p, nil
}
