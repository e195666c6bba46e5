// Package mutex is a distributed, reentrant mutual-exclusion lock on
// ZooKeeper: Curator's InterProcessMutex.
//
// # Layout
//
// Each contender creates an EPHEMERAL_SEQUENTIAL node
//
//	<path>/_c_<uuid>-lock-<seq10>
//
// under CONTAINER parents, with the client's default data (the local IP
// address as text, as in Curator) or, for a revocable holder, empty data.
// The lowest sequence holds the lock; each waiter watches only its
// immediate predecessor. Java processes using Curator's InterProcessMutex
// on the same path share the lock with go-curator processes.
//
// A go-curator holder hands the lock to the next waiter with one write: its
// release is one multi that deletes its node and creates an EPHEMERAL
// grant named after it,
//
//	/go-curator-grants/_c_<uuid>-lock-<seq10>
//
// under the client's namespace (one PERSISTENT directory for every lock,
// made on first use, outside the lock's path, so Curator's queue is
// untouched), and deletes the grant of the client's previous release: a
// client keeps at most one grant, plus one per release in flight. A
// go-curator waiter watches its predecessor's grant beside its node, and
// holds on the grant's creation without reading the queue again. A Java
// holder releases with a plain delete, after which its go-curator
// successor reads the queue, as Curator's waiters always do. A client
// that may not create the directory releases with plain deletes.
//
// # Holds
//
// [Mutex.Acquire] returns a [Hold]: a value that any goroutine may use.
// Its Lost channel tells every goroutine that watches it when the lock can
// no longer be trusted, its FencingToken is the token to hand to the
// resource the lock guards, and its Release gives the lock up, from
// whichever goroutine finishes the work:
//
//	h, err := lock.Acquire(ctx)
//	if err != nil {
//		return err
//	}
//	defer h.Release(context.WithoutCancel(ctx))
//	ctx, cancel := context.WithCancel(ctx)
//	defer cancel()
//	go func() { // the watchdog: stop the work if the lock is lost
//		select {
//		case <-h.Lost():
//			cancel()
//		case <-ctx.Done():
//		}
//	}()
//
// # Reentrancy
//
// The lock is reentrant per goroutine, as Curator's is per thread: a
// goroutine that holds it may Acquire again without I/O, which returns
// the same Hold with its count raised, and one release is due for each
// acquire. [Hold.Release] undoes one acquire from any goroutine;
// [Mutex.Release] undoes one acquire of the calling goroutine's hold, as
// Curator's release() does for the calling thread, and returns
// [ErrNotOwner] from a goroutine that holds nothing. Work that moves
// across goroutines may hand the Hold over; a lock that another goroutine
// may take while it is held (not reentrant) is the semaphoremutex
// package's.
//
// # Connection loss
//
// A holder must stop trusting the lock when [Hold.Lost] closes: on
// Suspended or Lost under the client's standard error policy, on Lost only
// under the session policy, and in either case when the session its node
// belongs to is lost. Lost comes before the server can have expired that
// session: nine tenths of the negotiated session timeout after the send
// time of the latest request the server answered (the framework package's
// "When Lost comes"), so under either policy Lost() closes before another
// process can be granted the lock; Curator can report it late. The lock node may be gone with the session, and
// another process may hold the lock. Use [Hold.FencingToken] with the
// resource you guard to reject the writes of a holder that has not
// noticed yet. Release after a loss still cleans up and returns the Mutex
// to a usable state. No acquire returns a hold already lost: a nested
// Acquire by a goroutine whose hold was lost returns an error matching
// [ErrSessionLost] and does not count; release the lost hold, then
// acquire anew.
//
// The session that created a node owns it. After the client declares its
// session lost and opens a new one, the server keeps the old session, and
// its nodes, alive until its own timeout; a waiter that then finds its old
// node in the queue does not take it for its own, as Curator does (and
// holds the lock until the server deletes that node and lets another
// process in). It deletes the node and, as the client's retry policy
// allows, queues again with a new one; when the policy gives up, Acquire
// returns an error matching [ErrSessionLost] (or [ErrNodeVanished] when the
// node was already gone).
package mutex
