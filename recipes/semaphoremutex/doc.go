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
// Unlike the mutex package, the lock belongs to the Mutex value, not to a
// goroutine: a second Acquire blocks, even on the goroutine that holds
// the lock, until someone releases it; and any goroutine may Release it.
// This is the lock for work handed from one goroutine to another: hand
// over the Hold that AcquireHold returns, and call its Release, which
// ends that hold and no other. Release without a hold returns ErrNotHeld.
//
// # Connection loss
//
// A holder must stop trusting the lock when Lost() closes: on Suspended or
// Lost under the client's standard error policy, on Lost only under the
// session policy. After Lost the lease node is gone with the session, and
// another process may hold the lock. Use FencingToken with the resource
// you guard; Release after a loss still cleans up and leaves the Mutex
// usable.
//
// A loss can leave a Mutex with two holds: the lost one, not yet
// released, and a new one that a waiting Acquire on the same Mutex got
// meanwhile. A Release must end the lost one, or another process could
// take the lock while the new holder works. So Mutex.Release ends the
// oldest hold that the calling goroutine acquired, or, from a goroutine
// that acquired none, the oldest hold of the Mutex; Lost and FencingToken
// describe that same hold. Hold.Release is exact whichever goroutine
// calls it.
package semaphoremutex
