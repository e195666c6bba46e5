package queue

import (
	"context"
	"math"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
)

// Queue is Curator's DistributedQueue: items come out in the order they
// were put (FIFO for one consumer). It is safe for concurrent use. The
// zero Queue is not usable: make one with New; its methods, and those of
// a nil *Queue, return an error matching ErrInvalidArgument. Do not copy
// a Queue after first use.
type Queue struct{ c *core }

// New returns a queue at path. It checks its arguments and does no I/O.
// A nil client, an invalid path or the root, a nil option, or a lock or
// line path at or below path is an error matching ErrInvalidArgument.
func New(c *framework.Client, path string, opts ...Option) (*Queue, error) {
	k, err := newCore(c, path, plainKind, opts)
	if err != nil {
		return nil, err
	}
	return &Queue{c: k}, nil
}

func (q *Queue) core() *core {
	if q == nil {
		return nil
	}
	return q.c
}

// Start creates the queue's node (and the lock path's), with missing
// parents as containers, and, with WithConsumer, starts consuming. Start
// twice is an error matching ErrInvalidArgument; after Close, ErrClosed.
func (q *Queue) Start(ctx context.Context) error { return q.core().start(ctx, "Queue") }

// Put adds one item at the tail of the queue: one PERSISTENT_SEQUENTIAL
// node "queue-<seq>", in Curator's item encoding. Put works before Start
// (it creates missing parents as containers). Data too large for the
// server is ErrTooLarge, with nothing written. A reply lost with the
// connection is not retried (a retry could put the item twice): Put then
// returns an error matching framework.ErrIndeterminate, and the item may
// or may not be in the queue.
func (q *Queue) Put(ctx context.Context, data []byte) error {
	return q.core().put(ctx, "Queue", "", [][]byte{data})
}

// PutMulti adds items as one node, in Curator's multi-item encoding: they
// are taken together, in order. An empty items is ErrInvalidArgument.
func (q *Queue) PutMulti(ctx context.Context, items [][]byte) error {
	return q.core().put(ctx, "Queue", "", items)
}

// Items returns the channel of items, for a queue without WithConsumer,
// and starts consuming (at Start if Start has not run yet). The channel is
// unbuffered: the queue takes the next item only once the last one is
// received (and, lock-safe, Done). It is closed by Close; a queue with
// WithConsumer returns a closed channel.
func (q *Queue) Items() <-chan Delivery { return q.core().itemsChan() }

// Close stops consuming and waits, until ctx ends, for the item in hand:
// its consumer's ctx is cancelled; what it returns decides the item as
// usual, and an item whose consumer failed because of the cancel is left
// in place (lock-safe) for another consumer. Close leaves the line and
// closes Items. Closing again returns nil; after Close every method
// returns ErrClosed.
func (q *Queue) Close(ctx context.Context) error { return q.core().close(ctx, "Queue") }

// IDQueue is Curator's DistributedIdQueue: a Queue whose items carry an
// id, by which they can be removed. Same zero-value and copy rules as
// Queue.
type IDQueue struct{ c *core }

// NewID returns an id queue at path, as New.
func NewID(c *framework.Client, path string, opts ...Option) (*IDQueue, error) {
	k, err := newCore(c, path, idKind, opts)
	if err != nil {
		return nil, err
	}
	return &IDQueue{c: k}, nil
}

func (q *IDQueue) core() *core {
	if q == nil {
		return nil
	}
	return q.c
}

// Start is Queue.Start.
func (q *IDQueue) Start(ctx context.Context) error { return q.core().start(ctx, "IDQueue") }

// Put adds an item with id at the tail: node "queue-|<id>|<seq>", where
// '/' and '|' in id are written as '_' (Curator's fixId). An empty id is
// ErrInvalidArgument. See Queue.Put.
func (q *IDQueue) Put(ctx context.Context, data []byte, id string) error {
	return q.PutMulti(ctx, [][]byte{data}, id)
}

// PutMulti adds items as one node with id. See Queue.PutMulti.
func (q *IDQueue) PutMulti(ctx context.Context, items [][]byte, id string) error {
	if err := q.core().check(ctx, "IDQueue"); err != nil {
		return err
	}
	if id == "" {
		return recipe.BadArg(ErrInvalidArgument, "empty id")
	}
	return q.c.put(ctx, "IDQueue", separator+fixID(id)+separator, items)
}

