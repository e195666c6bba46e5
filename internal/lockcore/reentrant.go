package lockcore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/goid"
	"github.com/go-curator/curator/internal/observe"
	"github.com/go-curator/curator/internal/recipe"
)

// ReentrantConfig configures a Reentrant lock.
type ReentrantConfig struct {
	// Data is written to each new lock node.
	Data []byte
	// Errors names the lock's conditions for its users.
	Errors Errors
	// Grant, if set, runs on the acquiring goroutine before a new node is
	// made. If it returns a hold (of another lock on the same path), the
	// lock is taken at once beside it with AcquireAt; if it returns nil,
	// the lock is queued for with Acquire. The read side of a read/write
	// lock uses it for a write holder's downgrade.
	Grant func() *Hold
	// OnHold, if set, runs after each new hold (not after a nested
	// acquire), once the hold is the goroutine's. The func it returns, if
	// any, runs when the hold ends, before its node is deleted (or at once,
	// if the hold was released before OnHold returned). Revocable watches
	// for revocation here.
	OnHold func(h *ReentrantHold) (stop func())
	// Kind names the lock in the client's metrics (framework.KindMutex,
	// ...): each new hold's wait and each hold's time are reported under
	// it (see framework.Metrics).
	Kind string
}

// Reentrant is a lock over a Core that is reentrant per goroutine, as
// Curator's InterProcessMutex is per thread: it keeps a map from goroutine
// to hold, so a nested Acquire costs no I/O and returns the same hold,
// counted, and the node goes when the count reaches 0. H is the type of
// the hold the recipe hands out: wrap makes one per new hold. It is safe
// for concurrent use.
type Reentrant[H any] struct {
	base
	wrap func(*ReentrantHold) H
}

// base is the part of a Reentrant that its holds reach.
type base struct {
	core *Core
	cfg  ReentrantConfig

	mu    sync.Mutex
	holds map[int64]*ReentrantHold // by the goroutine that acquired it
}

// ReentrantHold is one hold of a Reentrant with its count of acquires: a
// value any goroutine may use. It is safe for concurrent use. A nil
// ReentrantHold holds nothing.
type ReentrantHold struct {
	*Hold
	b     *base
	gid   int64 // the goroutine that acquired it
	outer any   // the recipe's hold, made by wrap
	stop  func()
	obs   observe.Hold // times the hold for the metrics hook
	count int          // acquires not yet released; guarded by b.mu
}

// NewReentrant returns a reentrant lock over core, whose holds the recipe
// hands out as wrap makes them. It does no I/O.
func NewReentrant[H any](core *Core, cfg ReentrantConfig, wrap func(*ReentrantHold) H) *Reentrant[H] {
	cfg.Data = append([]byte(nil), cfg.Data...)
	return &Reentrant[H]{
		base: base{core: core, cfg: cfg, holds: make(map[int64]*ReentrantHold)},
		wrap: wrap,
	}
}

// Core returns the lock's core.
func (r *Reentrant[H]) Core() *Core { return r.core }

