package queue

import (
	"context"
	"sync"
)

// Item is one item taken from a queue. A node written with PutMulti holds
// several items, delivered one by one, each with its own Index.
type Item struct {
	Data  []byte
	Token Token  // unique per item: see Token
	Node  string // the item node's name, e.g. "queue-0000000012"
	ID    string // the IDQueue's id (as stored: '/' and '|' made '_'), "" otherwise
}

// Token identifies one item for as long as it exists: the item node's
// creation zxid and the item's index within the node. A lock-safe queue
// redelivers an item whose consumer died with the same Token, so a store
// that records the tokens it has applied can refuse a duplicate.
type Token struct {
	Zxid  int64
	Index int
}

// Consumer consumes one item. A non-nil error means the item failed: a
// lock-safe queue then applies its ErrorMode; a plain queue has already
// deleted the item. ctx ends when the queue closes, and, in a lock-safe
// queue, when the session that holds the item's lock is lost (its cause
// then matches ErrSessionLost): the item is no longer ours, so stop.
type Consumer func(ctx context.Context, it Item) error

// Delivery is an item handed out by Items. Call Done once the item is
// consumed: a lock-safe queue waits for it (and then deletes or requeues
// the item), a plain queue has already deleted it and ignores it. The
// zero Delivery is not usable; a Delivery may be copied.
type Delivery struct {
	Item
	ctx  context.Context
	done *doneOnce
}

type doneOnce struct {
	once sync.Once
	ch   chan error
}

// Done reports the item's outcome: nil consumed, non-nil failed (see
// Consumer). Calls after the first, and calls on a zero Delivery, do
// nothing.
func (d Delivery) Done(err error) {
	if d.done == nil {
		return
	}
	d.done.once.Do(func() { d.done.ch <- err })
}

// Context returns a ctx that ends when the item stops being ours: the
// queue closes, or (lock-safe) the session holding its lock is lost.
// A zero Delivery's is context.Background.
func (d Delivery) Context() context.Context {
	if d.ctx == nil {
		return context.Background()
	}
	return d.ctx
}
