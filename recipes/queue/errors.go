package queue

import "errors"

// Errors of the queues. Match them with errors.Is.
var (
	// ErrInvalidArgument reports a bad argument: a nil client, an invalid
	// path or the root, a nil option or ctx, an empty id, a zero time,
	// an empty PutMulti, a nil or zero queue. It also matches the
	// framework's specific sentinel (framework.ErrNilClient,
	// framework.ErrInvalidPath or framework.ErrInvalidArgument).
	ErrInvalidArgument = errors.New("queue: invalid argument")
	// ErrClosed is returned by every method of a queue after Close.
	ErrClosed = errors.New("queue: closed")
	// ErrNotStarted is returned by a call that needs Start first
	// (Items, Close's wait) on a queue that was never started.
	ErrNotStarted = errors.New("queue: not started")
	// ErrEmpty is returned by SimpleQueue.Poll and SimpleQueue.Peek when
	// the queue has no item.
	ErrEmpty = errors.New("queue: empty")
	// ErrBadItem reports an item node whose bytes do not decode as
	// Curator's item format (another writer put them there). A consumer
	// reports it to the WithErrorHandler func, logs it, leaves the node in
	// place and goes on.
	ErrBadItem = errors.New("queue: bad item")
	// ErrTooLarge is returned by a put whose encoded node would exceed the
	// server's request limit (jute.maxbuffer, 1 MB less a little by
	// default; see WithMaxBytes). Nothing is written.
	ErrTooLarge = errors.New("queue: item too large")
	// ErrSessionLost is the cause of the ctx given to a lock-safe consumer
	// when the session that holds the item's lock ends: the item is no
	// longer ours and will be delivered again.
	ErrSessionLost = errors.New("queue: session lost")
)
