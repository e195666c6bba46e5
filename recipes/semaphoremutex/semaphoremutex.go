package semaphoremutex

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/goid"
	"github.com/go-curator/curator/recipes/semaphorev2"
)

// Errors of the lock.
var (
	ErrNotHeld         = errors.New("semaphoremutex: not held")
	ErrInvalidArgument = errors.New("semaphoremutex: invalid argument")
)

// Mutex is a distributed lock that is not reentrant and that any goroutine
// may release. It is safe for concurrent use. The zero Mutex is not usable:
// make one with New.
type Mutex struct {
	sem *semaphorev2.Semaphore

	mu    sync.Mutex
	holds []*Hold // not yet released, oldest first; more than one only after a loss
}

// Hold is one acquisition of a Mutex: a value that any goroutine may use
// and release. It is safe for concurrent use. The zero Hold holds nothing.
type Hold struct {
	m     *Mutex
	lease *semaphorev2.Lease
	gid   int64 // the goroutine that acquired it
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
	_, err := m.AcquireHold(ctx)
	return err
}

// AcquireHold is Acquire, returning the hold: hand it to the goroutine
// that finishes the work, which releases exactly this hold with
// Hold.Release.
func (m *Mutex) AcquireHold(ctx context.Context) (*Hold, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	l, err := m.sem.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("semaphoremutex: %w", err)
	}
	return m.hold(l), nil
}

// TryAcquire is Acquire bounded by wait, as Curator's acquire(time, unit):
// it returns false and no error when wait passes first. wait == 0 tries
// once; a negative wait is ErrInvalidArgument.
func (m *Mutex) TryAcquire(ctx context.Context, wait time.Duration) (bool, error) {
	_, ok, err := m.TryAcquireHold(ctx, wait)
	return ok, err
}

// TryAcquireHold is TryAcquire, returning the hold when it got one.
func (m *Mutex) TryAcquireHold(ctx context.Context, wait time.Duration) (*Hold, bool, error) {
	if err := m.check(); err != nil {
		return nil, false, err
	}
	if wait < 0 {
		return nil, false, fmt.Errorf("%w: negative wait %v", ErrInvalidArgument, wait)
	}
	l, ok, err := m.sem.TryAcquire(ctx, wait)
	if err != nil {
		return nil, false, fmt.Errorf("semaphoremutex: %w", err)
	}
	if !ok {
		return nil, false, nil
	}
	return m.hold(l), true, nil
}

func (m *Mutex) hold(l *semaphorev2.Lease) *Hold {
	h := &Hold{m: m, lease: l, gid: goid.Get()}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.holds = append(m.holds, h)
	return h
}

// Release ends one hold of this Mutex, from any goroutine: the oldest one
// the calling goroutine acquired, or, if it acquired none (the work was
// handed to it), the oldest hold of the Mutex. It returns ErrNotHeld if
// this Mutex holds nothing. If the delete fails the hold is still dropped,
// the Mutex stays usable, and a guaranteed delete finishes the job in the
// background.
//
// A Mutex holds two holds at once only after a loss: while the holder of
// the first has not released it yet, its node gone with its session, a
// waiting Acquire got a new one. The rule above makes the late Release of
// the lost hold end that hold, never the new one, when the goroutine that
// acquired it releases, or when neither was acquired by the releasing
// goroutine. To be exact whichever goroutine releases, hand the Hold from
// AcquireHold over and call its Release.
func (m *Mutex) Release(ctx context.Context) error {
	if err := m.check(); err != nil {
		return err
	}
	m.mu.Lock()
	h := m.pick()
	if h != nil {
		m.holds = slices.DeleteFunc(m.holds, func(o *Hold) bool { return o == h })
	}
	m.mu.Unlock()
	if h == nil {
		return ErrNotHeld
	}
	return h.end(ctx)
}

// pick returns the hold that Release, FencingToken and Lost act on for the
// calling goroutine (see Release), or nil. Called with m.mu held.
func (m *Mutex) pick() *Hold {
	if len(m.holds) == 0 {
		return nil
	}
	gid := goid.Get()
	for _, h := range m.holds {
		if h.gid == gid {
			return h
		}
	}
	return m.holds[0]
}

func (m *Mutex) current() *Hold {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pick()
}

// drop removes h from the holds not yet released, and reports whether it
// was one of them.
func (m *Mutex) drop(h *Hold) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.holds)
	m.holds = slices.DeleteFunc(m.holds, func(o *Hold) bool { return o == h })
	return len(m.holds) < n
}

// IsAcquiredInThisProcess reports whether this Mutex has a hold not yet
// released (a lost one included, as in Curator).
func (m *Mutex) IsAcquiredInThisProcess() bool { return m.current() != nil }

// FencingToken returns the fencing token of the hold Release would end
// (see semaphorev2.Lease.FencingToken), or ErrNotHeld.
func (m *Mutex) FencingToken() (int64, error) {
	return m.current().FencingToken()
}

// Lost returns a channel closed when the hold Release would end can no
// longer be trusted (see the package doc). Without a hold it is already
// closed.
func (m *Mutex) Lost() <-chan struct{} {
	return m.current().Lost()
}

// Release ends this hold, from any goroutine, and no other: it deletes the
// hold's lease node. A second Release, or a Release after Mutex.Release
// ended this hold, returns ErrNotHeld. If the delete fails the hold is
// still dropped, and a guaranteed delete finishes the job in the
// background.
func (h *Hold) Release(ctx context.Context) error {
	if h == nil || h.m == nil || !h.m.drop(h) {
		return ErrNotHeld
	}
	return h.end(ctx)
}

// end deletes the lease node of a hold just dropped from its Mutex.
func (h *Hold) end(ctx context.Context) error {
	if err := h.lease.Close(ctx); err != nil {
		return fmt.Errorf("semaphoremutex: release: %w", err)
	}
	return nil
}

// FencingToken returns the hold's fencing token (see
// semaphorev2.Lease.FencingToken), or ErrNotHeld once it is released.
func (h *Hold) FencingToken() (int64, error) {
	if h == nil || h.m == nil || !h.m.has(h) {
		return 0, ErrNotHeld
	}
	return h.lease.FencingToken(), nil
}

// Lost returns a channel closed when the hold can no longer be trusted
// (see the package doc). A nil or zero Hold's channel is already closed;
// releasing the hold does not close it.
func (h *Hold) Lost() <-chan struct{} {
	if h == nil {
		return (*semaphorev2.Lease)(nil).Lost()
	}
	return h.lease.Lost() // a nil lease's channel is closed
}

// Node returns the path of the hold's lease node, or "".
func (h *Hold) Node() string {
	if h == nil {
		return ""
	}
	return h.lease.Path()
}

func (m *Mutex) has(h *Hold) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Contains(m.holds, h)
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
