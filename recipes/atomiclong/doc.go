// Package atomiclong is a distributed int64 counter: Curator's
// DistributedAtomicLong. [Cached] hands out its values from ranges, as
// Curator's CachedAtomicLong.
//
// # Use
//
//	policy, _ := retry.NewNTimes(10, 0)
//	counter, err := atomiclong.New(client, "/shop/orders", policy)
//	if err != nil { ... }
//	res, err := counter.Increment(ctx)
//	if err != nil { ... }
//	if !res.Succeeded { ... } // every try lost: try again or give up
//	fmt.Println(res.PreValue, "->", res.PostValue)
//
// # Algorithm
//
// Every change is Curator's: read the node, compute the new value, and
// write it at the version read (or create the node if it was missing). A
// write that loses to another writer is tried again. Always check
// Result.Succeeded: only Get and ForceSet always succeed.
//
// # A fair queue behind the optimistic try
//
// Optimistic writers alone starve one another: the writer that wins keeps
// winning while the losers back off, and under heavy contention one
// caller can wait seconds, or run out of tries, while the others' figures
// look excellent (Curator's DistributedAtomicLong does this, and so did
// this package). So a Long queues its losers, as Go's sync.Mutex does in
// its starvation mode: at its first lost race an operation stops trying
// and joins the queue of the promoted lock, an InterProcessMutex
// (recipes/mutex, Curator's PromotedToLock), and waits its turn in FIFO
// order instead of sleeping. The lock's holder reads and writes again at
// once until a write wins. A writer that is winning yields to the queue:
// once it has met another writer in the last 500 ms and won 16 operations
// in a row, its next operation joins the queue behind the others. The
// holder lets that streak finish: when its first read under the lock finds
// the node two or more versions past its own last write (the previous
// holder is on its streak), it reads again every quarter streak until the
// node is a streak further or stops changing, and only then writes, rather
// than spinning writes that lose (a write goes through the server's log; a
// read does not). A write on a streak is one request; the holder's turn is
// about four reads, one write, and the lock's own six or so. Each contending caller
// thus gets, per round of the queue, one operation under the lock and a
// streak of wins: no caller waits more than about a round, and the counter
// keeps most of the throughput of the winners' streaks. A caller that
// never loses a race never touches the lock.
//
// This is on by default, because a wait without a bound is the failure
// users do not see coming, and because the lock only schedules the writers:
// every write is still a compare-and-set, so a Java process or a Long that
// does not queue can still write at any time and nothing goes wrong, only
// less fairly. By default the lock is at the counter's path plus
// [DefaultLockSuffix] ("/shop/orders-lock"), an operation waits in its
// queue as long as its ctx allows, and under the lock it tries until a
// write wins or ctx ends: the queue, not the policy, bounds it there, and
// the policy bounds the optimistic tries. [WithPromotedLock] sets the
// lock's path (share it with the Java processes that use PromotedToLock on
// the same counter, so that all queue together), a bound on the wait
// (maxWait: not getting the lock in time is a failed Result), and the
// policy of the tries under it, as Curator's PromotedToLock does; unlike
// Curator, which takes the lock only once the optimistic policy is spent,
// with its sleeps, a Long queues at the first lost race.
// [WithoutPromotedLock] gives Curator's optimistic-only shape, described
// next, for callers that want no node but the counter's (or whose ACLs
// let them create none beside it: a failed create of the lock's node is
// the operation's error).
//
// # Without a promoted lock
//
// Two things make the optimistic tries cheaper than Curator's. An
// operation that follows this Long's own successful write by less than
// 10 ms skips the read: it writes at the version that write made, which
// succeeds only if no one has written since (a delete and a re-create
// reset the version to 0 and do not match a version a Long has written
// on). A lone writer makes one request per operation instead of two, with
// or without a promoted lock. And without one, the operations of one Long
// take turns with other writers as Curator's do, the winner writing on
// while the losers sleep, so that most operations end in one try; but the
// winner hands over. A lost race is a transaction on the server too, so
// another writer's request between two of its writes shows as a gap in
// the node's modification zxids (mzxid); a Long that has won 512
// operations in a row and sees such a gap pauses its next operation for
// about three of its tries, and reads. A loser retries at once after its
// first lost race and after the first one that follows each sleep (that
// retry lands in the pause); after the second it sleeps 200 tries (at
// least 50 ms, at most 500 ms, random between half and all of it),
// doubling after each sleep up to eight times that. A loser that wakes
// reads first, and sleeps on without writing while the node shows
// another writer on a streak too short to yield (fewer than 512 versions
// since the loser's last write, and at least one version per four tries
// since its last read): a write then would lose, or win by chance and cut
// the streak short, which makes two slow operations. A writer that is not
// that hot, or a node no one writes, gets the write. A yield that no one
// took (the version is still the Long's own) stops the yields for 20 ms,
// so a lone writer on an ensemble busy with other work, whose zxids have
// gaps anyway, rarely pauses.
//
// That shape is chosen for the throughput and the median and 99th
// percentile latency of many writers, as Curator's is: under contention
// fewer than 1 % of the operations wait, but those few wait long: a sleep
// or more, hundreds of milliseconds to seconds with 16 writers, and an
// operation whose policy runs out first returns Succeeded false.
//
// The policies decide how many tries are made (RetryNTimes' count, or
// RetryUntilElapsed's time). The waits between tries are this package's,
// not the policy's: Curator sleeps the policy's sleep (typically 100 ms)
// after every lost race. Without a promoted lock, two tries go with each
// sleep, so give the policy at least 10 tries (or an elapsed-time limit of
// seconds) under heavy contention.
//
// CompareAndSet makes one try, and fails on a missing node: Initialize
// creates it. ForceSet writes without a version. Arithmetic wraps around,
// as it does in Java.
//
// # ZooKeeper layout
//
// The value is the data of the PERSISTENT node at the counter's path,
// whose parents are created as CONTAINER nodes: 8 bytes, a big-endian
// two's-complement int64, exactly as Curator writes it, so Java and Go
// processes can share a counter. A missing node or empty data reads as 0;
// data of any other length is an error wrapping ErrCorrupt that names the
// node. The promoted lock is a mutex at its own path (by default the
// counter's path plus "-lock", a sibling of the counter node), with
// Curator's layout: _c_<uuid>-lock-<seq> EPHEMERAL_SEQUENTIAL children of
// a CONTAINER node, which the server removes once the queue is empty. A
// Long made WithoutPromotedLock writes nothing but the counter node.
//
// # Lost replies: a change is never applied twice
//
// A write can reach the server and be applied while its reply is lost
// with the connection. The client's retry then meets its own first
// attempt (a BadVersion, or a NodeExists for the create of a missing
// node), which a naive compare-and-set loop reads as a lost race: it reads
// the new value and adds again, so one Increment adds 2. Here such a write
// ends the operation with an error matching ErrIndeterminate (which is
// framework.ErrIndeterminate): the change happened once or not at all,
// and nothing tries it again. The Result tells what the write was:
// PreValue and the PostValue it may have stored.
//
// The rule for callers: an indeterminate increment may or may not have
// happened; read and decide, never repeat it blindly. Match
// ErrIndeterminate before any other error: the error also wraps the last
// error seen (a connection loss, zk.ErrBadVersion, zk.ErrNodeExists). A
// caller that must count each event exactly once keeps its own record of
// what it applied (for example an order ID in the value's store), or
// accepts that an indeterminate increment may be lost or kept. Only
// ForceSet, an absolute blind write, is safe to repeat.
//
// Definite outcomes stay definite: a nil error with Succeeded true means
// the change was applied exactly once, and Succeeded false without an
// error means it was not applied at all.
//
// # Connection states
//
// Every operation runs in the client's retry loop, so a short connection
// loss only delays it. An error matching ErrIndeterminate is described
// above; any other error is definite: nothing was written. A Long holds no
// state between operations, so Suspended and Lost need nothing from the
// caller. The promoted lock only orders the writers, never guards a value
// (every write is a compare-and-set), so an operation does not watch its
// hold: a hold lost under it costs fairness for a moment, not
// correctness. An operation cancelled while it waits in the lock's queue
// deletes its node and returns the ctx's error, having written nothing.
package atomiclong
