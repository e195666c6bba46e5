package queue

import (
	"context"
	"errors"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// remove deletes every item node whose id is id (already fixed). In a
// lock-safe queue each delete takes the item's lock first, as Curator's
// tryRemove does, so an item a consumer holds is left to it.
func (c *core) remove(ctx context.Context, id string) (int, error) {
	kids, err := c.client.GetChildren().ForPath(ctx, c.path)
	if errors.Is(err, zk.ErrNoNode) {
		return 0, nil
	}
	if err != nil {
		return 0, recipe.Wrapf(ErrInvalidArgument, "queue: remove %s: %w", c.path, err)
	}
	n := 0
	for _, name := range kids {
		if got, ok := idOf(name); !ok || got != id || !hasItemPrefix(name) {
			continue
		}
		node := framework.JoinPath(c.path, name)
		if c.cfg.lockPath == "" {
			err = c.client.Delete().ForPath(ctx, node)
		} else {
			lock := framework.JoinPath(c.cfg.lockPath, name)
			_, err = c.client.Create().CreatingParentContainersIfNeeded().WithMode(framework.Ephemeral).
				ForPath(ctx, lock, c.client.DefaultData())
			if err == nil {
				_, err = c.client.Transaction().Delete(node, -1).Delete(lock, -1).Commit(ctx)
				if err != nil {
					_ = recipe.Delete(ctx, c.client, lock)
				}
			}
		}
		switch {
		case err == nil:
			n++
		case lost(err):
			// Taken or held by a consumer, or removed by another.
		default:
			return n, recipe.Wrapf(ErrInvalidArgument, "queue: remove %s/%s: %w", c.path, name, err)
		}
	}
	return n, nil
}

func hasItemPrefix(name string) bool {
	return len(name) >= len(itemPrefix) && name[:len(itemPrefix)] == itemPrefix
}
