package semaphoremutex

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/goid"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/recipes/semaphorev2"
)

// Errors of the lock. Match them with errors.Is.
var (
	// ErrNotOwner reports a Release when this Mutex holds nothing, or a
	// release or fencing token of a Hold already released.
	ErrNotOwner = errors.New("semaphoremutex: not held")
	// ErrNotHeld is ErrNotOwner.
	//
	// Deprecated: Use ErrNotOwner, the name every recipe gives the
	// condition.
	ErrNotHeld = ErrNotOwner
	// ErrInvalidArgument reports a bad argument: a nil client, an invalid
	// path, a nil option, a negative wait, a nil ctx, a nil or zero Mutex.
	// The error also matches the framework's specific sentinel
	// (framework.ErrNilClient, framework.ErrInvalidPath or
	// framework.ErrInvalidArgument).
	ErrInvalidArgument = errors.New("semaphoremutex: invalid argument")
	// ErrNodeVanished reports that an acquire's node kept vanishing (its
	// session expired, or was lost) until the client's retry policy gave
	// up.
	ErrNodeVanished = errors.New("semaphoremutex: node vanished while acquiring (session lost?)")
	// ErrSessionLost reports a hold lost: an acquire whose lease was lost
	// (its Lost() closed: a Suspended under the standard error policy, or
	// its session lost) before the call could return, since no acquire
	// returns a lost hold; a Hold.Check that found the hold lost or its
	// session's lease ended on the client's clock; or a Hold.Release after
	// its session was lost. The error also matches
	// semaphorev2.ErrSessionLost.
	ErrSessionLost = errtext.Sentinel("semaphoremutex: the hold was lost", framework.ErrSessionLost)
)

// Mutex is a distributed lock that is not reentrant and that any goroutine
// may release: Curator's InterProcessSemaphoreMutex. It is safe for
// concurrent use.
//
// The zero Mutex is not usable: make one with [New]. Its methods, and
// those of a nil *Mutex, return an error matching [ErrInvalidArgument] (or
// report false); none panics. A Mutex must not be copied after first use.
type Mutex struct {
	sem *semaphorev2.Semaphore

	mu    sync.Mutex
	holds []*Hold // not yet released, oldest first; more than one only after a loss
}

// Hold is one acquisition of a [Mutex]: the value that [Mutex.Acquire]
// returns, which any goroutine may use. Hand it to the goroutine that
// watches for the loss of the lock, reads its fencing token, or finishes
// the work and releases exactly this hold with [Hold.Release].
//
// A Hold is safe for concurrent use. Its methods keep working after the
// release: Lost keeps its state, Node its path, and FencingToken and
// Release return [ErrNotOwner]. The zero Hold, and a nil *Hold, hold
// nothing: Lost is closed, Node is "", and FencingToken and Release
// return ErrNotOwner. Use the *Hold; do not copy the Hold it points to.
type Hold struct {
	m     *Mutex
	lease *semaphorev2.Lease
	gid   int64 // the goroutine that acquired it
}

// Option configures a Mutex. An option given a bad value returns an
// error matching [ErrInvalidArgument], which the constructor returns.
type Option func(*options) error

type options struct {
	data []byte
}

// WithData sets the data written to the lock's lease nodes (Curator's
// setNodeData on the semaphore), instead of the client's default data.
func WithData(b []byte) Option {
	return func(o *options) error { o.data = append([]byte{}, b...); return nil }
}

// New returns a lock on path. It does no I/O. A nil client, an invalid
// path or a nil option is an error matching [ErrInvalidArgument].
func New(client *framework.Client, path string, opts ...Option) (*Mutex, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	var o options
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	var semOpts []semaphorev2.Option
	if o.data != nil {
		semOpts = append(semOpts, semaphorev2.WithData(o.data))
	}
	sem, err := semaphorev2.New(client, path, 1, semOpts...)
	if err != nil {
		return nil, exported(err)
	}
	return &Mutex{sem: sem}, nil
}

// exported reports an error of the semaphore as this package's: with its
// prefix, matching its sentinels.
func exported(err error) error {
	if err == nil {
		return nil
	}
	err = recipe.Wrapf(ErrInvalidArgument, "semaphoremutex: %w", err)
	switch {
	case errors.Is(err, semaphorev2.ErrInvalidArgument):
		return errtext.Also(err, ErrInvalidArgument)
	case errors.Is(err, semaphorev2.ErrNodeVanished):
		return errtext.Also(err, ErrNodeVanished)
	case errors.Is(err, semaphorev2.ErrSessionLost):
		return errtext.Also(err, ErrSessionLost)
	}
	return err
}

func (m *Mutex) usable() error {
	if m == nil || m.sem == nil {
		return recipe.Zero(ErrInvalidArgument, "Mutex")
	}
	return nil
}

// Acquire waits until it holds the lock, or ctx ends, and returns the
// hold. It blocks while the lock is held, even by this Mutex on this
// goroutine. A cancelled wait leaves no node behind and returns the ctx
// error. If the acquire's node kept vanishing until the client's retry
// policy gave up, the error matches [ErrNodeVanished]; if the hold was
// lost before Acquire could return it, [ErrSessionLost].
func (m *Mutex) Acquire(ctx context.Context) (*Hold, error) {
	if err := m.usable(); err != nil {
		return nil, err
	}
	l, err := m.sem.Acquire(ctx)
	if err != nil {
		return nil, exported(err)
	}
	return m.hold(l), nil
}

