// Package multilock holds several locks as one: Curator's
// InterProcessMultiLock.
//
// A MultiLock is built over any locks whose Acquire and TryAcquire return a
// hold (the [Locker] interface; [Of] makes one of mutex.Mutex, either side
// of an rwlock.Lock, semaphoremutex.Mutex, a semaphorev2.Semaphore, or
// your own lock), or over paths, for each of which it makes a
// mutex.Mutex.
//
// Acquire takes the locks in the order given and returns a [Hold] of them
// all. If one fails or its wait runs out, the ones already taken are
// released in reverse order and the error is returned (TryAcquire reports
// false). [Hold.Release] releases every lock in reverse order, goes on
// past failures, and returns their errors joined. To avoid deadlock, every
// process that takes several of the same locks should list them in the
// same order.
//
// # Layout
//
// A MultiLock writes no node of its own: each lock keeps its own layout.
// Over paths, each path holds the nodes of a mutex, which Java processes
// using Curator's InterProcessMutex or InterProcessMultiLock share:
//
//	<path>/_c_<uuid>-lock-<seq10>    EPHEMERAL_SEQUENTIAL
//
// # Holds
//
// The Hold is a value that any goroutine may use: a watchdog goroutine may
// wait on its Lost channel and cancel the work, and whichever goroutine
// finishes the work releases it. The mutexes are reentrant per goroutine:
// the goroutine that holds a MultiLock over them may acquire it again,
// which counts one more acquire on each mutex's hold; each Hold's Release
// undoes its own.
//
// # Connection loss
//
// [Hold.Lost] closes when any lock's hold can no longer be trusted: on
// Suspended or Lost under the client's standard error policy, on Lost only
// under the session policy, and in either case when the session a lock's
// node belongs to is lost. A holder must stop then. Each lock trusts only
// nodes of its client's current session (see the mutex package), so no
// lock of a MultiLock is granted on a node its lost session left behind.
// Release after a loss still cleans up.
//
// No Hold is returned lost: if a lock taken first is lost while Acquire
// (or TryAcquire) waits for the next, the wait ends, every lock taken is
// released, and the error matches [ErrSessionLost].
package multilock
