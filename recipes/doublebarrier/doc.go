// Package doublebarrier is a distributed double barrier on ZooKeeper:
// Curator's DistributedDoubleBarrier, the double barrier of the ZooKeeper
// recipes.
//
// A double barrier lets a group start a computation together and finish
// it together. Each participant calls Enter, which returns once memberQty
// participants have entered, does its work, then calls Leave, which
// returns once every participant has left. memberQty is a threshold, not a
// cap: more than memberQty may enter, and all of them must leave.
//
// # Layout
//
// Under the barrier path, whose missing parents (and the path itself) are
// created as CONTAINER nodes with empty data:
//
//	<path>/<uuid>   EPHEMERAL, one per participant inside, WithData's bytes or the client's default data
//	<path>/ready    PERSISTENT, the client's default data
//
// <uuid> is a random 36-character UUID with no protection prefix, a new
// one for each Enter, and for each member node Enter makes again after a
// session loss. ready is created by the participant that finds the
// number of children of <path> (ready included, as Curator counts) at or
// above memberQty; every participant waiting in Enter watches ready, and a
// participant that finds it enters at once. Java processes using
// Curator's DistributedDoubleBarrier on the same path and memberQty share
// the barrier with go-curator processes.
//
// # Entering
//
// Enter re-reads the barrier's real state after every wake-up (the ready
// watch, a connection event, anything), so it never returns nil before
// enough members are in; Curator's Enter once did (GH-1290). A failed,
// cancelled or timed-out Enter deletes its member node, which Curator
// leaves behind (CURATOR-80, CURATOR-318).
//
// # Leaving
//
// Leave runs the ZooKeeper recipe's algorithm over the member nodes sorted
// by name: the lowest member keeps its node and watches the highest; every
// other member deletes its node and watches the lowest. The last member
// out deletes ready and its own node in one transaction, so the next round
// starts from an empty path. A cancelled or failed Leave deletes its member
// node and returns the error; the others can still leave.
//
// # Connection loss
//
// On Suspended, a waiting Enter or Leave wakes and re-reads through the
// client's retry loop, which waits for the connection to come back. When
// the retry policy gives up, the call returns that error after deleting
// its member node (in the background if the connection is still down).
// If the session expires while waiting in Enter, the member node dies with
// it; Enter creates a fresh one, as often as the retry policy allows, and
// then returns an error matching ErrMemberLost.
//
// The session that created a member node owns it. When the client declares
// its session lost and opens a new one (its simulated expiry), the server
// keeps the old session, and the node, alive until its own timeout: Enter
// does not count that node as its own (Curator does, and its member
// silently drops out of the count when the server ends the old session).
// It deletes the node and makes a fresh one on the new session, under the
// same retry policy. A member inside the barrier whose session expires is
// simply no longer counted: Leave treats its node as already deleted, and
// deletes it if the server still lists it. Code that relies on the group
// staying together should watch the client's connection states itself.
package doublebarrier
