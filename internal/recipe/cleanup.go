package recipe

import (
	"context"
	"time"

	"github.com/go-curator/curator/framework"
)

// CleanupBound limits the cleanup that follows a cancelled or failed call
// (the delete of a contender's or member's node, the release of a lock
// held for the call): a guaranteed delete that cannot finish in time goes
// on in the background.
const CleanupBound = 10 * time.Second

// Detached returns a context for cleanup after ctx may have ended: it
// keeps ctx's values, not its cancellation or deadline, and ends after
// CleanupBound. A nil ctx stands for context.Background.
func Detached(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(context.WithoutCancel(ctx), CleanupBound)
}

// Delete deletes node with a detached, bounded context and a guaranteed,
// quiet delete, so that it goes even when ctx is cancelled or the
// connection is down: a delete that fails on the connection goes on in the
// background until it succeeds or the client closes. A missing node is
// not an error.
func Delete(ctx context.Context, client *framework.Client, node string) error {
	dctx, cancel := Detached(ctx)
	defer cancel()
	return client.Delete().Guaranteed().Quietly().ForPath(dctx, node)
}
