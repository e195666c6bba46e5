package rwlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/lockcore"
)

// Errors of the read/write lock.
var (
	ErrNotOwner        = errors.New("rwlock: not held by this goroutine")
	ErrInvalidArgument = errors.New("rwlock: invalid argument")
	// ErrWriteLost reports a downgrade by a goroutine whose write lock's
	// node is gone, or whose session is lost: the read lock is not granted.
	ErrWriteLost = errors.New("rwlock: write lock lost, cannot downgrade")
	// ErrNodeVanished reports that the lock node is gone: a contender's
	// node kept vanishing (its session expired) until the retry policy gave
	// up, or a holder's FencingToken found it gone.
	ErrNodeVanished = errors.New("rwlock: lock node vanished (session expired?)")
	// ErrSessionLost reports that the session the lock node belongs to is
	// no longer the client's, so the node is not trusted even if the
	// server still lists it: a contender's session kept being lost until
	// the retry policy gave up, or a holder's FencingToken was asked after
	// the loss.
	ErrSessionLost = errors.New("rwlock: the lock node's session is lost")
)

// Lock is a distributed read/write lock: a read side and a write side on
// one path. It is safe for concurrent use.
type Lock struct {
	read, write *Mutex
}

// Mutex is one side of a Lock, the read lock or the write lock, with the
// methods of mutex.Mutex. It is reentrant per goroutine and safe for
// concurrent use.
type Mutex struct {
	lock *lockcore.Reentrant
	name string // readName or writeName
	side string // "read" or "write", for errors
}

// Option configures a Lock.
type Option func(*options)

type options struct {
	data []byte
}

// WithData sets the data stored in both sides' lock nodes instead of the
// client's default data.
func WithData(b []byte) Option {
	return func(o *options) { o.data = append([]byte{}, b...) }
}

// New returns a read/write lock on path. It does no I/O.
func New(client *framework.Client, path string, opts ...Option) (*Lock, error) {
	if client == nil {
		return nil, fmt.Errorf("rwlock: %w", framework.ErrNilClient)
	}
	var o options
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalidArgument)
		}
		opt(&o)
	}
	if o.data == nil {
		o.data = client.DefaultData()
	}
	wcore, err := lockcore.New(client, path, writeName, writePolicy, readName)
	if err != nil {
		return nil, fmt.Errorf("rwlock: %w", err)
	}
	rcore, err := lockcore.New(client, path, readName, readPolicy, writeName)
	if err != nil {
		return nil, fmt.Errorf("rwlock: %w", err)
	}
	write := &Mutex{
		lock: lockcore.NewReentrant(wcore, lockcore.ReentrantConfig{Data: o.data}),
		name: writeName,
		side: "write",
	}
	// A goroutine holding the write lock gets the read lock at once, in
	// the write node's place in the queue (CURATOR-621).
	read := &Mutex{
		lock: lockcore.NewReentrant(rcore, lockcore.ReentrantConfig{Data: o.data, Grant: write.lock.Current}),
		name: readName,
		side: "read",
	}
	return &Lock{read: read, write: write}, nil
}

// ReadLock returns the read side: shared with other readers, excluded by
// a writer that holds the lock or is queued ahead.
func (l *Lock) ReadLock() *Mutex {
	if l == nil {
		return nil
	}
	return l.read
}

// WriteLock returns the write side: exclusive.
func (l *Lock) WriteLock() *Mutex {
	if l == nil {
		return nil
	}
	return l.write
}

func (m *Mutex) check() error {
	if m == nil || m.lock == nil {
		return fmt.Errorf("%w: nil lock", ErrInvalidArgument)
	}
	return nil
}

