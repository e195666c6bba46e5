package multilock

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/recipe"
)

// Hold is one acquisition of a [MultiLock]: the holds of its locks, taken
// as one. It is the value that [MultiLock.Acquire] returns, which any
// goroutine may use: hand it to the goroutine that watches for the loss
// of any lock, reads the fencing tokens, or finishes the work and
// releases every lock with [Hold.Release].
//
// A Hold is safe for concurrent use. Its methods keep working after the
// release: Node and Nodes keep their paths, and FencingToken,
// FencingTokens and Release return [ErrNotOwner]. The zero Hold, and a
// nil *Hold, hold nothing: Lost is closed, Node is "", Nodes is empty,
// and the others return ErrNotOwner. Use the *Hold; do not copy the Hold
// it points to.
type Hold struct {
	members  []Member // in acquire order
	released atomic.Bool
	done     chan struct{} // closed at the release: ends the watch of Lost

	lostOnce sync.Once
	lost     <-chan struct{}
}

func newHold(members []Member) *Hold {
	return &Hold{members: members, done: make(chan struct{})}
}

func (h *Hold) usable() bool { return h != nil && len(h.members) > 0 }

// Lost returns a channel closed when any lock's hold can no longer be
// trusted: as soon as the Lost channel of one member closes. Any goroutine
// may wait on it; a watchdog that cancels the work when it closes is the
// usual way.
//
// With more than one lock, the first call starts one goroutine that waits
// on the members' channels; it ends when one closes or when the hold is
// released, so after the release the channel no longer follows the
// members. A nil or zero Hold's channel is already closed.
func (h *Hold) Lost() <-chan struct{} {
	if !h.usable() {
		return chans.Closed()
	}
	h.lostOnce.Do(func() { h.lost = h.join() })
	return h.lost
}

// join returns a channel closed when the first member's Lost channel
// closes.
func (h *Hold) join() <-chan struct{} {
	if len(h.members) == 1 {
		return h.members[0].Lost()
	}
	cases := make([]reflect.SelectCase, 0, len(h.members)+1)
	for _, m := range h.members {
		lost := m.Lost()
		if chans.IsClosed(lost) {
			return chans.Closed()
		}
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(lost)})
	}
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(h.done)})
	ch := make(chan struct{})
	go func() {
		if i, _, _ := reflect.Select(cases); i < len(h.members) {
			close(ch)
		}
	}()
	return ch
}

// Check reports whether every lock's hold may still be trusted at the
// moment of the call, without waiting for [Hold.Lost]: it returns nil
// only while the hold is not released and each member's Lost is open and
// its own Check (every hold of this module has one: it reads the client's
// session lease on the monotonic clock now, see
// [framework.Client.CheckLease]) passes. A member of your own without a
// Check method is judged by its Lost alone. The error, of the first lock
// that fails, matches [ErrSessionLost] and [framework.ErrSessionLost] for a
// lost lock; after the release, and for a nil or zero Hold, it is
// [ErrNotOwner].
//
// Check covers the time up to the call, not the pause between it and the
// write it guards: only the fencing tokens, checked by the resources,
// cover that. Check, then write with [Hold.FencingTokens].
func (h *Hold) Check() error {
	if !h.usable() || h.released.Load() {
		return ErrNotOwner
	}
	for i, m := range h.members {
		if c, ok := m.(interface{ Check() error }); ok {
			if err := c.Check(); err != nil {
				return exported(errtext.Errorf("multilock: check lock %d: %w", i, err))
			}
		}
		if chans.IsClosed(m.Lost()) {
			return fmt.Errorf("%w: lock %d (%s): its Lost() closed", ErrSessionLost, i, m.Node())
		}
	}
	return nil
}

// FencingToken returns the fencing token of the first lock's hold, the
// lock that every process takes first: with NewFromPaths, the first
// path's mutex. Use [Hold.FencingTokens] to fence each lock's resource
// with its own token. After the release it returns [ErrNotOwner].
func (h *Hold) FencingToken() (int64, error) {
	if !h.usable() || h.released.Load() {
		return 0, ErrNotOwner
	}
	tok, err := h.members[0].FencingToken()
	if err != nil {
		return 0, exported(errtext.Errorf("multilock: fencing token of lock 0: %w", err))
	}
	return tok, nil
}

// FencingTokens returns the fencing token of each lock's hold, in the
// order of the locks. If any fails, it returns nil and their errors
// joined. After the release it returns [ErrNotOwner].
func (h *Hold) FencingTokens() ([]int64, error) {
	if !h.usable() || h.released.Load() {
		return nil, ErrNotOwner
	}
	toks := make([]int64, len(h.members))
	var errs []error
	for i, m := range h.members {
		tok, err := m.FencingToken()
		if err != nil {
			errs = append(errs, exported(errtext.Errorf("multilock: fencing token of lock %d: %w", i, err)))
		}
		toks[i] = tok
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return toks, nil
}

// Node returns the path of the first lock's node (see
// [Hold.FencingToken]), or "" for a nil or zero Hold.
func (h *Hold) Node() string {
	if !h.usable() {
		return ""
	}
	return h.members[0].Node()
}

// Session returns the session that made the first lock's node (see
// [Hold.FencingToken]): with NewFromPaths, the session of every lock's
// node. A member that does not report its session (a Locker of your own
// without a Session method), a nil or zero Hold give the zero Session,
// which is never valid. Lost follows every member's loss, whatever their
// sessions.
func (h *Hold) Session() framework.Session {
	if !h.usable() {
		return framework.Session{}
	}
	if s, ok := h.members[0].(interface{ Session() framework.Session }); ok {
		return s.Session()
	}
	return framework.Session{}
}

// Nodes returns the path of each lock's node, in the order of the locks.
func (h *Hold) Nodes() []string {
	if !h.usable() {
		return nil
	}
	nodes := make([]string, len(h.members))
	for i, m := range h.members {
		nodes[i] = m.Node()
	}
	return nodes
}

// Release releases every lock's hold in reverse order, from any goroutine,
// going on past failures, and returns their errors joined. A second
// Release returns [ErrNotOwner]. Release after a loss still cleans up.
// Each lock's release returns when ctx ends (its delete goes on in the
// background), and at once, with an error matching [ErrSessionLost], for
// a lock whose session is lost.
func (h *Hold) Release(ctx context.Context) error {
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if !h.usable() || !h.released.CompareAndSwap(false, true) {
		return ErrNotOwner
	}
	close(h.done)
	return undo(ctx, h.members)
}
