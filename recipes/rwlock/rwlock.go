package rwlock

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/internal/recipe"
)

// Errors of the read/write lock. Match them with errors.Is.
var (
	// ErrNotOwner reports a Release by a goroutine that holds nothing on
	// that side, or a release or fencing token of a Hold already released.
	ErrNotOwner = errors.New("rwlock: not held")
	// ErrInvalidArgument reports a bad argument: a nil client, an invalid
	// path, a nil option, a negative wait, a nil ctx, a nil or zero Lock
	// or Mutex. The error also matches the framework's specific sentinel
	// (framework.ErrNilClient, framework.ErrInvalidPath or
	// framework.ErrInvalidArgument).
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
	// the retry policy gave up, a holder's FencingToken was asked after
	// the loss, or a hold's Check or Release found it lost (Check also
	// when the session's lease has ended on the client's clock).
	ErrSessionLost = errtext.Sentinel("rwlock: the lock node's session is lost", framework.ErrSessionLost)
)

// Lock is a distributed read/write lock: a read side and a write side on
// one path. It is safe for concurrent use.
//
// The zero Lock is not usable: make one with [New]. Its sides, and those
// of a nil *Lock, are nil *Mutex values, whose methods return an error
// matching [ErrInvalidArgument] (or report false); none panics. A Lock
// must not be copied after first use.
type Lock struct {
	read, write *Mutex
}

// Mutex is one side of a [Lock], the read lock or the write lock, with the
// methods of mutex.Mutex. It is reentrant per goroutine and safe for
// concurrent use. The zero Mutex, and a nil *Mutex, are not usable: their
// methods return an error matching [ErrInvalidArgument] (or report
// false), and never panic.
type Mutex struct {
	lock *lockcore.Reentrant[*Hold]
	name string // readName or writeName
}

// Hold is one acquisition of one side of a [Lock]: the value that
// [Mutex.Acquire] returns, which any goroutine may use. Hand it to the
// goroutine that watches for the loss of the lock, reads its fencing
// token, or finishes the work and releases it. A nested Acquire of the
// same side by the goroutine that acquired it returns the same Hold,
// counted: each [Hold.Release] undoes one acquire, and the last one
// deletes the node.
//
// A Hold is safe for concurrent use. Its methods keep working after the
// release: Lost keeps its state, Node its path, and FencingToken and
// Release return [ErrNotOwner]. The zero Hold, and a nil *Hold, hold
// nothing: Lost is closed, Node is "", and FencingToken and Release
// return ErrNotOwner. Use the *Hold; do not copy the Hold it points to.
type Hold struct {
	h *lockcore.ReentrantHold
}

// Option configures a Lock. An option given a bad value returns an
// error matching [ErrInvalidArgument], which the constructor returns.
type Option func(*options) error

type options struct {
	data                      []byte
	readRevoked, writeRevoked func(*Hold)
}

// WithData sets the data stored in both sides' lock nodes instead of the
// client's default data.
func WithData(b []byte) Option {
	return func(o *options) error { o.data = append([]byte{}, b...); return nil }
}

