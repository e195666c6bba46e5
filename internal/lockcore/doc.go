// Package lockcore is the one lock algorithm that go-curator's mutex,
// read/write lock and semaphore share: Curator's LockInternals and its
// drivers, as a struct configured by a node name and a policy function.
//
// To acquire, a contender:
//  1. creates <path>/_c_<uuid>-<name><seq>, EPHEMERAL_SEQUENTIAL, protected,
//     with container parents;
//  2. reads the children, and the parent's stat with them;
//  3. sorts them by the sequence suffix after the last of the core's names;
//  4. asks the policy whether it holds the lock, or which one node to watch;
//  5. watches that node with a data watch (GetW: a vanished node leaves no
//     watch behind) and waits for it, for the loss of its session, or for
//     ctx; then goes back to 2.
//
// No waiter watches the parent's children, so a release wakes exactly one
// waiter. On cancel, timeout or error the contender deletes its node with
// a detached, bounded context, so a cancelled wait leaves nothing behind.
//
// # The session is the owner
//
// A contender takes the client's current session (framework.Session)
// before it creates its node, and the node belongs to that session. A
// children read, or a delete event, grants the lock only if that session
// is still valid once the answer is in: the client then answered on that
// session, so the node it lists is ours. Presence in a children list is
// not ownership: after the client declares a session lost (its simulated
// expiry, or a new session go-zookeeper opened), the server keeps the old
// session and its nodes alive until its own timeout, and a waiter that
// re-reads on the new session still finds its old node, perhaps first.
// Curator trusts it, and holds the lock until the server deletes the node
// and grants it to another client: two holders. Here such a node is never
// trusted: it is deleted (detached, bounded and guaranteed, as after a
// cancel), and, as when the node vanished with an expired session, the
// client's retry policy decides whether to start again with a fresh node
// on the new session, or to fail with ErrSessionLost (ErrNodeVanished for
// a vanished node).
//
// A Hold keeps its session: its Lost channel closes when the session is
// lost, whatever the error policy; its lazy fencing token read refuses once
// the session is lost; and a downgrade (AcquireAt) is refused unless the
// owning hold's session is still the current one.
//
// # Hand-offs without a read
//
// Step 2 is the cost of a hand-off: the woken waiter reads every name in
// the queue (with ten thousand waiters, a reply of half a megabyte per
// hand-off), and the lock is idle for that round trip. Curator reads every
// time. Two things spare the read, and neither changes the wire layout:
// Java and Go contenders share a queue as before.
//
//   - When the node a waiter watches is the only thing between it and the
//     lock in the list it read (heldWithout), its delete grants the lock.
//   - Otherwise, in a long queue (its last read listed 64 nodes or more),
//     the waiter looks at the client's children view of the path
//     (framework.ChildrenView): a copy kept by one persistent recursive
//     watch per client and path, applied in the order the server
//     sent the events, before the event that woke the waiter is delivered.
//     The view is the children as the server had them at one point after
//     our node was made (it lists it) and no earlier than that event; the
//     policy's answer on it is one a read at that point would give. No node
//     can join ahead of ours later, so a grant stays true while our node
//     and its session live. The view is used only while it is in step: on
//     the connection it was read on, with every create counted (a created
//     child whose sequence number is not the count of children made under
//     the parent means the server did not send an event, as it does not
//     for nodes the client may not read), and only by single-name cores
//     (a read lock downgrade adds a node ahead of queued contenders). If the
//     node the view says to watch is gone, the next decision reads.
//
// Why not a direct grant (the releasing holder deletes its node and marks
// its successor's in one multi, and the successor holds without a read)?
// The successor would have to tell the mark from any other write to its
// node, Curator's revocation request among them; ZooKeeper 3.8 sends watch
// events without the zxid of their transaction (the server writes -1), so
// it cannot see that the write came in one transaction with its
// predecessor's delete without reading its node: the one round trip a
// grant would save. The holder cannot learn its successor's name without
// reading the children either (names carry a random UUID). The view saves
// the read where it costs most, in a long queue, and needs nothing from the
// holder, so a Java Curator holder hands off to Go waiters the same way.
//
// In a short queue the read is cheap, and the view's events (one per
// client with a view, for every node made or deleted) would cost the
// server more than they save.
//
// The session rule below holds for both: the grant counts only if the
// contender's session is still valid after the view was consulted. Java
// Curator's waiters ignore the view's watch: they read as always.
//
// AcquireAt is the one exception to the queue: it creates a plain
// EPHEMERAL node named with the sequence of a hold the caller already has
// on the path, and holds it at once while that hold's node is still there
// (the read/write lock's downgrade, Curator 5.5's CURATOR-621).
//
// Reentrant adds the per-goroutine bookkeeping of Curator's
// InterProcessMutex on top of a Core: a map from goroutine to hold, so a
// nested Acquire costs no I/O and returns the same hold with its count
// raised. The hold itself is a value: any goroutine may watch it, read its
// token and release it (one acquire per release). The mutex and both sides
// of the read/write lock are Reentrants, configured by their node name,
// policy and Errors: the recipe's own sentinels and message prefix, since
// the recipe's users cannot import this package.
package lockcore
