// Package semaphoremutex is a distributed mutual-exclusion lock that is not
// reentrant: Curator's InterProcessSemaphoreMutex. It is a semaphorev2
// semaphore with one lease.
//
// # Layout
//
// Exactly Curator's, the semaphore's with a maximum of 1, so Java and Go
// processes can share the lock:
//
//	<path>/locks/_c_<uuid>-lock-<seq10>    the semaphore's internal mutex
//	<path>/leases/_c_<uuid>-lease-<seq10>  the holder's lease
//
// # Use
//
// Unlike the mutex package, the lock belongs to the hold, not to a
// goroutine: a second Acquire blocks, even on the goroutine that holds
// the lock, until someone releases it. [Mutex.Acquire] returns a [Hold], a
// value that any goroutine may use: a watchdog goroutine may wait on its
// Lost channel and cancel the work, and the goroutine that finishes the
// work calls its Release, which ends that hold and no other. This is the
// lock for work handed from one goroutine to another. [Mutex.Release]
// releases without the hold, as Curator's release() does (see below);
// without a hold it returns [ErrNotOwner].
//
// # Connection loss
//
// A holder must stop trusting the lock when [Hold.Lost] closes: on
// Suspended or Lost under the client's standard error policy, on Lost
// only under the session policy, and in both when the session that made
// the lease node is lost. After Lost the lease node is gone with the
// session, and another process may hold the lock. Use
// [Hold.FencingToken] with the resource you guard; Release after a loss
// still cleans up and leaves the Mutex usable. No acquire returns a hold
// already lost: it returns the lease and an error matching
// [ErrSessionLost].
//
// A loss can leave a Mutex with two holds: the lost one, not yet
// released, and a new one that a waiting Acquire on the same Mutex got
// meanwhile. A Release must end the lost one, or another process could
// take the lock while the new holder works. So Mutex.Release ends the
// oldest hold that the calling goroutine acquired, or, from a goroutine
// that acquired none, the oldest hold of the Mutex. [Hold.Release] is
// exact whichever goroutine calls it.
package semaphoremutex
