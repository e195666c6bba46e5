// Package rwlock is a distributed, reentrant read/write lock on ZooKeeper:
// Curator's InterProcessReadWriteLock.
//
// A Lock is a pair of locks on one path. The read lock may be held by
// many goroutines and processes at once, as long as no writer holds the
// lock; the write lock is exclusive. The queue is fair: a writer waiting
// in the queue blocks the readers that arrive after it, so writers do not
// starve.
//
// # Layout
//
// Each contender creates an EPHEMERAL_SEQUENTIAL node under the lock's
// path, whose missing parents are CONTAINER nodes:
//
//	<path>/_c_<uuid>-__WRIT__<seq10>    a writer
//	<path>/_c_<uuid>-__READ__<seq10>    a reader
//
// Both kinds share the parent's counter and sort by it. The node data is
// the lock data given with WithData, or the client's default data (the
// local IP address as text, as in Curator). A writer holds the lock when
// its node is first of all; otherwise it watches its immediate
// predecessor. A reader holds the lock when no writer is ahead of it;
// otherwise it watches the first writer ahead of it. Java processes using
// Curator's InterProcessReadWriteLock on the same path share the lock with
// go-curator processes.
//
// # Holds
//
// Each side's Acquire returns a [Hold]: a value that any goroutine may
// use, as mutex.Hold is. Its Lost channel tells every goroutine that
// watches it when the lock can no longer be trusted, its FencingToken is
// the token to hand to the resource the lock guards, and its Release
// gives the side up, from whichever goroutine finishes the work.
//
// # Reentrancy, downgrade, upgrade
//
// Each side is reentrant per goroutine, like mutex.Mutex: a goroutine that
// holds a side may Acquire it again without I/O, which returns the same
// Hold with its count raised, and one release is due for each acquire.
// [Hold.Release] undoes one acquire from any goroutine; [Mutex.Release]
// undoes one acquire of the calling goroutine's hold on that side, and
// returns [ErrNotOwner] from a goroutine that holds nothing there.
//
// A goroutine that holds the write lock may take the read lock at once
// (downgrade): acquire write, acquire read, release write. This package
// follows Curator 5.5 (CURATOR-621): the downgraded read node is a plain
// EPHEMERAL node named with the write node's sequence,
//
//	<path>/_c_<uuid>-__READ__<seq10 of the write node>
//
// so it takes the write node's place in the queue, and writers queued
// behind the write stay blocked until the read is released too. (Curator
// 5.4 and earlier, Debian's version, create an ordinary read node at the
// end of the queue, which a queued writer overtakes.) Unlike Curator, the
// downgrade checks that the write node is still there: if it went with an
// expired session, the read Acquire returns [ErrWriteLost] and leaves no
// node; release the write lock, then acquire the read lock anew. The
// downgrade follows the goroutine, as Curator's follows the thread: it is
// the goroutine that acquired the write hold whose read Acquire is
// granted at once.
//
// A reader can never upgrade: a write Acquire by a goroutine that holds
// only the read lock queues behind its own read node, so TryAcquire
// returns false when its wait runs out, and Acquire waits until ctx ends.
// Release the read lock first.
//
// # Revocation
//
// Each side can be made revocable, as Curator's halves are with
// makeRevocable: [WithReadRevocation] and [WithWriteRevocation] take a
// listener, called with the hold when another process asks it to give up.
// [Revoke] asks, by writing Curator's "__REVOKE__" to the holder's node, as
// Curator's Revoker.attemptRevoke does; Curator's holders react to Go's
// Revoke and Go's to Curator's Revoker. Revocable holders write empty node
// data, as Curator's do. A revoke is a request: a holder that is not
// revocable, or whose listener does not release, keeps the lock.
//
// # Connection loss
//
// A holder must stop trusting the lock when [Hold.Lost] closes: on
// Suspended or Lost under the client's standard error policy, on Lost only
// under the session policy, and in either case when the session its node
// belongs to is lost. Lost comes before the server can have expired that
// session: nine tenths of the negotiated session timeout after the send
// time of the latest request the server answered in time, on the monotonic
// clock (the framework package's
// "When Lost comes"), so under either policy Lost() closes before another
// process can be granted the lock; Curator can report it late. The node may be gone with the session, and a writer
// in another process may hold the lock. Use [Hold.FencingToken] with the
// resource you guard to reject the writes of a holder that has not
// noticed yet. Release after a loss still cleans up and leaves the lock
// usable. No acquire returns a hold already lost: a nested Acquire on a
// side whose hold was lost returns an error matching [ErrSessionLost] and
// does not count, and a downgrade beside a lost write hold returns
// [ErrWriteLost] (and ErrSessionLost); release the lost hold first.
//
// The session that created a node owns it. After the client declares its
// session lost and opens a new one, the server keeps the old session, and
// its nodes, alive until its own timeout; a waiter that then finds its old
// node in the queue does not take it for its own, as Curator does (and
// holds the lock until the server deletes that node and lets another
// process in). It deletes the node and, as the client's retry policy
// allows, queues again with a new one; when the policy gives up, Acquire
// returns an error matching [ErrSessionLost] (or [ErrNodeVanished] when
// the node was already gone). A downgrade whose write hold's session is
// lost returns [ErrWriteLost].
package rwlock
