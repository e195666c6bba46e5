// Package queue is Curator's distributed queues on ZooKeeper:
// DistributedQueue ([New]), DistributedIdQueue ([NewID]),
// DistributedPriorityQueue ([NewPriority]), DistributedDelayQueue
// ([NewDelay]) and SimpleDistributedQueue ([NewSimple]), in Curator 5.4's
// node names and item encoding, so that Java's QueueBuilder producers and
// consumers and Go's share one queue.
//
// # ZooKeeper layout
//
//	<path>                               PERSISTENT (parents CONTAINER), made by Start or the first put
//	<path>/queue-<seq>                   Queue: one node per Put or PutMulti, PERSISTENT_SEQUENTIAL
//	<path>/queue-<1|0><8 hex><seq>       PriorityQueue: 1 for priority >= 0, 0 below, then its 32 bits
//	<path>/queue-|<hex ms>|<seq>         DelayQueue: due time in ms since the epoch, at least 8 hex digits
//	<path>/queue-|<id>|<seq>             IDQueue: id with '/' and '|' written as '_'
//	<lockPath>/<item node name>          lock-safe only: EPHEMERAL, the consumer's while it holds the item
//	<path>-line/_c_<uuid>-c-<seq>        idle Go consumers' line, EPHEMERAL_SEQUENTIAL (WithLinePath)
//	<path>/qn-<seq>                      SimpleQueue: the raw bytes
//
// An item node holds Curator's ItemSerializer encoding: the 4-byte
// big-endian int 0x00010001, then per item the byte 0x01, a 4-byte
// big-endian length and the bytes, then the byte 0x02. Put writes one
// item, PutMulti several in one node. Children of <path> that do not start
// with "queue-" are not items and are skipped, as Curator skips them.
//
// # Delivery guarantees
//
// Plain (no [WithLockPath]), as Curator: a consumer reads an item, deletes
// it, then hands it to the consumer: at most once. An item whose consumer
// fails or dies is lost.
//
// Lock-safe ([WithLockPath]), as Curator: the consumer creates the
// EPHEMERAL lock lockPath/<item>, then reads the item, hands it to the
// consumer and, once the consumer returned nil, deletes the item and the
// lock in one multi: at least once. A consumer that dies (or whose session
// ends) mid-item leaves it, with its lock gone, to another consumer, which
// gets it with the same Token; a consumer that returns an error gets the
// ErrorMode (requeue at the tail, or delete). Unlike Curator's, a consumer
// refused an item's lock watches that lock and takes the item up as soon
// as the lock goes, instead of waiting for the next put.
//
// Every Item carries a Token (the node's czxid and the item's index in it)
// unique to it, so a store can refuse a duplicate delivery.
//
// # No herd
//
// Curator's consumers each watch the queue's directory, so every put wakes
// every idle consumer (and each re-reads the directory). Ours line up: an
// idle consumer creates an ephemeral sequential node in the line directory
// (<path>-line by default, a sibling of the queue, which Java never
// lists), and watches only its predecessor there; only the head of the
// line watches the queue's directory. A consumer leaves the line when it
// has claimed an item, and rejoins at the tail when it runs out of work.
// One put then costs about two notifications whatever the number of idle
// consumers. A busy consumer watches nothing: it lists the directory once,
// keeps the pending items as numbers, and lists again only when its list
// is exhausted.
//
// # Connection loss
//
// Consuming goes on across Suspended and reconnects by itself. On Lost a
// lock-safe consumer's item is no longer its own: the Consumer's ctx ends
// with cause [ErrSessionLost], and the item is not deleted. A put whose
// reply is lost returns an error matching framework.ErrIndeterminate: it is
// not retried, since a sequential create cannot be told from another's,
// and Curator's protected names would hide the item from Java consumers.
package queue
