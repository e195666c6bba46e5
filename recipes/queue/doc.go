// Package queue is Curator's distributed queues on ZooKeeper:
// DistributedQueue ([New]), DistributedIdQueue ([NewID]),
// DistributedPriorityQueue ([NewPriority]), DistributedDelayQueue
// ([NewDelay]), SimpleDistributedQueue ([NewSimple]) and QueueSharder
// ([NewSharder]), in Curator 5.4's node names and item encoding, so that
// Java's QueueBuilder producers and consumers and Go's share one queue.
//
// A queue value both produces (Put, PutMulti, which work before Start) and,
// once started, consumes: with [WithConsumer] a func called for each item
// on the queue's one consuming goroutine, or else from [Queue.Items], an
// unbuffered channel (a slow receiver holds the queue back: nothing is
// taken, and nothing dropped, until it receives). A queue value that does
// neither only produces. The consumers of one queue value share its one
// loop and its one place in the line; run several values (several
// clients, or processes) for parallel consumers.
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
//	<path>/queue-<uuid>                  Sharder: one queue each, as above
//	<leaderPath>/_c_<uuid>-latch-<seq>   Sharder's election, Curator's LeaderLatch layout
//	<path>-lines/queue-<uuid>/...        Sharder: each shard's line, out of the sharder's directory
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
// A node holding several items (PutMulti) is one unit, as in Curator: it
// is deleted once all its items are consumed; with ErrorModeRequeue the
// first failure puts the whole node back at the tail. Curator requeues a
// priority or delay item without its priority or time; ours keeps them
// (and the id, as Curator does).
//
// Bytes under the queue that do not decode are reported (an error matching
// [ErrBadItem], to [WithErrorHandler] and the client's logger), left in
// place, and skipped by that consumer; they never stop it. A Java
// consumer deletes them, as Curator does.
//
// # Order
//
// One consumer alone takes items in the queue's order: by sequence, by
// priority then sequence, by due time then sequence, by sequence for ids.
// A consumer works through the list it read before it reads the directory
// again, so an item put meanwhile (a more urgent priority too) waits until
// that list is done; consumers that collide on an item jump a few items
// ahead, so several consumers keep only a rough order, as with Curator.
// A delay queue's consumer compares due times with its local clock, as
// Curator's does: producers' and consumers' clocks must agree.
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
// consumers (measured: 2.0 per put with 16 idle consumers, against 16 when
// each watches the directory, which [WithoutLine] restores). A busy
// consumer watches nothing: it lists the directory once, keeps the pending
// items as numbers, and lists again only when its list is exhausted.
// A consumer that dies while at the head of the line holds up the others'
// wake-ups (not busy consumers) until its session expires.
//
// # Close
//
// Close stops consuming: the item in hand's ctx is cancelled and Close
// waits for its consumer (until Close's ctx ends). A lock-safe item whose
// consumer fails because of that cancel only loses its lock: it stays in
// place, in its position, for another consumer; one whose consumer returns
// nil is finished as usual. A Delivery not yet Done when Close comes is
// treated alike (its Done is then ignored). Close leaves the line and
// closes Items; a Sharder's Close closes its queues.
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
