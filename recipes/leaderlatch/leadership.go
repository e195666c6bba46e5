package leaderlatch

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/recipe"
)

// Leadership is one term of a candidate as the leader: a value that any
// goroutine may hold and use. It is safe for concurrent use. The zero
// Leadership is not a leadership: its Lost channel is closed, and
// FencingToken and Release return ErrInvalidArgument.
type Leadership struct {
	latch *Latch
	node  string
	sess  framework.Session
	token int64

	// signal is the client's loss signal taken before the read that
	// elected the candidate: until the election goroutine has closed lost,
	// trusted checks it and the session directly.
	signal <-chan struct{}

	lost        chan struct{} // closed when the term ends
	release     chan struct{} // closed by Release
	releaseOnce sync.Once
	ended       chan struct{} // closed once the term's end is handled (and, after Release, the node deleted)
	releaseErr  error         // the delete's error, set before ended closes
}

func newLeadership(l *Latch, node string, sess framework.Session, signal <-chan struct{}, token int64) *Leadership {
	return &Leadership{
		latch: l, node: node, sess: sess, token: token, signal: signal,
		lost: make(chan struct{}), release: make(chan struct{}), ended: make(chan struct{}),
	}
}

// trusted reports whether the leadership may be handed out or reported:
// neither its Lost() nor the signals it follows have closed.
func (ld *Leadership) trusted() bool {
	return !chans.IsClosed(ld.lost) && !chans.IsClosed(ld.signal) && !chans.IsClosed(ld.sess.Lost())
}

// Lost returns a channel closed when the leadership ends and can no longer
// be trusted: on Suspended or Lost under the client's standard error
// policy (Lost only under the session policy), when the session that made
// the candidate's node is lost, when that node is deleted, on Release, on
// Close (before the node is deleted), and when the client closes.
func (ld *Leadership) Lost() <-chan struct{} {
	if ld == nil || ld.lost == nil {
		return chans.Closed()
	}
	return ld.lost
}

// Check reports whether the leadership may still be trusted at the moment
// of the call, without waiting for [Leadership.Lost]: it returns nil only
// while Lost is open, the session that made the leader's node is valid,
// and the client's session lease (read on the monotonic clock now, see
// [framework.Client.CheckLease]) has not ended under the client's error
// policy. Lost closes on a goroutine, which a paused process (a GC pause,
// a stopped VM) runs late; Check reads the clock itself. The error matches
// [ErrSessionLost] and [framework.ErrSessionLost] (and
// [framework.ErrClosed] once the client is closed); a nil or zero
// Leadership gives an error matching [ErrInvalidArgument].
//
// Check covers the time up to the call, not the pause between it and the
// write it guards: only the fencing token, checked by the resource, covers
// that. Check, then write with [Leadership.FencingToken].
func (ld *Leadership) Check() error {
	if ld == nil || ld.latch == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil or zero Leadership")
	}
	if !ld.trusted() {
		return fmt.Errorf("%w: %s: the leadership ended (Suspended, its session lost, or released)", ErrSessionLost, ld.node)
	}
	c := ld.latch.client
	if err := c.CheckLease(c.ErrorPolicy()); err != nil {
		return errtext.Errorf("%w: %s: %w", ErrSessionLost, ld.node, err)
	}
	return nil
}

// FencingToken returns the leadership's fencing token: the election path's
// pzxid as read by the read that made this candidate the leader. It is a
// ZooKeeper transaction ID, lower than the token of any later leader of
// the path (the next leader is elected by a read made after this leader's
// node was deleted), so a resource that remembers the highest token it has
// seen can refuse a deposed leader's writes. A candidate that leads again
// with the same node (after a Suspended on the same session) may get the
// same token again. The error is non-nil only for the zero Leadership.
func (ld *Leadership) FencingToken() (int64, error) {
	if ld == nil || ld.latch == nil {
		return 0, recipe.BadArg(ErrInvalidArgument, "nil or zero Leadership")
	}
	return ld.token, nil
}

// Node returns the path of the leader's node.
func (ld *Leadership) Node() string {
	if ld == nil {
		return ""
	}
	return ld.node
}

// Session returns the session that made the leader's node: the leadership
// is trusted only while it is valid.
func (ld *Leadership) Session() framework.Session {
	if ld == nil {
		return framework.Session{}
	}
	return ld.sess
}

// Release ends this leadership and puts the candidate at the back of the
// line (Curator's reset): Lost() closes, the leader's node is deleted, and
// the candidate joins again with a new node, so the next candidate leads.
// To leave the election instead, Close the latch.
//
// Release returns once the node is deleted, or when ctx ends (the release
// goes on). If the delete fails (the connection is down), it goes on in
// the background and Release returns its error. Releasing a leadership
// that has already ended (lost, released, or closed with its latch) does
// nothing and returns nil.
func (ld *Leadership) Release(ctx context.Context) error {
	if ld == nil || ld.latch == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil or zero Leadership")
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	requested := false
	ld.releaseOnce.Do(func() {
		requested = true
		close(ld.release)
	})
	select {
	case <-ld.ended:
	case <-ctx.Done():
		return ctx.Err()
	}
	if requested {
		return ld.releaseErr
	}
	return nil
}

// released reports whether Release was called.
func (ld *Leadership) released() bool {
	select {
	case <-ld.release:
		return true
	default:
		return false
	}
}
