// Package semaphorev2 is a distributed counting semaphore with leases on
// ZooKeeper: Curator's InterProcessSemaphoreV2. At most a maximum number of
// leases are held at once across every process that uses the same path.
// The maximum is a number (New) or the value of a shared count (NewWithCount),
// which every process then reads and which waiters follow as it changes.
//
// # Layout
//
// Exactly Curator's, so Java and Go processes can share a semaphore:
//
//	<path>/locks/_c_<uuid>-lock-<seq10>    the internal mutex (InterProcessMutex layout)
//	<path>/leases/_c_<uuid>-lease-<seq10>  one node per lease
//
// Both are EPHEMERAL_SEQUENTIAL, under CONTAINER parents. Lock nodes hold
// the client's default data; lease nodes hold [WithData]'s bytes or the
// client's default data. A lease is held while its node exists.
//
// # Algorithm
//
// Curator's rule is: hold the internal lock, create a lease node, and wait,
// still holding the lock, until a read of leases/ that contains our node
// finds at most max children; then release the lock. Only the lock holder
// adds lease nodes, so at most one lease node is ever waiting, and a
// release wakes only the one waiter that holds the lock.
//
// go-curator keeps that rule and its wire layout, and takes fewer round
// trips per lease:
//
//  1. Fast path. If nobody is queued on the lock (locks/ has no children),
//     create the lease node at once and read leases/. The lease is granted
//     if fewer than max nodes precede ours in sequence order; if not, we
//     delete our node and take the slow path. Cost when free: one read, one
//     create, one read (Curator: three writes and two reads); about half
//     Curator's latency. A Semaphore that met contention skips the fast
//     path for a second, since its first read would be wasted; the fast
//     path never overtakes a queued waiter.
//  2. Slow path. Acquire the internal lock (an InterProcessMutex), then,
//     holding it, watch leases/ until it has fewer than max children. Then
//     one multi checks that our lock node still exists, creates our lease
//     node and deletes the lock node. A read of leases/ confirms the grant
//     as in 1. A waiter holds no lease node, only its lock node; the lock
//     hand-off costs one write (the multi), not Curator's two.
//
// Why it is safe, with Java and Go processes mixed: every grant, Curator's
// and ours, is decided by a read of leases/ made after the grantee's node
// exists, and (ours) on the session that owns that node; a holder keeps
// its lease only while that session lives (see Sessions below). Take the
// leases held at any moment, and the one whose node has the highest
// sequence among them, m. Every other one was created before m and still
// exists, so m's deciding read saw all of them. (A lease is held while its
// Lost() is open, so while its session is the client's current one, which
// the client declares lost before the server can have expired it; nobody
// else deletes its node.) Curator granted
// m only if that read had at most max children; we grant it only if fewer
// than max of them precede m. Either way at most max leases are held.
// Liveness needs what Curator needs: at most one lease node waits at a
// time. Ours never wait (a node that is not granted at once is deleted),
// and only lock holders wait, so a Java waiter is never blocked by a Go
// node that is not held.
//
// # Sessions
//
// The session is the owner of a node, and presence in a children list is
// not ownership: ZooKeeper keeps a session that the client has abandoned
// (after the client's simulated expiry, when it opens a new one) alive
// until the server's own timeout, ephemeral nodes included. So an acquire
// takes the client's current session before it makes a node (the fast
// path's lease node; the slow path's lock node, and with it the lease
// node of the multi), and trusts the node only while that session is
// current:
//
//   - a grant decided from a read that returned after the session was
//     lost is refused: the node is deleted if it is still there, and the
//     acquire starts again under the client's retry policy (an error
//     matching ErrNodeVanished when the policy gives up);
//   - a waiter whose session is lost while it holds the internal lock
//     does the same, rather than wait behind a lock node that the server
//     deletes at a time nobody knows;
//   - a lease's Lost() closes when its session is lost, whatever the
//     error policy.
//
// Without these rules an acquire could confirm, on a new session, a node
// of the abandoned one: the server would delete that node at its own
// timeout and grant the lease to another process, while the holder's
// loss signal, tied to the new session, stayed open.
//
// # Lost replies
//
// The slow path's multi can commit while its reply is lost with the
// connection. Its retry then fails (our lock node is gone), and the lease
// node's protected prefix tells whether the first attempt committed: the
// acquire looks for it in leases/. If the caller's ctx has ended, or the
// look fails, the acquire gives up and the client deletes that node in
// the background (framework.Client.CleanupProtected) as soon as it can
// reach the server. Otherwise it would stay on a live session, a lease
// held by nobody, and a one-lease semaphore would be dead for every
// process, Curator's included. The fast path's protected create gets the
// same care from the client.
//
// Under contention the gain is the hand-off: one fsynced write (the multi)
// and two reads between grants, where Curator needs two writes and two
// reads; the total requests per lease are about the same (one more read to
// confirm the grant, one write fewer).
//
// # Bounded waits
//
// TryAcquire and TryAcquireN mirror Curator's acquire(time, unit), which
// returns null on timeout. A nil lease with a nil error would be easy to
// misread in Go, so they return an explicit boolean: (nil, false, nil)
// when the wait runs out, as mutex.TryAcquire returns (false, nil).
//
// # Cancellation and failure
//
// A cancelled, timed-out or failed acquire deletes the nodes it made (its
// lock node, a lease node it created) with a detached, bounded context and
// a guaranteed delete, and returns every lease it had already taken in the
// same call (Curator leaked these: CURATOR-335, CURATOR-462). A lease
// node it may have made without knowing it (a lost reply, see above) is
// deleted by the client in the background once the server answers again.
// If our node vanishes during an acquire (the session expired, or someone
// deleted it), or the session that made it is lost, the client's retry
// policy decides whether to start again; when it gives up, the error
// matches [ErrNodeVanished].
//
// # Connection loss
//
// A lease holder must stop trusting its lease when [Lease.Lost] closes: on
// Suspended or Lost under the client's standard error policy, on Lost only
// under the session policy, and in both when the session that made the
// lease node is lost. After Lost the lease node is gone with the session,
// or soon will be, and another process may hold the lease. Use the lease's
// FencingToken with the resource you guard. Returning a lost lease is
// safe: it deletes the node if the server still has it.
//
// No acquire returns a lease already lost: if a lease AcquireN took first
// is lost while it waits for the next (or the last is lost before the call
// returns), it returns every lease it took and an error matching
// [ErrSessionLost]; a grant whose loss signal closed during its deciding
// read is decided again with a fresh signal.
//
// A Lease is a value any goroutine may use, as the holds of the lock
// recipes are: a watchdog goroutine may wait on its Lost channel and
// cancel the work, and whichever goroutine finishes the work returns it
// with [Lease.Release] (or Close, Curator's name).
package semaphorev2
