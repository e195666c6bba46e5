package rwlock

import (
	"context"
	"strings"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/internal/recipe"
)

// RevokeMessage is the node data that asks a revocable holder to give up:
// Curator's "__REVOKE__", the same for both sides and for mutex.
var RevokeMessage = []byte("__REVOKE__")

// WithReadRevocation makes the read side's holds revocable, as Curator's
// readLock().makeRevocable: when another process calls [Revoke] (or
// Curator's Revoker.attemptRevoke) on a read holder's node, fn runs with
// that hold, once, on a goroutine of its own; it should release the hold,
// and may do so itself (fn(h) calling h.Release does not deadlock).
// Revocable holders write empty node data, as Curator's do, instead of
// [WithData]'s or the client's default data. A revoke written to a node
// whose contender still waits is acted on once it holds, as the node's
// data still asks. The watch on a hold's node ends when the hold is
// released or lost, or the node is gone; a hold
// whose release is under way when the revoke lands may still see fn run,
// and fn's own Release then returns [ErrNotOwner]. A nil fn is an error
// matching [ErrInvalidArgument].
func WithReadRevocation(fn func(*Hold)) Option {
	return func(o *options) error {
		if fn == nil {
			return recipe.BadArg(ErrInvalidArgument, "nil read revocation func")
		}
		o.readRevoked = fn
		return nil
	}
}

// WithWriteRevocation is [WithReadRevocation] for the write side, as
// Curator's writeLock().makeRevocable.
func WithWriteRevocation(fn func(*Hold)) Option {
	return func(o *options) error {
		if fn == nil {
			return recipe.BadArg(ErrInvalidArgument, "nil write revocation func")
		}
		o.writeRevoked = fn
		return nil
	}
}

// Revoke asks the holder of the read or write node at nodePath (a path
// from [Mutex.Participants] or [Hold.Node]) to release it, by writing
// [RevokeMessage] to the node, as Curator's Revoker.attemptRevoke does.
// Only holders that opted in react: go-curator's with
// [WithReadRevocation] or [WithWriteRevocation], Curator's with
// makeRevocable. A node already gone is not an error. A nil client, a nil
// ctx, an invalid path, or a path whose last segment is not a read or write
// lock node (Curator's "__READ__" or "__WRIT__" names) is an error
// matching [ErrInvalidArgument], and writes nothing.
func Revoke(ctx context.Context, client *framework.Client, nodePath string) error {
	if client == nil {
		return recipe.NilClient(ErrInvalidArgument)
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if err := framework.ValidatePath(nodePath); err != nil {
		return recipe.Invalid(ErrInvalidArgument, err)
	}
	if _, name := framework.SplitPath(nodePath); !strings.Contains(name, readName) && !strings.Contains(name, writeName) {
		return recipe.BadArg(ErrInvalidArgument, "revoke %s: not a read or write lock node", nodePath)
	}
	if err := lockcore.Revoke(ctx, client, nodePath); err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "rwlock: revoke %s: %w", nodePath, err)
	}
	return nil
}

// revocable returns the OnHold hook that calls fn with the side's hold.
func revocable(fn func(*Hold)) func(*lockcore.ReentrantHold) (stop func()) {
	return lockcore.Revocable(func(h *lockcore.ReentrantHold) {
		if outer, ok := h.Outer().(*Hold); ok {
			fn(outer)
		}
	})
}

// revocableSide makes a side's holds revocable when fn is set: empty node
// data, as Curator's revocable holders write, and the revocation watch.
func revocableSide(cfg *lockcore.ReentrantConfig, fn func(*Hold)) {
	if fn == nil {
		return
	}
	cfg.Data = []byte{}
	cfg.OnHold = revocable(fn)
}
