package lockcore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-curator/curator/internal/goid"
)

// ReentrantConfig configures a Reentrant lock.
type ReentrantConfig struct {
	// Data is written to each new lock node.
	Data []byte
	// Grant, if set, runs on the acquiring goroutine before a new node is
	// made. If it returns a hold (of another lock on the same path), the
	// lock is taken at once beside it with AcquireAt; if it returns nil,
	// the lock is queued for with Acquire. The read side of a read/write
	// lock uses it for a write holder's downgrade.
	Grant func() *Hold
	// OnHold, if set, runs after each new hold (not after a nested
	// acquire). The func it returns, if any, runs when the hold ends,
	// before its node is deleted. The mutex watches for revocation here.
	OnHold func(h *Hold) (stop func())
}

// Reentrant is a lock over a Core that is reentrant per goroutine, as
// Curator's InterProcessMutex is per thread: it keeps a map from goroutine
// to hold and count, so a nested Acquire costs no I/O and the node goes
// when the count reaches 0. It is safe for concurrent use.
type Reentrant struct {
	core *Core
	cfg  ReentrantConfig

	mu    sync.Mutex
	holds map[int64]*reentrantHold // by goroutine ID
}

type reentrantHold struct {
	*Hold
	count int
	stop  func()
}

// NewReentrant returns a reentrant lock over core. It does no I/O.
func NewReentrant(core *Core, cfg ReentrantConfig) *Reentrant {
	cfg.Data = append([]byte(nil), cfg.Data...)
	return &Reentrant{core: core, cfg: cfg, holds: make(map[int64]*reentrantHold)}
}

// Core returns the lock's core.
func (r *Reentrant) Core() *Core { return r.core }

// Acquire takes the lock for the calling goroutine, or counts one more
// acquire if it holds it already. wait < 0 waits until ctx ends, wait == 0
// tries once, wait > 0 waits at most that long. It reports false and no
// error when the wait runs out. On any error or timeout no node is left.
func (r *Reentrant) Acquire(ctx context.Context, wait time.Duration) (bool, error) {
	id := goid.Get()
	r.mu.Lock()
	if h := r.holds[id]; h != nil {
		h.count++
		r.mu.Unlock()
		return true, nil
	}
	r.mu.Unlock()

	var lh *Hold
	var err error
	if owner := r.granted(); owner != nil {
		lh, err = r.core.AcquireAt(ctx, r.cfg.Data, owner)
	} else {
		lh, err = r.core.Acquire(ctx, r.cfg.Data, wait)
	}
	if errors.Is(err, ErrTimeout) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	h := &reentrantHold{Hold: lh, count: 1}
	if r.cfg.OnHold != nil {
		h.stop = r.cfg.OnHold(lh)
	}
	r.mu.Lock()
	r.holds[id] = h
	r.mu.Unlock()
	return true, nil
}

func (r *Reentrant) granted() *Hold {
	if r.cfg.Grant == nil {
		return nil
	}
	return r.cfg.Grant()
}

// Release undoes one Acquire of the calling goroutine; the last one
// deletes the lock node. It returns ErrNotOwner if the goroutine holds
// nothing. If the delete fails, the hold is still dropped, so the lock
// stays usable, and a guaranteed delete finishes the job in the
// background.
func (r *Reentrant) Release(ctx context.Context) error {
	id := goid.Get()
	r.mu.Lock()
	h := r.holds[id]
	if h == nil {
		r.mu.Unlock()
		return ErrNotOwner
	}
	if h.count--; h.count > 0 {
		r.mu.Unlock()
		return nil
	}
	delete(r.holds, id)
	r.mu.Unlock()
	if h.stop != nil {
		h.stop()
	}
	return r.core.Delete(ctx, h.Node())
}

// Current returns the calling goroutine's hold, or nil.
func (r *Reentrant) Current() *Hold {
	id := goid.Get()
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.holds[id]; h != nil {
		return h.Hold
	}
	return nil
}

// IsAcquiredInThisProcess reports whether any goroutine holds the lock
// through this instance.
func (r *Reentrant) IsAcquiredInThisProcess() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.holds) > 0
}

// FencingToken returns the fencing token of the calling goroutine's hold,
// or ErrNotOwner. See Hold.FencingToken.
func (r *Reentrant) FencingToken() (int64, error) {
	h := r.Current()
	if h == nil {
		return 0, ErrNotOwner
	}
	return h.FencingToken()
}

// Node returns the path of the calling goroutine's lock node, or "".
func (r *Reentrant) Node() string {
	if h := r.Current(); h != nil {
		return h.Node()
	}
	return ""
}

// closed is an already closed channel: the Lost signal of no hold.
var closed = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// Lost returns the calling goroutine's hold's loss signal; if the
// goroutine holds nothing, the channel is already closed.
func (r *Reentrant) Lost() <-chan struct{} {
	if h := r.Current(); h != nil {
		return h.Lost()
	}
	return closed
}

// Participants returns the paths of every contender's node under the
// lock's path, in queue order.
func (r *Reentrant) Participants(ctx context.Context) ([]string, error) {
	return r.core.Participants(ctx)
}
