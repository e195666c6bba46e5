package recipe

import (
	"context"
	"fmt"
	"time"

	"github.com/go-curator/curator/framework"
)

// CleanupBound limits the cleanup that follows a cancelled or failed call
// (the delete of a contender's or member's node, the release of a lock
// held for the call): a guaranteed delete that cannot finish in time goes
// on in the background.
const CleanupBound = 10 * time.Second

// releasingKey marks a ctx given to Releasing.
type releasingKey struct{}

// Releasing returns ctx marked as the ctx of a call that waits for a
// release (a hold's Release, a lease's Close): Detached and Delete then
// honour its end instead of detaching from it, so the call returns when
// ctx ends, while the delete of the node goes on in the background (a
// guaranteed delete) until it succeeds or the client closes. Cleanup after
// a cancelled acquire keeps the plain ctx, whose end must not stop it.
func Releasing(ctx context.Context) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, releasingKey{}, true)
}

func releasing(ctx context.Context) bool {
	return ctx != nil && ctx.Value(releasingKey{}) != nil
}

// Detached returns a context for cleanup after ctx may have ended: it
// keeps ctx's values, not its cancellation or deadline, and ends after
// CleanupBound. A nil ctx stands for context.Background. A ctx marked by
// Releasing keeps its cancellation and deadline as well: the caller is
// waiting for the cleanup, and its deadline counts.
func Detached(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	if releasing(ctx) {
		return context.WithTimeout(ctx, CleanupBound)
	}
	return context.WithTimeout(context.WithoutCancel(ctx), CleanupBound)
}

// Delete deletes node with a detached, bounded context and a guaranteed,
// quiet delete, so that it goes even when ctx is cancelled or the
// connection is down: a delete that fails on the connection goes on in the
// background until it succeeds or the client closes. A missing node is
// not an error.
//
// With a ctx marked by Releasing, Delete returns when ctx ends, with an
// error matching ctx's, and the delete goes on in the background (a
// protected node's, as framework.Client.CleanupProtected does it, even
// when ctx had ended before the call).
func Delete(ctx context.Context, client *framework.Client, node string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if releasing(ctx) {
		if err := deleteReleasing(ctx, client, node); err == nil || ctx.Err() == nil {
			return err
		}
		// Unprotected: the delete must happen now, whatever ctx says.
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupBound)
	defer cancel()
	return client.Delete().Guaranteed().Quietly().ForPath(dctx, node)
}

// deleteReleasing is Delete for a ctx marked by Releasing. It returns
// ctx's error, with ctx done, only if the delete of node goes on in the
// background, or if node is not protected (the caller then deletes it
// detached).
func deleteReleasing(ctx context.Context, client *framework.Client, node string) error {
	parent, name := framework.SplitPath(node)
	background := func() error {
		if !framework.IsProtected(name) {
			return ctx.Err()
		}
		prefix := name[:len(framework.ProtectedPrefix)+37] // "_c_<uuid>-"
		if err := client.CleanupProtected(parent, prefix); err != nil {
			return fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return fmt.Errorf("%w: the delete of %s goes on in the background", ctx.Err(), node)
	}
	if ctx.Err() != nil {
		return background()
	}
	// The delete's own ctx is bounded and detached, and ends with ctx:
	// ended by ctx, the guaranteed delete goes on in the background.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CleanupBound)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	err := client.Delete().Guaranteed().Quietly().ForPath(dctx, node)
	if err != nil && ctx.Err() != nil {
		// ctx may have ended before the delete could start (then it left
		// nothing in the background): make sure something goes on.
		return background()
	}
	return err
}