// Acquire takes the lock for the calling goroutine and returns its hold,
// or, if the goroutine holds it already, counts one more acquire on the
// same hold and returns it. wait < 0 waits until ctx ends, wait == 0 tries
// once, wait > 0 waits at most that long. When the wait runs out it
// returns false and no error. On any error or timeout no node is left.
//
// No hold is returned with its Lost() already closed: if the goroutine's
// hold was lost, a nested Acquire returns an error matching ErrSessionLost
// (see LostError) and leaves the count as it was, until that hold is
// released; a downgrade beside a lost hold (Grant) returns
// ErrOwnerVanished and ErrSessionLost; and a new hold lost before Acquire
// returns is deleted, with the same error.
func (r *Reentrant[H]) Acquire(ctx context.Context, wait time.Duration) (H, bool, error) {
	var zero H
	if err := recipe.CheckCtx(r.cfg.Errors.Invalid, ctx); err != nil {
		return zero, false, err
	}
	id := goid.Get()
	r.mu.Lock()
	if h := r.holds[id]; h != nil {
		if chans.IsClosed(h.Hold.Lost()) {
			// A dead hold is not handed out again, and not counted: the
			// caller must release it and acquire anew.
			r.mu.Unlock()
			return zero, false, r.cfg.Errors.wrap("acquire", r.core.Path(), LostError(h.Node()))
		}
		h.count++
		r.mu.Unlock()
		return h.outer.(H), true, nil
	}
	r.mu.Unlock()
	var lh *Hold
	var err error
	w := observe.Begin(r.core.Client(), r.cfg.Kind)
	if owner := r.granted(); owner != nil {
		if chans.IsClosed(owner.Lost()) {
			err = fmt.Errorf("%w (%w)", ErrOwnerVanished, LostError(owner.Node()))
		} else {
			lh, err = r.core.AcquireAt(ctx, r.cfg.Data, owner)
		}
	} else {
		lh, err = r.core.Acquire(ctx, r.cfg.Data, wait)
	}
	if errors.Is(err, ErrTimeout) {
		w.End(false, nil)
		return zero, false, nil
	}
	if err == nil && chans.IsClosed(lh.Lost()) {
		// Lost between the grant and now: never hand out a hold whose
		// Lost() is already closed.
		r.core.Delete(ctx, lh.Node())
		err = LostError(lh.Node())
	}
	w.End(err == nil, err)
	if err != nil {
		return zero, false, r.cfg.Errors.wrap("acquire", r.core.Path(), err)
	}
	h := &ReentrantHold{Hold: lh, b: &r.base, gid: id, count: 1, obs: observe.Held(r.core.Client(), r.cfg.Kind)}
	out := r.wrap(h)
	h.outer = out
	r.mu.Lock()
	r.holds[id] = h
	r.mu.Unlock()
	if r.cfg.OnHold != nil {
		stop := r.cfg.OnHold(h)
		r.mu.Lock()
		released := h.count == 0
		if !released {
			h.stop = stop
		}
		r.mu.Unlock()
		if released && stop != nil {
			stop()
		}
	}
	return out, true, nil
}

// LostError returns the error of an acquire refused because the hold it
// would return, or stand beside, lost its Lost() signal (a Suspended
// under the standard error policy, or its session lost): it matches
// ErrSessionLost, which every recipe exports as its own loss sentinel.
func LostError(node string) error {
	return fmt.Errorf("%w: the hold of %s was lost (Suspended, or its session lost)", ErrSessionLost, node)
}

// TryAcquire is Acquire with a bound that must not be negative.
func (r *Reentrant[H]) TryAcquire(ctx context.Context, wait time.Duration) (H, bool, error) {
	if wait < 0 {
		var zero H
		return zero, false, r.cfg.Errors.invalid("negative wait %v", wait)
	}
	return r.Acquire(ctx, wait)
}

func (b *base) granted() *Hold {
	if b.cfg.Grant == nil {
		return nil
	}
	return b.cfg.Grant()
}

// Release undoes one Acquire of the hold the calling goroutine acquired;
// the last one deletes the lock node. It returns the NotOwner error if the
// goroutine holds nothing.
func (r *Reentrant[H]) Release(ctx context.Context) error {
	r.mu.Lock()
	h := r.holds[goid.Get()]
	r.mu.Unlock()
	if h == nil {
		return r.cfg.Errors.NotOwner
	}
	return h.Release(ctx)
}

// Current returns the calling goroutine's hold, or nil.
func (r *Reentrant[H]) Current() *Hold {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.holds[goid.Get()]; h != nil {
		return h.Hold
	}
	return nil
}

// IsAcquiredInThisProcess reports whether any goroutine holds the lock
// through this instance.
func (r *Reentrant[H]) IsAcquiredInThisProcess() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.holds) > 0
}

// IsOwnedByCurrentGoroutine reports whether the calling goroutine holds
// the lock through this instance.
func (r *Reentrant[H]) IsOwnedByCurrentGoroutine() bool { return r.Current() != nil }

// Participants returns the paths of every contender's node under the
// lock's path, in queue order.
func (r *Reentrant[H]) Participants(ctx context.Context) ([]string, error) {
	p, err := r.core.Participants(ctx)
	if err != nil {
		return nil, r.cfg.Errors.wrap("participants", r.core.Path(), err)
	}
	return p, nil
}