// TryAcquire is [Mutex.Acquire] bounded by wait, as Curator's
// acquire(time, unit): it returns nil, false and no error when wait passes
// first, and leaves no node behind. wait == 0 tries once; a negative wait
// is an error matching [ErrInvalidArgument].
func (m *Mutex) TryAcquire(ctx context.Context, wait time.Duration) (*Hold, bool, error) {
	if err := m.usable(); err != nil {
		return nil, false, err
	}
	if wait < 0 {
		return nil, false, recipe.BadArg(ErrInvalidArgument, "negative wait %v", wait)
	}
	l, ok, err := m.sem.TryAcquire(ctx, wait)
	if err != nil {
		return nil, false, exported(err)
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

// Release ends one hold of this Mutex, from any goroutine, as Curator's
// release(): the oldest one the calling goroutine acquired, or, if it
// acquired none (the work was handed to it), the oldest hold of the
// Mutex. It returns [ErrNotOwner] if this Mutex holds nothing. If the
// delete fails the hold is still dropped, the Mutex stays usable, and a
// guaranteed delete finishes the job in the background.
//
// A Mutex holds two holds at once only after a loss: while the holder of
// the first has not released it yet, its node gone with its session, a
// waiting Acquire got a new one. The rule above makes the late Release of
// the lost hold end that hold, never the new one, when the goroutine that
// acquired it releases, or when neither was acquired by the releasing
// goroutine. To be exact whichever goroutine releases, hand the [Hold]
// over and call its Release.
func (m *Mutex) Release(ctx context.Context) error {
	if err := m.usable(); err != nil {
		return err
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	m.mu.Lock()
	h := m.pick()
	if h != nil {
		m.holds = slices.DeleteFunc(m.holds, func(o *Hold) bool { return o == h })
	}
	m.mu.Unlock()
	if h == nil {
		return ErrNotOwner
	}
	return h.end(ctx)
}

// pick returns the hold that Release ends for the calling goroutine, or
// nil. Called with m.mu held.
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

// drop removes h from the holds not yet released, and reports whether it
// was one of them.
func (m *Mutex) drop(h *Hold) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.holds)
	m.holds = slices.DeleteFunc(m.holds, func(o *Hold) bool { return o == h })
	return len(m.holds) < n
}

func (m *Mutex) has(h *Hold) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Contains(m.holds, h)
}

// IsAcquiredInThisProcess reports whether this Mutex has a hold not yet
// released (a lost one included, as in Curator). A nil or zero Mutex holds
// nothing.
func (m *Mutex) IsAcquiredInThisProcess() bool {
	if m.usable() != nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.holds) > 0
}

// Participants returns the names of the lease nodes, as the semaphore's
// Participants: the holder's, plus any contender deciding right now.
func (m *Mutex) Participants(ctx context.Context) ([]string, error) {
	if err := m.usable(); err != nil {
		return nil, err
	}
	p, err := m.sem.Participants(ctx)
	if err != nil {
		return nil, exported(err)
	}
	return p, nil
}

func (h *Hold) usable() bool { return h != nil && h.m != nil && h.lease != nil }

// Release ends this hold, from any goroutine, and no other: it deletes the
// hold's lease node. A second Release, or a Release after
// [Mutex.Release] ended this hold, returns [ErrNotOwner]. If the delete
// fails the hold is still dropped, and a guaranteed delete finishes the
// job in the background.
// Release returns when ctx ends, with ctx's error, the delete going on in
// the background; if the hold's session is already lost, it returns at
// once with an error matching [ErrSessionLost] (the server deletes the
// node with its session).
func (h *Hold) Release(ctx context.Context) error {
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if !h.usable() || !h.m.drop(h) {
		return ErrNotOwner
	}
	return h.end(ctx)
}

// end deletes the lease node of a hold just dropped from its Mutex.
func (h *Hold) end(ctx context.Context) error {
	if err := h.lease.Close(ctx); err != nil {
		return errtext.Errorf("semaphoremutex: release: %w", exported(err))
	}
	return nil
}

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
	if !h.usable() || !h.m.has(h) {
		return ErrNotOwner
	}
	if err := h.lease.Check(); err != nil {
		if errors.Is(err, semaphorev2.ErrNotOwner) {
			return ErrNotOwner
		}
		return exported(err)
	}
	return nil
}

// FencingToken returns the hold's fencing token: the pzxid of
// <path>/leases as read by the read that granted the hold, a ZooKeeper
// transaction ID that grows with every change of the leases, so a later
// holder always has a greater token. A resource that remembers the
// highest token it has seen can reject a stale holder's writes. The token
// is known from the grant, so the call does no I/O. After the release it
// returns [ErrNotOwner].
func (h *Hold) FencingToken() (int64, error) {
	if !h.usable() || !h.m.has(h) {
		return 0, ErrNotOwner
	}
	tok, err := h.lease.FencingToken()
	if err != nil {
		return 0, ErrNotOwner
	}
	return tok, nil
}

// Lost returns a channel closed when the hold can no longer be trusted:
// when the session that made its lease node is lost, whatever the
// client's error policy (a server-reported expiry, the client's simulated
// expiry, a new session, or the client's Close); under the standard error
// policy also at the first Suspended after the grant. Any goroutine may
// wait on it; a watchdog that cancels the work when it closes is the
// usual way. Releasing the hold does not close it. A nil or zero Hold's
// channel is already closed.
func (h *Hold) Lost() <-chan struct{} {
	if !h.usable() {
		return chans.Closed()
	}
	return h.lease.Lost()
}

// Node returns the path of the hold's lease node, or "" for a nil or zero
// Hold.
func (h *Hold) Node() string {
	if !h.usable() {
		return ""
	}
	return h.lease.Node()
}

// Session returns the session that made the hold's lease node: the hold
// is trusted only while it is valid. A nil or zero Hold returns the zero
// Session, which is never valid.
func (h *Hold) Session() framework.Session {
	if !h.usable() {
		return framework.Session{}
	}
	return h.lease.Session()
}