// Acquire waits until the calling goroutine holds this side, or ctx ends.
// If the goroutine already holds it, Acquire only counts, without I/O. The
// read side is granted at once to a goroutine that holds the write side.
// A cancelled wait deletes its node and returns the ctx error.
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
	if err := m.check(); err != nil {
		return false, err
	}
	ok, err := m.lock.Acquire(ctx, wait)
	if errors.Is(err, lockcore.ErrOwnerVanished) {
		err = fmt.Errorf("%w (%w)", ErrWriteLost, err)
	}
	if err != nil {
		return false, fmt.Errorf("rwlock: acquire %s lock %s: %w", m.side, m.lock.Core().Path(), exported(err))
	}
	return ok, nil
}

// Release undoes one Acquire of the calling goroutine; the last one
// deletes the lock node. It returns ErrNotOwner if the goroutine holds
// nothing. If the delete fails, the hold is still dropped, the lock stays
// usable, and a guaranteed delete finishes the job in the background.
func (m *Mutex) Release(ctx context.Context) error {
	if err := m.check(); err != nil {
		return err
	}
	err := m.lock.Release(ctx)
	if errors.Is(err, lockcore.ErrNotOwner) {
		return ErrNotOwner
	}
	if err != nil {
		return fmt.Errorf("rwlock: release %s lock %s: %w", m.side, m.lock.Core().Path(), err)
	}
	return nil
}

// IsAcquiredInThisProcess reports whether any goroutine holds this side
// through this Lock.
func (m *Mutex) IsAcquiredInThisProcess() bool {
	return m.check() == nil && m.lock.IsAcquiredInThisProcess()
}

// IsOwnedByCurrentGoroutine reports whether the calling goroutine holds
// this side.
func (m *Mutex) IsOwnedByCurrentGoroutine() bool {
	return m.check() == nil && m.lock.Current() != nil
}

// FencingToken returns the fencing token of the calling goroutine's hold
// on this side: the lock path's pzxid, read after the grant, a ZooKeeper
// transaction ID that grows with every acquisition of the path. A
// resource that remembers the highest token it has seen can reject a
// stale holder's writes.
//
// It returns ErrNotOwner if the goroutine holds nothing on this side. If
// the token has to be read (one bounded round trip), the read fails with
// an error matching ErrSessionLost once the hold's session is lost,
// ErrNodeVanished if the node is gone, or the read's own error
// (connection loss, timeout), and is tried again on the next call. Call
// it only while holding the lock.
func (m *Mutex) FencingToken() (int64, error) {
	if err := m.check(); err != nil {
		return 0, err
	}
	tok, err := m.lock.FencingToken()
	if errors.Is(err, lockcore.ErrNotOwner) {
		return 0, ErrNotOwner
	}
	if err != nil {
		return 0, fmt.Errorf("rwlock: fencing token %s: %w", m.lock.Core().Path(), exported(err))
	}
	return tok, nil
}

// exported makes the lock core's conditions match this package's
// sentinels.
func exported(err error) error { return lockcore.Export(err, ErrNodeVanished, ErrSessionLost) }

// Node returns the path of the calling goroutine's node on this side, or "".
func (m *Mutex) Node() string {
	if m.check() != nil {
		return ""
	}
	return m.lock.Node()
}

// Lost returns a channel closed when the calling goroutine's hold on this
// side can no longer be trusted (see the package doc). If the goroutine
// holds nothing the channel is already closed.
func (m *Mutex) Lost() <-chan struct{} {
	if m.check() != nil {
		return closed
	}
	return m.lock.Lost()
}

var closed = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// Participants returns the paths of this side's nodes in queue order, as
// Curator's getParticipantNodes does: the read side lists the readers'
// nodes, the write side the writers'.
func (m *Mutex) Participants(ctx context.Context) ([]string, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	all, err := m.lock.Participants(ctx)
	if err != nil {
		return nil, fmt.Errorf("rwlock: participants %s: %w", m.lock.Core().Path(), err)
	}
	mine := all[:0]
	for _, p := range all {
		if _, name := framework.SplitPath(p); strings.Contains(name, m.name) {
			mine = append(mine, p)
		}
	}
	return mine, nil
}
