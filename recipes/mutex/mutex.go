package mutex

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/lockcore"
)

// Errors of the mutex.
var (
	ErrNotOwner        = errors.New("mutex: not held by this goroutine")
	ErrInvalidArgument = errors.New("mutex: invalid argument")
	// ErrNodeVanished reports that the lock node is gone: a contender's
	// node kept vanishing (its session expired) until the retry policy gave
	// up, or a holder's FencingToken found it gone.
	ErrNodeVanished = errors.New("mutex: lock node vanished (session expired?)")
	// ErrSessionLost reports that the session the lock node belongs to is
	// no longer the client's, so the node is not trusted even if the
	// server still lists it: a contender's session kept being lost until
	// the retry policy gave up, or a holder's FencingToken was asked after
	// the loss.
	ErrSessionLost = errors.New("mutex: the lock node's session is lost")
)

// lockName is Curator's node name for InterProcessMutex.
const lockName = "lock-"

// Mutex is a reentrant distributed lock. It is safe for concurrent use.
type Mutex struct {
	lock    *lockcore.Reentrant
	data    []byte
	revoked func()
}

// Option configures a Mutex.
type Option func(*Mutex)

// WithData sets the data of the mutex's nodes instead of the client's
// default data.
func WithData(b []byte) Option {
	return func(m *Mutex) { m.data = append([]byte{}, b...) }
}

// WithRevocation makes holds revocable, as Curator's makeRevocable: when
// another process calls Revoke on the holder's node, fn runs (on its own
// goroutine); it should release the lock. Revocable holders write empty
// node data.
func WithRevocation(fn func()) Option {
	return func(m *Mutex) { m.revoked = fn }
}

// New returns a mutex on path. It does no I/O.
func New(client *framework.Client, path string, opts ...Option) (*Mutex, error) {
	if client == nil {
		return nil, fmt.Errorf("mutex: %w", framework.ErrNilClient)
	}
	m := &Mutex{}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalidArgument)
		}
		o(m)
	}
	core, err := lockcore.New(client, path, lockName, lockcore.MaxLeases(1))
	if err != nil {
		return nil, fmt.Errorf("mutex: %w", err)
	}
	cfg := lockcore.ReentrantConfig{Data: m.data}
	if m.revoked != nil {
		cfg.Data = []byte{}
		cfg.OnHold = m.watchRevocation
	} else if m.data == nil {
		cfg.Data = client.DefaultData()
	}
	m.lock = lockcore.NewReentrant(core, cfg)
	return m, nil
}

// Acquire waits until the calling goroutine holds the lock, or ctx ends.
// If the goroutine already holds it, Acquire only counts, without I/O. A
// cancelled wait deletes its node and returns the ctx error.
func (m *Mutex) Acquire(ctx context.Context) error {
	_, err := m.acquire(ctx, -1)
	return err
}

// TryAcquire is Acquire with a bound: it returns false and no error when
// wait passes first. wait == 0 tries once. A negative wait is an error.
func (m *Mutex) TryAcquire(ctx context.Context, wait time.Duration) (bool, error) {
	if wait < 0 {
		return false, fmt.Errorf("%w: negative wait %v", ErrInvalidArgument, wait)
	}
	return m.acquire(ctx, wait)
}

func (m *Mutex) acquire(ctx context.Context, wait time.Duration) (bool, error) {
	if m == nil || m.lock == nil {
		return false, fmt.Errorf("%w: nil mutex", ErrInvalidArgument)
	}
	ok, err := m.lock.Acquire(ctx, wait)
	if err != nil {
		return false, fmt.Errorf("mutex: acquire %s: %w", m.lock.Core().Path(), exported(err))
	}
	return ok, nil
}

// Release undoes one Acquire of the calling goroutine; the last one
// deletes the lock node. It returns ErrNotOwner if the goroutine holds
// nothing. If the delete fails, the hold is still dropped, the instance
// stays usable, and a guaranteed delete finishes the job in the background.
func (m *Mutex) Release(ctx context.Context) error {
	if m == nil || m.lock == nil {
		return fmt.Errorf("%w: nil mutex", ErrInvalidArgument)
	}
	err := m.lock.Release(ctx)
	if errors.Is(err, lockcore.ErrNotOwner) {
		return ErrNotOwner
	}
	if err != nil {
		return fmt.Errorf("mutex: release %s: %w", m.lock.Core().Path(), err)
	}
	return nil
}

// IsAcquiredInThisProcess reports whether any goroutine holds the lock
// through this instance.
func (m *Mutex) IsAcquiredInThisProcess() bool { return m.lock.IsAcquiredInThisProcess() }

// IsOwnedByCurrentGoroutine reports whether the calling goroutine holds
// the lock.
func (m *Mutex) IsOwnedByCurrentGoroutine() bool { return m.lock.Current() != nil }

// FencingToken returns the fencing token of the calling goroutine's hold:
// the lock path's pzxid, read after the grant, a ZooKeeper transaction ID
// that grows with every acquisition of the path. A resource that remembers
// the highest token it has seen can reject a stale holder's writes.
//
// It returns ErrNotOwner if the goroutine holds nothing. A hold handed
// over by its predecessor's delete reads its token on the first call (one
// bounded round trip); that read fails with an error matching
// ErrSessionLost once the hold's session is lost, ErrNodeVanished if the
// node is gone, or the read's own error (connection loss, timeout), and
// is tried again on the next call. Call it only while holding the lock.
func (m *Mutex) FencingToken() (int64, error) {
	tok, err := m.lock.FencingToken()
	if errors.Is(err, lockcore.ErrNotOwner) {
		return 0, ErrNotOwner
	}
	if err != nil {
		return 0, fmt.Errorf("mutex: fencing token %s: %w", m.lock.Core().Path(), exported(err))
	}
	return tok, nil
}

// exported makes the lock core's conditions match this package's
// sentinels.
func exported(err error) error { return lockcore.Export(err, ErrNodeVanished, ErrSessionLost) }

// Node returns the path of the calling goroutine's lock node, or "".
func (m *Mutex) Node() string { return m.lock.Node() }

// Lost returns a channel closed when the calling goroutine's hold can no
// longer be trusted (see the package doc). If the goroutine holds nothing
// the channel is already closed.
func (m *Mutex) Lost() <-chan struct{} { return m.lock.Lost() }

// Participants returns the paths of the contenders' nodes in queue order;
// the first holds the lock.
func (m *Mutex) Participants(ctx context.Context) ([]string, error) {
	p, err := m.lock.Participants(ctx)
	if err != nil {
		return nil, fmt.Errorf("mutex: participants %s: %w", m.lock.Core().Path(), err)
	}
	return p, nil
}