// Remove deletes every item with id (compared after fixId, as stored) and
// returns how many nodes it deleted. In a lock-safe queue it skips the
// items a consumer holds. An empty id is ErrInvalidArgument.
func (q *IDQueue) Remove(ctx context.Context, id string) (int, error) {
	if err := q.core().check(ctx, "IDQueue"); err != nil {
		return 0, err
	}
	if id == "" {
		return 0, recipe.BadArg(ErrInvalidArgument, "empty id")
	}
	return q.c.remove(ctx, fixID(id))
}

// Items is Queue.Items.
func (q *IDQueue) Items() <-chan Delivery { return q.core().itemsChan() }

// Close is Queue.Close.
func (q *IDQueue) Close(ctx context.Context) error { return q.core().close(ctx, "IDQueue") }

// PriorityQueue is Curator's DistributedPriorityQueue: lower priorities
// come out first, FIFO within a priority. Same zero-value and copy rules
// as Queue.
type PriorityQueue struct{ c *core }

// NewPriority returns a priority queue at path, as New.
func NewPriority(c *framework.Client, path string, opts ...Option) (*PriorityQueue, error) {
	k, err := newCore(c, path, priorityKind, opts)
	if err != nil {
		return nil, err
	}
	return &PriorityQueue{c: k}, nil
}

func (q *PriorityQueue) core() *core {
	if q == nil {
		return nil
	}
	return q.c
}

// Start is Queue.Start.
func (q *PriorityQueue) Start(ctx context.Context) error {
	return q.core().start(ctx, "PriorityQueue")
}

// Put adds an item with priority: node "queue-<p><seq>", p being Curator's
// priorityToString (1 or 0 for the sign, then 8 hex digits). Priorities
// are 32-bit, as Curator's int: one outside int32 is ErrInvalidArgument.
func (q *PriorityQueue) Put(ctx context.Context, data []byte, priority int) error {
	return q.PutMulti(ctx, [][]byte{data}, priority)
}

// PutMulti adds items as one node with priority. See Queue.PutMulti.
func (q *PriorityQueue) PutMulti(ctx context.Context, items [][]byte, priority int) error {
	if err := q.core().check(ctx, "PriorityQueue"); err != nil {
		return err
	}
	if priority < math.MinInt32 || priority > math.MaxInt32 {
		return recipe.BadArg(ErrInvalidArgument, "priority %d outside Curator's 32-bit int", priority)
	}
	return q.c.put(ctx, "PriorityQueue", priorityString(int32(priority)), items)
}

// Items is Queue.Items.
func (q *PriorityQueue) Items() <-chan Delivery { return q.core().itemsChan() }

// Close is Queue.Close.
func (q *PriorityQueue) Close(ctx context.Context) error {
	return q.core().close(ctx, "PriorityQueue")
}

// DelayQueue is Curator's DistributedDelayQueue: an item is delivered no
// sooner than its time, by the consumer's local clock (as in Curator: the
// producers' and consumers' clocks must agree). Same zero-value and copy
// rules as Queue.
type DelayQueue struct{ c *core }

// NewDelay returns a delay queue at path, as New.
func NewDelay(c *framework.Client, path string, opts ...Option) (*DelayQueue, error) {
	k, err := newCore(c, path, delayKind, opts)
	if err != nil {
		return nil, err
	}
	return &DelayQueue{c: k}, nil
}

func (q *DelayQueue) core() *core {
	if q == nil {
		return nil
	}
	return q.c
}

// Start is Queue.Start.
func (q *DelayQueue) Start(ctx context.Context) error { return q.core().start(ctx, "DelayQueue") }

// Put adds an item due at at: node "queue-|<ms since the epoch, hex>|<seq>"
// (Curator's epochToString). A time at or before the epoch (the zero
// time) is ErrInvalidArgument, as Curator refuses delayUntilEpoch <= 0.
func (q *DelayQueue) Put(ctx context.Context, data []byte, at time.Time) error {
	return q.PutMulti(ctx, [][]byte{data}, at)
}

// PutMulti adds items as one node due at at. See Queue.PutMulti.
func (q *DelayQueue) PutMulti(ctx context.Context, items [][]byte, at time.Time) error {
	if err := q.core().check(ctx, "DelayQueue"); err != nil {
		return err
	}
	ms := at.UnixMilli()
	if ms <= 0 {
		return recipe.BadArg(ErrInvalidArgument, "time %v: at or before the epoch", at)
	}
	return q.c.put(ctx, "DelayQueue", epochString(ms), items)
}

// Items is Queue.Items.
func (q *DelayQueue) Items() <-chan Delivery { return q.core().itemsChan() }

// Close is Queue.Close.
func (q *DelayQueue) Close(ctx context.Context) error { return q.core().close(ctx, "DelayQueue") }
