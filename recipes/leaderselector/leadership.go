package leaderselector

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/internal/observe"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

// Leadership is one term of a candidate as the leader: a value that any
// goroutine may hold and use, like a lock's hold. It is safe for
// concurrent use. The zero Leadership is not a leadership: its Lost
// channel is closed, and FencingToken and Release return
// ErrInvalidArgument.
type Leadership struct {
	e    *Election
	hold *lockcore.Hold

	ctx    context.Context // Done() is Lost(); context.Cause says why
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when watch returns

	releaseOnce sync.Once
	term        observe.Hold // times the term for the metrics hook
}

func newLeadership(e *Election, h *lockcore.Hold) *Leadership {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Leadership{e: e, hold: h, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Lost returns a channel closed when the leadership can no longer be
// trusted: on Suspended or Lost under the client's standard error policy
// (Lost only under the session policy), when the session that made the
// leader's node is lost, when that node is deleted, on Release, Resign or
// Close (before the node is deleted), and when the client closes.
func (ld *Leadership) Lost() <-chan struct{} {
	if ld == nil || ld.ctx == nil {
		return chans.Closed()
	}
	return ld.ctx.Done()
}

// trusted reports whether the leadership may be handed out or reported:
// neither its Lost() nor the hold's loss signal, which watch follows,
// has closed.
func (ld *Leadership) trusted() bool {
	return !chans.IsClosed(ld.Lost()) && !chans.IsClosed(ld.hold.Lost())
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
	if ld == nil || ld.hold == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil or zero Leadership")
	}
	if chans.IsClosed(ld.Lost()) {
		return errtext.Errorf("%w: %s: the leadership ended: %w", ErrSessionLost, ld.hold.Node(), context.Cause(ld.ctx))
	}
	if err := ld.hold.Check(ld.e.client); err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "leaderselector: check %s: %w", ld.e.path, exported(err))
	}
	return nil
}

// FencingToken returns the leadership's fencing token: the election path's
// pzxid, read by the leader after the grant. It is a ZooKeeper transaction
// ID that grows with every grant of the path, so a resource that remembers
// the highest token it has seen can refuse a deposed leader's writes.
//
// When the leadership was handed over by the predecessor's delete, no read
// was needed to grant it, and the first call reads the token (one bounded
// round trip); later calls return it without I/O. That read refuses, with
// an error matching ErrSessionLost, once the leader's session is no longer
// the client's, and fails with ErrNodeVanished if the leader's node is
// gone; other errors are the read's own, and a failed read is tried again
// on the next call. Ask for it while leading.
func (ld *Leadership) FencingToken() (int64, error) {
	if ld == nil || ld.hold == nil {
		return 0, recipe.BadArg(ErrInvalidArgument, "nil or zero Leadership")
	}
	tok, err := ld.hold.FencingToken()
	if err != nil {
		return 0, recipe.Wrapf(ErrInvalidArgument, "leaderselector: fencing token %s: %w", ld.e.path, exported(err))
	}
	return tok, nil
}

// Node returns the path of the leader's node.
func (ld *Leadership) Node() string {
	if ld == nil || ld.hold == nil {
		return ""
	}
	return ld.hold.Node()
}

// Session returns the session that made the leader's node: the
// leadership is trusted only while it is valid. A nil or zero Leadership
// returns the zero Session, which is never valid.
func (ld *Leadership) Session() framework.Session {
	if ld == nil || ld.hold == nil {
		return framework.Session{}
	}
	return ld.hold.Session()
}

// Release gives up the leadership: Lost() closes first, then the leader's
// node is deleted, so the next candidate is elected only after this one
// has stopped trusting its leadership. The delete waits for a connection
// up to 10 s, and returns when ctx ends; if it fails (the connection is
// down) or ctx ends first, it goes on in the background until it succeeds
// or the client closes, and Release returns its error. If the leader's
// session is already lost, Release returns at once with an error matching
// [ErrSessionLost] (the server deletes the node with its session). Releasing again does nothing and returns nil; so does
// releasing a leadership whose Election has closed.
func (ld *Leadership) Release(ctx context.Context) error {
	return ld.release(ctx, ErrResigned)
}

// Cause returns why the leadership ended (nil while it lasts):
// ErrSessionLost (the connection was suspended or the session lost, as the
// client's error policy has it), ErrLeaderNodeDeleted, ErrResigned (Release
// or Resign), or ErrClosed (the Election or Selector closed).
func (ld *Leadership) Cause() error {
	if ld == nil || ld.ctx == nil {
		return ErrInvalidArgument
	}
	return context.Cause(ld.ctx)
}

// release is Release, ending the leadership with cause.
func (ld *Leadership) release(ctx context.Context, cause error) error {
	if ld == nil || ld.hold == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil or zero Leadership")
	}
	if ctx == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil context")
	}
	var err error
	ld.releaseOnce.Do(func() {
		ld.term.Release(ld.Lost())
		ld.cancel(cause)
		<-ld.done
		if !ld.hold.Session().Valid() {
			err = exported(lockcore.Abandon(ld.e.core, ld.hold.Node()))
		} else if derr := ld.e.core.Delete(recipe.Releasing(ctx), ld.hold.Node()); derr != nil {
			err = recipe.Wrapf(ErrInvalidArgument, "leaderselector: release %s: %w", ld.hold.Node(), derr)
		}
		ld.e.dropped(ld)
	})
	return err
}

// watch ends the leadership (cancels ld.ctx) when the hold is lost or the
// leader's node goes, and returns when the leadership ends for any reason.
// It watches the node with a data watch, set again after each change, on
// a goroutine of its own: no I/O stands between the hold's loss signal and
// Lost(), even while the read waits for a connection.
func (ld *Leadership) watch() {
	defer ld.e.wg.Done()
	defer close(ld.done)
	own := recipe.WatchNode(ld.ctx, ld.e.client, ld.hold.Node())
	defer own.Stop() // after the end: the read may wait for a dead connection
	cause := ErrSessionLost
	defer func() { ld.cancel(cause) }() // Lost() closes first
	wait := minRetryWait
	var events <-chan zk.Event
	var retry <-chan time.Time
	for {
		select {
		case <-ld.hold.Lost():
			return
		case <-ld.ctx.Done():
			return
		case r := <-own.Result():
			switch {
			case errors.Is(r.Err, zk.ErrNoNode):
				cause = ErrLeaderNodeDeleted
				return
			case r.Err != nil:
				// The hold's loss signal covers a dropped connection; wait
				// and watch again.
				wait = min(2*wait, maxRetryWait)
				retry = time.After(wait)
				continue
			}
			wait = minRetryWait
			events = r.Events
		case <-retry:
			retry = nil
			own.Again()
		case ev := <-events:
			if ev.Type == zk.EventNodeDeleted {
				cause = ErrLeaderNodeDeleted
				return
			}
			if ev.Type == zk.EventNotWatching {
				return
			}
			events = nil
			own.Again()
		}
	}
}

// Bounds of the wait before a background goroutine tries again after a
// failed request.
const (
	minRetryWait = 50 * time.Millisecond
	maxRetryWait = 5 * time.Second
)

// backoff is a growing wait between failed attempts.
type backoff struct{ d time.Duration }

func (b *backoff) sleep(ctx context.Context) {
	b.d = min(max(2*b.d, minRetryWait), maxRetryWait)
	_ = retry.Sleep(ctx, b.d)
}

func (b *backoff) reset() { b.d = 0 }
