// Package barrier is a distributed barrier on ZooKeeper: Curator's
// DistributedBarrier.
//
// One process sets the barrier, any number of processes wait on it, and
// whoever removes it releases every waiter at once. It suits "hold all
// workers until the batch is loaded": set before the work starts, remove
// when it may proceed.
//
// # Layout
//
// The barrier is one node, the path itself:
//
//	<path>    PERSISTENT, WithData's bytes or the client's default data
//
// Its missing parents are created as CONTAINER nodes with empty data. The
// barrier is up while the node exists and down while it does not, so Java
// processes using Curator's DistributedBarrier on the same path set,
// remove and wait on the same barrier as go-curator processes.
//
// # Waiting
//
// Wait reads the node with a data watch and re-reads it after every
// wake-up (a change of data, a delete, a connection event), so it returns
// nil only after a read that found no node. A Remove followed at once by a
// Set may therefore release none of the waiters, as in Curator.
//
// # Connection loss
//
// On Suspended, Wait re-reads the node through the client's retry loop,
// which waits for the connection to come back. When the retry policy
// gives up, Wait returns that error: the barrier's state is then unknown,
// and the caller decides whether to wait again or give up. Set and Remove
// run in the retry loop too; after an error they may or may not have taken
// effect, and calling them again is safe.
package barrier
