package semaphorev2

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/observe"
	"github.com/go-curator/curator/internal/recipe"
)

// Lease is one granted lease of a semaphore: a value that any goroutine
// may use. Hand it to the goroutine that watches for its loss, reads its
// fencing token, or finishes the work and returns it with [Lease.Release]
// (or [Lease.Close], Curator's name, or [Semaphore.ReturnLease]). If the
// session ends first, ZooKeeper deletes its node and the lease goes back
// to the pool by itself.
//
// A Lease is safe for concurrent use. Its methods keep working after the
// lease is returned: Lost keeps its state, Node its path, Close does
// nothing, and FencingToken and Release return [ErrNotOwner]. The zero
// Lease, and a nil *Lease, hold nothing: Lost is closed, Node is "",
// Close does nothing, FencingToken and Release return ErrNotOwner, and
// Data returns an error matching [ErrInvalidArgument]. Use the *Lease; do
// not copy the Lease it points to.
type Lease struct {
	client *framework.Client
	sem    string            // the semaphore's path
	node   string            // full path of the lease node, without the namespace
	sess   framework.Session // the session that made node
	token  int64
	lost   <-chan struct{}
	closed atomic.Bool
	obs    observe.Hold // times the lease for the metrics hook
}

// granted reports whether l is a lease that a semaphore granted.
func (l *Lease) granted() bool { return l != nil && l.client != nil }

// Release returns the lease, from any goroutine: it deletes the lease node
// with a guaranteed delete, so that if the connection is down, the delete
// goes on in the background after Release returns its error, until it
// succeeds or the client closes. Release returns when ctx ends, with
// ctx's error; if the lease's session is already lost, it returns at once
// with an error matching [ErrSessionLost] (the server deletes the node
// with its session). A lease already returned gives
// [ErrNotOwner]. Release is [Lease.Close], except that Close ignores a
// second call.
func (l *Lease) Release(ctx context.Context) error {
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if !l.granted() || !l.closed.CompareAndSwap(false, true) {
		return ErrNotOwner
	}
	return l.delete(ctx)
}

// Close returns the lease, as Curator's Lease.close(): see
// [Lease.Release]. Closing a lease again, or closing a nil or zero lease,
// does nothing and returns nil.
func (l *Lease) Close(ctx context.Context) error {
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if !l.granted() || !l.closed.CompareAndSwap(false, true) {
		return nil
	}
	return l.delete(ctx)
}

// delete deletes the lease node, returning when ctx ends (the delete goes
// on in the background), or at once when the lease's session is lost:
// the server deletes the node with its session, and a background delete
// only speeds that up.
func (l *Lease) delete(ctx context.Context) error {
	l.obs.Release(l.lost)
	if !l.sess.Valid() {
		gone, cancel := context.WithCancel(recipe.Releasing(ctx))
		cancel()
		_ = recipe.Delete(gone, l.client, l.node)
		err := fmt.Errorf("%w: return lease %s: its session is no longer the client's (the server deletes its node)",
			ErrSessionLost, l.node)
		if cerr := l.client.Check(); errors.Is(cerr, framework.ErrClosed) {
			return errtext.Also(err, cerr)
		}
		return err
	}
	if err := recipe.Delete(recipe.Releasing(ctx), l.client, l.node); err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "semaphorev2: return lease %s: %w", l.node, err)
	}
	return nil
}

// Check reports whether the lease may still be trusted at the moment of
// the call, without waiting for [Lease.Lost]: it returns nil only while
// the lease is not returned, its session is valid, Lost is open, and the
// client's session lease (read on the monotonic clock now, see
// [framework.Client.CheckLease]) has not ended under the client's error
// policy. Lost closes on a timer goroutine, which a paused process (a GC
// pause, a stopped VM) runs late; Check reads the clock itself. The error
// matches [ErrSessionLost] and [framework.ErrSessionLost] (and
// [framework.ErrClosed] once the client is closed); after the lease is
// returned, and for a nil or zero Lease, it is [ErrNotOwner].
//
// Check covers the time up to the call, not the pause between it and the
// write it guards: only the fencing token, checked by the resource, covers
// that. Check, then write with [Lease.FencingToken].
func (l *Lease) Check() error {
	if !l.granted() || l.closed.Load() {
		return ErrNotOwner
	}
	switch {
	case !l.sess.Valid():
		return fmt.Errorf("%w: %s: its session is no longer the client's", ErrSessionLost, l.node)
	case chans.IsClosed(l.lost):
		return fmt.Errorf("%w: %s: its Lost() closed (Suspended, or its session lost)", ErrSessionLost, l.node)
	}
	if err := l.client.CheckLease(l.client.ErrorPolicy()); err != nil {
		return errtext.Errorf("%w: %s: %w", ErrSessionLost, l.node, err)
	}
	return nil
}

// Data reads the lease node's data: the semaphore's node data, or the
// client's default data. After the lease is returned the error matches
// zk.ErrNoNode.
func (l *Lease) Data(ctx context.Context) ([]byte, error) {
	if !l.granted() {
		return nil, recipe.Zero(ErrInvalidArgument, "Lease")
	}
	data, _, err := l.client.GetData().ForPath(ctx, l.node)
	if err != nil {
		return nil, recipe.Wrapf(ErrInvalidArgument, "semaphorev2: lease data: %w", err)
	}
	return data, nil
}

// NodeName returns the name of the lease node, as Curator's
// Lease.getNodeName does: _c_<uuid>-lease-<seq10>; "" for a nil or zero
// lease.
func (l *Lease) NodeName() string {
	_, name := framework.SplitPath(l.Node())
	return name
}

// Node returns the full path of the lease node (without the namespace),
// or "" for a nil or zero lease.
func (l *Lease) Node() string {
	if l == nil {
		return ""
	}
	return l.node
}

// Path returns the full path of the lease node: [Lease.Node].
//
// Deprecated: Use Node, the name every hold gives it.
func (l *Lease) Path() string { return l.Node() }

// Session returns the session that made the lease node: the lease is
// trusted only while it is valid. A nil or zero lease returns the zero
// Session, which is never valid.
func (l *Lease) Session() framework.Session {
	if l == nil {
		return framework.Session{}
	}
	return l.sess
}

// FencingToken returns the pzxid of <path>/leases as read by the read that
// granted the lease: a ZooKeeper transaction ID that grows with every
// change of the leases. With one lease (semaphoremutex) a later holder
// always has a greater token, so a resource that remembers the highest
// token it has seen can reject a stale holder's writes. The token is
// known from the grant, so the call does no I/O. After the lease is
// returned, and for a nil or zero lease, it returns [ErrNotOwner].
func (l *Lease) FencingToken() (int64, error) {
	if !l.granted() || l.closed.Load() {
		return 0, ErrNotOwner
	}
	return l.token, nil
}

// Lost returns a channel closed when the lease can no longer be trusted:
// when the session that made its node is lost, whatever the client's error
// policy (a server-reported expiry, the client's simulated expiry, a new
// session, or the client's Close); under the standard error policy also
// at the first Suspended after the grant. Any goroutine may wait on it; a
// watchdog that cancels the work when it closes is the usual way.
// Returning the lease does not close it. A nil or zero lease returns a
// closed channel.
func (l *Lease) Lost() <-chan struct{} {
	if l == nil || l.lost == nil {
		return chans.Closed()
	}
	return l.lost
}
