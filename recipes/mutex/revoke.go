package mutex

import (
	"bytes"
	"context"
	"errors"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
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
	_, err := client.SetData().ForPath(ctx, nodePath, RevokeMessage)
	if err != nil && !isNoNode(err) {
		return recipe.Wrapf(ErrInvalidArgument, "mutex: revoke %s: %w", nodePath, err)
	}
	return nil
}

// watchRevocation watches the hold's node data until the hold ends, and
// calls the revocation listener when it reads RevokeMessage. It returns
// the func that stops the watch and waits for its goroutine.
func (m *Mutex) watchRevocation(h *lockcore.Hold) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	client := m.lock.Core().Client()
	go func() {
		defer close(done)
		for {
			data, _, ch, err := client.GetData().ForPathW(ctx, h.Node())
			if err != nil {
				return // node gone, or the client closed
			}
			if bytes.Equal(data, RevokeMessage) {
				m.revoked()
				return
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

func isNoNode(err error) bool {
	return err != nil && errors.Is(err, zk.ErrNoNode)
}