// New returns a read/write lock on path. It does no I/O. A nil client, an
// invalid path or a nil option is an error matching [ErrInvalidArgument].
func New(client *framework.Client, path string, opts ...Option) (*Lock, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	var o options
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	if o.data == nil {
		o.data = client.DefaultData()
	}
	wcore, err := lockcore.New(client, path, writeName, writePolicy, readName)
	if err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	rcore, err := lockcore.New(client, path, readName, readPolicy, writeName)
	if err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	errs := lockcore.Errors{
		Prefix:        "rwlock",
		Invalid:       ErrInvalidArgument,
		NotOwner:      ErrNotOwner,
		NodeVanished:  ErrNodeVanished,
		SessionLost:   ErrSessionLost,
		OwnerVanished: ErrWriteLost,
	}
	wrap := func(h *lockcore.ReentrantHold) *Hold { return &Hold{h} }
	errs.Lock = "write lock"
	wcfg := lockcore.ReentrantConfig{Data: o.data, Errors: errs, Kind: framework.KindWriteLock}
	revocableSide(&wcfg, o.writeRevoked)
	write := &Mutex{lock: lockcore.NewReentrant(wcore, wcfg, wrap), name: writeName}
	// A goroutine holding the write lock gets the read lock at once, in
	// the write node's place in the queue (CURATOR-621).
	errs.Lock = "read lock"
	rcfg := lockcore.ReentrantConfig{Data: o.data, Errors: errs, Grant: write.lock.Current, Kind: framework.KindReadLock}
	revocableSide(&rcfg, o.readRevoked)
	read := &Mutex{lock: lockcore.NewReentrant(rcore, rcfg, wrap), name: readName}
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

func (m *Mutex) usable() error {
	if m == nil || m.lock == nil {
		return recipe.Zero(ErrInvalidArgument, "Mutex")
	}
	return nil
}

// Acquire waits until the calling goroutine holds this side, or ctx ends,
// and returns the hold. If the goroutine already holds it, Acquire counts
// one more acquire on the same Hold, without I/O. The read side is
// granted at once to a goroutine that holds the write side (a
// downgrade); if that write hold's node is gone or its session lost, the
// error matches [ErrWriteLost] and no node is left.
//
// A cancelled wait deletes its node and returns the ctx error. If the
// contender's node vanishes, or its session is lost, the client's retry
// policy decides whether to queue again; when it gives up, the error
// matches [ErrNodeVanished] or [ErrSessionLost].
func (m *Mutex) Acquire(ctx context.Context) (*Hold, error) {
	if err := m.usable(); err != nil {
		return nil, err
	}
	h, _, err := m.lock.Acquire(ctx, -1)
	return h, err
}

// TryAcquire is [Mutex.Acquire] with a bound, as Curator's acquire(time,
// unit): it returns nil, false and no error when wait passes first, and
// leaves no node behind. wait == 0 tries once. A negative wait is an
// error matching [ErrInvalidArgument].
func (m *Mutex) TryAcquire(ctx context.Context, wait time.Duration) (*Hold, bool, error) {
	if err := m.usable(); err != nil {
		return nil, false, err
	}
	return m.lock.TryAcquire(ctx, wait)
}

// Release undoes one acquire of the hold on this side that the calling
// goroutine acquired, as Curator's release() does for the calling thread:
// it is [Hold.Release] on that hold. It returns [ErrNotOwner] if the
// goroutine holds nothing on this side. If the delete fails, the hold is
// still dropped, the lock stays usable, and a guaranteed delete finishes
// the job in the background.
func (m *Mutex) Release(ctx context.Context) error {
	if err := m.usable(); err != nil {
		return err
	}
	return m.lock.Release(ctx)
}

// IsAcquiredInThisProcess reports whether any goroutine holds this side
// through this Lock.
func (m *Mutex) IsAcquiredInThisProcess() bool {
	return m.usable() == nil && m.lock.IsAcquiredInThisProcess()
}

// IsOwnedByCurrentGoroutine reports whether the calling goroutine holds
// this side.
func (m *Mutex) IsOwnedByCurrentGoroutine() bool {
	return m.usable() == nil && m.lock.IsOwnedByCurrentGoroutine()
}

// Participants returns the paths of this side's nodes in queue order, as
// Curator's getParticipantNodes does: the read side lists the readers'
// nodes, the write side the writers'.
func (m *Mutex) Participants(ctx context.Context) ([]string, error) {
	if err := m.usable(); err != nil {
		return nil, err
	}
	all, err := m.lock.Participants(ctx)
	if err != nil {
		return nil, err
	}
	mine := all[:0]
	for _, p := range all {
		if _, name := framework.SplitPath(p); strings.Contains(name, m.name) {
			mine = append(mine, p)
		}
	}
	return mine, nil
}

func (h *Hold) inner() *lockcore.ReentrantHold {
	if h == nil {
		return nil
	}
	return h.h
}

// Lost returns a channel closed when the hold can no longer be trusted:
// on Suspended or Lost under the client's standard error policy, on Lost
// only under the session policy, and in either case when the session its
// node belongs to is lost, or the client closes. Any goroutine may wait on
// it; a watchdog that cancels the work when it closes is the usual way.
// Releasing the hold does not close it.
func (h *Hold) Lost() <-chan struct{} { return h.inner().Lost() }

// FencingToken returns the hold's fencing token: the lock path's pzxid,
// read after the grant, a ZooKeeper transaction ID that grows with every
// acquisition of the path, by readers and writers alike. A resource that
// remembers the highest token it has seen can reject a stale holder's
// writes.
//
// If the token has to be read (a hold handed over by its predecessor's
// delete: one bounded round trip on the first call), the read fails with
// an error matching [ErrSessionLost] once the hold's session is lost,
// [ErrNodeVanished] if the node is gone, or the read's own error
// (connection loss, timeout), and is tried again on the next call. After
// the release it returns [ErrNotOwner].
func (h *Hold) FencingToken() (int64, error) {
	if h.inner() == nil {
		return 0, ErrNotOwner
	}
	return h.h.FencingToken()
}

// Node returns the path of the hold's node, or "" for a nil or zero Hold.
func (h *Hold) Node() string { return h.inner().Node() }

// Check reports whether the hold may still be trusted at the moment of
// the call, without waiting for [Hold.Lost]: it returns nil only while the
// hold is not released, its session is valid, Lost is open, and the
// client's session lease (read on the monotonic clock now, see
// [framework.Client.CheckLease]) has not ended under the client's error
// policy. Lost closes on a timer goroutine, which a paused process (a GC
// pause, a stopped VM) runs late; Check reads the clock itself. The error
// matches [ErrSessionLost] and [framework.ErrSessionLost] (and
// [framework.ErrClosed] once the client is closed); after the release, and
// for a nil or zero Hold, it is [ErrNotOwner].
//
// Check covers the time up to the call, not the pause between it and the
// write it guards: only the fencing token, checked by the resource, covers
// that. Check, then write with [Hold.FencingToken].
func (h *Hold) Check() error {
	if h.inner() == nil {
		return ErrNotOwner
	}
	return h.h.Check()
}

// Release undoes one acquire of the hold, from any goroutine; the last one
// deletes the node. It returns [ErrNotOwner] once the hold is released.
// If the delete fails, the hold is still dropped, the lock stays usable,
// and a guaranteed delete finishes the job in the background.
//
// The last Release returns when ctx ends, with ctx's error, and the
// delete goes on in the background. If the hold's session is already lost
// there is nothing to wait for: it returns at once with an error matching
// [ErrSessionLost] (the server deletes the node with its session).
func (h *Hold) Release(ctx context.Context) error {
	if h.inner() == nil {
		return ErrNotOwner
	}
	return h.h.Release(ctx)
}

// Session returns the session that made the hold's node: the hold is
// trusted only while it is valid. A nil or zero Hold returns the zero
// Session, which is never valid.
func (h *Hold) Session() framework.Session {
	if h.inner() == nil {
		return framework.Session{}
	}
	return h.h.Hold.Session()
}
