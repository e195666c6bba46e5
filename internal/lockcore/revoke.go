package lockcore

import (
	"context"
	"errors"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// Revocation, as Curator's LockInternals and Revoker do it: a lock whose
// holds are revocable writes empty node data; whoever wants a holder to
// give up writes RevokeMessage to the holder's node; the holder watches its
// node's data while it holds and calls its listener when it reads the
// message. Mutex and both sides of the read/write lock share this file.

// RevokeMessage is Curator's LockInternals.REVOKE_MESSAGE, the node data
// that asks a revocable holder to release.
const RevokeMessage = "__REVOKE__"

// Revoke writes RevokeMessage to node, as Curator's Revoker.attemptRevoke
// does. A missing node is not an error (its holder is gone). Errors are
// the framework's, unwrapped: the recipe adds its prefix.
func Revoke(ctx context.Context, client *framework.Client, node string) error {
	_, err := client.SetData().ForPath(ctx, node, []byte(RevokeMessage))
	if err != nil && errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// revokeRetryMax bounds the wait before the revocation watch reads again
// after a failed read (a connection loss that outlasted the retry policy).
const revokeRetryMax = time.Second

// Revocable returns an OnHold hook that makes a Reentrant lock's holds
// revocable: for each new hold it watches the hold's node data until the
// hold ends, and calls fn with the hold, once, on its own goroutine, when
// it reads RevokeMessage. The watch ends when the hold is released, its
// node is gone, its Lost channel closes, or the client closes.
//
// fn may release the hold: the watch is over before fn runs, so the
// release does not wait for fn. fn may run while the hold is being
// released by someone else; its own release then returns the NotOwner
// error.
func Revocable(fn func(*ReentrantHold)) func(*ReentrantHold) (stop func()) {
	return func(h *ReentrantHold) func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			revoked := watchRevoke(ctx, h)
			fire := revoked && ctx.Err() == nil
			close(done)
			if fire {
				fn(h)
			}
		}()
		return func() {
			cancel()
			<-done
		}
	}
}

// watchRevoke reads the hold's node data with a watch until it reads
// RevokeMessage (true) or the watch has no more reason to run (false).
func watchRevoke(ctx context.Context, h *ReentrantHold) bool {
	client := h.b.core.Client()
	lost := h.Hold.Lost()
	for try := time.Duration(0); ; {
		data, _, ch, err := client.GetData().ForPathW(ctx, h.Node())
		switch {
		case err == nil:
			try = 0
			if string(data) == RevokeMessage {
				return true
			}
			select {
			case <-ch:
			case <-lost:
				return false
			case <-ctx.Done():
				return false
			}
		case errors.Is(err, zk.ErrNoNode), errors.Is(err, framework.ErrClosed), ctx.Err() != nil:
			return false
		default:
			// A read that failed after the client's retries: try again
			// while the hold stands.
			try = min(2*try+50*time.Millisecond, revokeRetryMax)
			t := time.NewTimer(recipe.Jitter(try, revokeRetryMax) + try/2)
			select {
			case <-t.C:
			case <-lost:
				t.Stop()
				return false
			case <-ctx.Done():
				t.Stop()
				return false
			}
		}
	}
}

// Outer returns the recipe's hold that wraps h (what NewReentrant's wrap
// made), or nil for a nil h.
func (h *ReentrantHold) Outer() any {
	if h == nil {
		return nil
	}
	return h.outer
}