// Release undoes one acquire of the hold, from any goroutine; the last one
// deletes the lock node. It returns the NotOwner error once the hold is
// released. If the delete fails, the hold is still dropped, so the lock
// stays usable, and a guaranteed delete finishes the job in the
// background.
//
// The last Release returns when ctx ends (the delete goes on in the
// background), and at once, with an error matching ErrSessionLost, when
// the hold's session is no longer the client's: the node is the server's
// to delete with that session, and a background delete only speeds that
// up (see recipe.Releasing).
func (h *ReentrantHold) Release(ctx context.Context) error {
	if h == nil {
		return ErrNotOwner
	}
	b := h.b
	if err := recipe.CheckCtx(b.cfg.Errors.Invalid, ctx); err != nil {
		return err
	}
	b.mu.Lock()
	if h.count == 0 {
		b.mu.Unlock()
		return b.cfg.Errors.NotOwner
	}
	if h.count--; h.count > 0 {
		b.mu.Unlock()
		return nil
	}
	if b.holds[h.gid] == h {
		delete(b.holds, h.gid)
	}
	stop := h.stop
	h.stop = nil
	b.mu.Unlock()
	h.obs.Release(h.Hold.Lost())
	if stop != nil {
		stop()
	}
	if !h.Hold.Session().Valid() {
		return b.cfg.Errors.wrap("release", b.core.Path(), Abandon(b.core, h.Node()))
	}
	return b.cfg.Errors.wrap("release", b.core.Path(), b.core.Delete(recipe.Releasing(ctx), h.Node()))
}

// Abandon releases node, the node of a hold of core whose session is no
// longer the client's, without waiting: the core forgets it, and its delete goes on in
// the background (the abandoned session may live on in the server until
// its timeout). It returns the loss error, which also matches
// framework.ErrClosed once the client is closed.
func Abandon(core *Core, node string) error {
	// A Releasing ctx already done: Core.Delete gives up at once and leaves
	// the delete to the background.
	gone, cancel := context.WithCancel(recipe.Releasing(context.Background()))
	cancel()
	_ = core.Delete(gone, node)
	err := fmt.Errorf("%w: %s: its session is no longer the client's (the server deletes its node)", ErrSessionLost, node)
	if cerr := core.Client().Check(); errors.Is(cerr, framework.ErrClosed) {
		return errtext.Also(err, cerr)
	}
	return err
}

// Check reports, at the moment of the call, whether the hold may still be
// trusted (see Hold.Check): nil only while its session is valid, its Lost
// channel is open, and the client's lease has not ended on the client's
// clock. Once the hold is released it returns the NotOwner error.
func (h *ReentrantHold) Check() error {
	if h == nil {
		return ErrNotOwner
	}
	if !h.Held() {
		return h.b.cfg.Errors.NotOwner
	}
	return h.b.cfg.Errors.wrap("check", h.b.core.Path(), h.Hold.Check(h.b.core.Client()))
}

// Held reports whether the hold is not yet released.
func (h *ReentrantHold) Held() bool {
	if h == nil {
		return false
	}
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	return h.count > 0
}

// FencingToken returns the hold's fencing token (see Hold.FencingToken),
// or the NotOwner error once the hold is released.
func (h *ReentrantHold) FencingToken() (int64, error) {
	if h == nil {
		return 0, ErrNotOwner
	}
	if !h.Held() {
		return 0, h.b.cfg.Errors.NotOwner
	}
	tok, err := h.Hold.FencingToken()
	if err != nil {
		return 0, h.b.cfg.Errors.wrap("fencing token", h.b.core.Path(), err)
	}
	return tok, nil
}

// Node returns the path of the hold's node, or "" for a nil hold.
func (h *ReentrantHold) Node() string {
	if h == nil {
		return ""
	}
	return h.Hold.Node()
}

// Lost returns the hold's loss signal; it stays as it is after the
// release.
func (h *ReentrantHold) Lost() <-chan struct{} {
	if h == nil {
		return chans.Closed()
	}
	return h.Hold.Lost()
}
