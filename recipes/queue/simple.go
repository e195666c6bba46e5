package queue

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// simplePrefix is the name of SimpleDistributedQueue's nodes, before the
// server's 10-digit sequence number.
const simplePrefix = "qn-"

// SimpleQueue is Curator's SimpleDistributedQueue, ZooKeeper's own queue
// recipe: PERSISTENT_SEQUENTIAL nodes "qn-<seq>" holding the raw bytes
// (no item encoding). Taking an item reads and deletes its node: at most
// once. It holds no state but its arguments, needs no Start or Close, and
// is safe for concurrent use. The zero SimpleQueue is not usable: make one
// with NewSimple.
type SimpleQueue struct {
	client *framework.Client
	path   string
}

// NewSimple returns a simple queue at path. It checks its arguments and
// does no I/O.
func NewSimple(c *framework.Client, path string) (*SimpleQueue, error) {
	k, err := newCore(c, path, plainKind, nil)
	if err != nil {
		return nil, err
	}
	return &SimpleQueue{client: k.client, path: k.path}, nil
}

func (q *SimpleQueue) check(ctx context.Context) error {
	if q == nil || q.client == nil {
		return recipe.Zero(ErrInvalidArgument, "SimpleQueue")
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := q.client.Check(); err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "queue: %s: %w", q.path, err)
	}
	return nil
}

// Offer adds data at the tail, creating the queue's path (parents as
// containers) if needed. A lost reply is an error matching
// framework.ErrIndeterminate, as for Queue.Put.
func (q *SimpleQueue) Offer(ctx context.Context, data []byte) error {
	if err := q.check(ctx); err != nil {
		return err
	}
	if len(data) > DefaultMaxBytes {
		return errors.Join(ErrTooLarge, errors.New("queue: offer "+q.path))
	}
	_, err := q.client.Create().CreatingParentContainersIfNeeded().
		WithMode(framework.PersistentSequential).ForPath(ctx, framework.JoinPath(q.path, simplePrefix), data)
	if err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "queue: offer %s: %w", q.path, err)
	}
	return nil
}

// Poll takes the head's data, or returns ErrEmpty at once.
func (q *SimpleQueue) Poll(ctx context.Context) ([]byte, error) {
	if err := q.check(ctx); err != nil {
		return nil, err
	}
	b, _, err := q.element(ctx, true, false)
	return b, err
}

// Peek returns the head's data without taking it, or ErrEmpty.
func (q *SimpleQueue) Peek(ctx context.Context) ([]byte, error) {
	if err := q.check(ctx); err != nil {
		return nil, err
	}
	b, _, err := q.element(ctx, false, false)
	return b, err
}

// Take takes the head's data, waiting for one while ctx lasts.
func (q *SimpleQueue) Take(ctx context.Context) ([]byte, error) {
	if err := q.check(ctx); err != nil {
		return nil, err
	}
	for {
		lost := q.client.LossSignal(framework.StandardErrorPolicy)
		b, watch, err := q.element(ctx, true, true)
		if !errors.Is(err, ErrEmpty) {
			return b, err
		}
		select {
		case <-watch:
		case <-lost:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// element reads (and with take deletes) the head, trying the next one when
// another consumer took it first. With watch it sets a children watch,
// whose channel it returns with ErrEmpty.
func (q *SimpleQueue) element(ctx context.Context, take, watch bool) ([]byte, <-chan zk.Event, error) {
	for {
		var kids []string
		var ch <-chan zk.Event
		var err error
		if watch {
			kids, ch, err = q.client.GetChildren().ForPathW(ctx, q.path)
		} else {
			kids, err = q.client.GetChildren().ForPath(ctx, q.path)
		}
		if errors.Is(err, zk.ErrNoNode) {
			if !watch {
				return nil, nil, ErrEmpty
			}
			// Wait for the queue to be made: watch its creation.
			st, ch, err := q.client.CheckExists().CreatingParentContainersIfNeeded().ForPathW(ctx, q.path)
			if err != nil {
				return nil, nil, recipe.Wrapf(ErrInvalidArgument, "queue: %s: %w", q.path, err)
			}
			if st != nil {
				continue // made meanwhile: list it
			}
			return nil, ch, ErrEmpty
		}
		if err != nil {
			return nil, nil, recipe.Wrapf(ErrInvalidArgument, "queue: %s: %w", q.path, err)
		}
		kids = slices.DeleteFunc(kids, func(s string) bool { return !strings.HasPrefix(s, simplePrefix) })
		if len(kids) == 0 {
			return nil, ch, ErrEmpty
		}
		slices.Sort(kids)
		for _, k := range kids {
			p := framework.JoinPath(q.path, k)
			b, _, err := q.client.GetData().ForPath(ctx, p)
			if errors.Is(err, zk.ErrNoNode) {
				continue
			}
			if err != nil {
				return nil, nil, recipe.Wrapf(ErrInvalidArgument, "queue: %s: %w", q.path, err)
			}
			if !take {
				return b, nil, nil
			}
			err = q.client.Delete().ForPath(ctx, p)
			if errors.Is(err, zk.ErrNoNode) {
				continue
			}
			if err != nil {
				return nil, nil, recipe.Wrapf(ErrInvalidArgument, "queue: %s: %w", q.path, err)
			}
			return b, nil, nil
		}
		// Every one listed was taken by others meanwhile.
		if !watch {
			continue
		}
		return nil, ch, ErrEmpty
	}
}
