// Package multilock holds several locks as one: Curator's
// InterProcessMultiLock.
//
// A MultiLock is built over any locks with Acquire, TryAcquire and Release
// (the Locker interface: mutex.Mutex, either side of an rwlock.Lock, your
// own), or over paths, for each of which it makes a mutex.Mutex.
//
// Acquire takes the locks in the order given. If one fails or its wait
// runs out, the ones already taken are released in reverse order and the
// error is returned (TryAcquire reports false). Release releases every
// lock in reverse order, goes on past failures, and returns their errors
// joined. To avoid deadlock, every process that takes several of the same
// locks should list them in the same order.
//
// # Layout
//
// A MultiLock writes no node of its own: each lock keeps its own layout.
// Over paths, each path holds the nodes of a mutex, which Java processes
// using Curator's InterProcessMutex or InterProcessMultiLock share:
//
//	<path>/_c_<uuid>-lock-<seq10>    EPHEMERAL_SEQUENTIAL
//
// # Goroutines
//
// The mutexes are reentrant per goroutine, so a MultiLock over them must
// be released by the goroutine that acquired it; from another goroutine
// Release returns the mutexes' ErrNotOwner, joined.
//
// # Connection loss
//
// Each lock reports its own loss (mutex.Mutex.Lost). A holder must watch
// those of the locks it depends on and stop when any closes: on Suspended
// or Lost under the client's standard error policy, on Lost only under
// the session policy, and in either case when the session a lock's node
// belongs to is lost. Each lock trusts only nodes of its client's current
// session (see the mutex package), so no lock of a MultiLock is granted on
// a node its lost session left behind. Release after a loss still cleans
// up.
package multilock
