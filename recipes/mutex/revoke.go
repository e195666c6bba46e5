package mutex

import (
	"context"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/internal/recipe"
)

// RevokeMessage is the node data that asks a holder to give up, as in
// Curator.
var RevokeMessage = []byte("__REVOKE__")

// Revoke asks the holder of the lock node at nodePath to release it, by
// writing RevokeMessage to the node, as Curator's Revoker.attemptRevoke
// does. Only holders that opted in with [WithRevocation] react. A missing
// node is not an error; a nil client, an invalid path or a nil ctx is an
// error matching [ErrInvalidArgument].
func Revoke(ctx context.Context, client *framework.Client, nodePath string) error {
	if client == nil {
		return recipe.NilClient(ErrInvalidArgument)
	}
	if err := lockcore.Revoke(ctx, client, nodePath); err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "mutex: revoke %s: %w", nodePath, err)
	}
	return nil
}

// watchRevocation is the OnHold hook of a revocable Mutex: it calls the
// revocation listener when the hold's node reads RevokeMessage.
func (m *Mutex) watchRevocation() func(*lockcore.ReentrantHold) (stop func()) {
	return lockcore.Revocable(func(*lockcore.ReentrantHold) { m.revoked() })
}
