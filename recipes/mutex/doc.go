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
// # Reentrancy
//
// The lock is reentrant per goroutine, as Curator's is per thread: a
// goroutine that holds it may Acquire again without I/O, and must Release
// as many times. Release from a goroutine that holds nothing returns
// ErrNotOwner. Work that moves across goroutines wants the
// semaphoremutex package instead, which any goroutine may release.
//
// # Connection loss
//
// A holder must stop trusting the lock when Lost() closes: on Suspended or
// Lost under the client's standard error policy, on Lost only under the
// session policy. The lock node may be gone with the session, and another
// process may hold the lock. Use FencingToken with the resource you guard
// to reject the writes of a holder that has not noticed yet. Release after
// a loss still cleans up and returns the instance to a usable state.
package mutex
