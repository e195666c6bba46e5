package doublebarrier

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// Leave leaves the barrier and blocks until every member has left. It
// runs the ZooKeeper recipe's algorithm: the lowest member (by node name)
// keeps its node and watches the highest, every other member deletes its
// node and watches the lowest, and the last member out deletes ready with
// its own node in one transaction.
//
// When ctx ends first, Leave returns an error matching ctx.Err(). On any
// error its member node has been deleted (or its delete goes on in the
// background), so the other members can still leave; the participant is
// then out of the barrier and may Enter again. Leave on a participant
// that is not inside the barrier returns ErrNotEntered.
func (b *DoubleBarrier) Leave(ctx context.Context) error {
	if err := b.check(ctx, "leave"); err != nil {
		return err
	}
	b.mu.Lock()
	if b.phase != inside {
		b.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNotEntered, b.path)
	}
	b.phase = leaving
	node, sess := b.node, b.sess
	b.mu.Unlock()

	if err := b.leave(ctx, node, sess); err != nil {
		b.abandon(ctx, node)
		b.setPhase(idle)
		return recipe.Wrapf(ErrInvalidArgument, "doublebarrier: leave %s: %w", b.path, err)
	}
	b.setPhase(idle)
	return nil
}

// leave runs the leave algorithm until no member is left. Our node,
// created by sess, counts as ours only while sess is valid: a node of a
// lost session is deleted, as a member that leaves deletes its node.
func (b *DoubleBarrier) leave(ctx context.Context, node string, sess framework.Session) error {
	_, name := framework.SplitPath(node)
	mine := true // our node should still exist
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		lost := b.client.LossSignal(framework.StandardErrorPolicy)
		kids, err := b.client.GetChildren().ForPath(ctx, b.path)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		if mine && !sess.Valid() {
			// Not ours any more, even if the server still lists it.
			if err := b.client.Delete().Quietly().ForPath(ctx, node); err != nil {
				return err
			}
			mine = false
			continue
		}
		members := membersOf(kids)
		if len(members) == 0 {
			// Everyone is out. A ready left here means the last member out
			// lost its session before it could delete it.
			if slices.Contains(kids, readyNode) {
				return b.client.Delete().Quietly().ForPath(ctx, b.readyPath)
			}
			return nil
		}
		i, found := slices.BinarySearch(members, name)
		if !found {
			mine = false // deleted by us, or gone with our session
		}
		var watch string
		switch {
		case mine && len(members) == 1:
			// The last one out takes ready with it, in one transaction, so
			// that the next round starts from an empty path.
			_, err := b.client.Transaction().Delete(b.readyPath, -1).Delete(node, -1).Commit(ctx)
			if !errors.Is(err, zk.ErrNoNode) {
				return err
			}
			// ready or our node was already gone (or a lost reply hid that
			// the transaction went through): delete ours alone and look
			// again, which also clears a ready left behind.
			if err := b.client.Delete().Quietly().ForPath(ctx, node); err != nil {
				return err
			}
			mine = false
			continue
		case mine && i == 0:
			watch = members[len(members)-1]
		default:
			if mine {
				if err := b.client.Delete().Quietly().ForPath(ctx, node); err != nil {
					return err
				}
				mine = false
			}
			watch = members[0]
		}
		_, _, ch, err := b.client.GetData().ForPathW(ctx, framework.JoinPath(b.path, watch))
		if errors.Is(err, zk.ErrNoNode) {
			continue // it left while we looked: read again
		}
		if err != nil {
			return err
		}
		select {
		case <-ch:
		case <-lost:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// membersOf returns the member nodes among a barrier's children, sorted.
func membersOf(kids []string) []string {
	members := make([]string, 0, len(kids))
	for _, k := range kids {
		if k != readyNode {
			members = append(members, k)
		}
	}
	slices.Sort(members)
	return members
}

// abandon leaves the barrier after a cancel or an error: it deletes our
// node so that the others can still leave and, if no member is left,
// ready too. It uses a detached, bounded context.
func (b *DoubleBarrier) abandon(ctx context.Context, node string) {
	b.deleteMember(ctx, node)
	dctx, cancel := recipe.Detached(ctx)
	defer cancel()
	kids, err := b.client.GetChildren().ForPath(dctx, b.path)
	if err == nil && len(kids) == 1 && kids[0] == readyNode {
		err = b.client.Delete().Quietly().ForPath(dctx, b.readyPath)
	}
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		b.client.Logger().Debug("doublebarrier: ready cleanup skipped", "path", b.path, "err", err)
	}
}
