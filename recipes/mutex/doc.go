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
// session policy, and in either case when the session its node belongs to
// is lost. The lock node may be gone with the session, and another
// process may hold the lock. Use FencingToken with the resource you guard
// to reject the writes of a holder that has not noticed yet. Release after
// a loss still cleans up and returns the instance to a usable state.
//
// The session that created a node owns it. After the client declares its
// session lost and opens a new one, the server keeps the old session, and
// its nodes, alive until its own timeout; a waiter that then finds its old
// node in the queue does not take it for its own, as Curator does (and
// holds the lock until the server deletes that node and lets another
// process in). It deletes the node and, as the client's retry policy
// allows, queues again with a new one; when the policy gives up, Acquire
// returns an error matching ErrSessionLost (or ErrNodeVanished when the
// node was already gone).
package mutex
