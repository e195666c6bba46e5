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
//     watch behind; an exclusive core also watches the node's grant, see
//     below) and waits for it, for the loss of its session, or for ctx;
//     then goes back to 2.
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
// # Hand-offs without a read: the grant
//
// Step 2 is the cost of a standard hand-off: the holder's delete, the
// notification, and the woken waiter's read of every name in the queue
// (with ten thousand waiters, half a megabyte), while the lock is idle.
// Curator reads every time. An exclusive core (NewExclusive: one node
// name, one holder; the mutex and the leader selector) hands the lock
// over with one write instead, and keeps Curator's queue, so Java and Go
// contenders share it as before.
//
//   - Grants live outside the lock's directory, so Curator's children sort
//     and count are untouched: one persistent node, GrantsDir
//     (/go-curator-grants), under the client's namespace, holds an
//     EPHEMERAL node per release, named after the releasing node:
//     <grants>/_c_<uuid>-lock-<seq>. Node names carry a per-create UUID, so
//     grant names never repeat, across all locks. One directory rather
//     than one beside each lock: a user who lists a lock's parent (to find
//     the lock names under /locks, say) sees no extra names, the directory
//     needs one ACL decision (the client's ACL provider, for its path), and
//     it is PERSISTENT, so the server's container reaper never deletes it
//     under a release (a container emptied by the cleanup below would go
//     every minute, and each release after that would fail and create it
//     again). A release that finds it missing creates it and tries again.
//   - A release is one multi: create <grants>/<me>, delete <lock>/<me>,
//     delete the grants left by the client's earlier releases (see
//     cleanup). If its reply is lost, the retry meets its own first attempt
//     (NodeExists on the grant): the release falls back to the plain
//     guaranteed delete, which finds our node gone, and the grant is
//     remembered for deletion. Any other failure falls back to the plain
//     delete too (a missing grant only costs the successor a read), so a
//     release that happened is never reported failed, and our node never
//     stays.
//   - A hold that the lock was granted by a read listing no node after its
//     own releases with Curator's plain delete (plus the cleanup below, in
//     a multi, if there is any): every contender that queued later read
//     after it, found it the lowest, and so, if it named it as its
//     immediate predecessor, found it the only node ahead, and holds on its
//     delete anyway (below). The uncontended lock costs Curator's three
//     requests, and leaves no grant.
//   - A waiter whose latest read named P as its immediate predecessor sets
//     GetW(<lock>/P), whose stat names P's owner (the session that created
//     P), then ExistsW(<grants>/P), then a data watch on its own node, all
//     three into one channel, and looks at no event before the last reply. The grant existing, or a later NodeCreated on
//     it, is a candidate: it counts only if P's owner made it, which the
//     exists reply's stat shows, and after a NodeCreated a read of the grant
//     (which also gives the fencing token, the grant's czxid); that read is
//     skipped when the lock's ACL lets anyone delete its nodes (see
//     premise 2). (The watches are not set from several goroutines:
//     they are set up while the waiter waits for the ones ahead of it, off
//     the hand-off's path, and a goroutine per wait costs ten thousand
//     waiters 4 MB: the runtime keeps every goroutine it ever ran at once.)
//     P's NodeDeleted with no grant seen means P gave up or died: the waiter
//     reads again (Curator's path), unless P was the only node ahead in its
//     last read, which then grants the lock as well.
//   - A waiter granted without a read of the children (by a grant, or by
//     the delete of the only node ahead) holds only while its own node is
//     there, owned by its session. Its own node's watch is set before it
//     looks at any event, so a delete of its node before P's grant or delete
//     is in the channel first, or its watch's read finds no node: a grant or
//     delete seen with no event of its own node before it is seen while its
//     node is there (the waiter whose
//     predecessor's delete comes on the plain path, without the grant's
//     watches, reads its node instead). A waiter whose node is gone holds
//     nothing, and Acquire queues again with a fresh node as the retry
//     policy allows (or fails with ErrNodeVanished).
//
// So a hand-off costs one write (the release multi) and its notification,
// whatever the length of the queue, plus one small read of the grant where
// the lock's ACL keeps others from deleting its nodes; Curator's costs the
// delete, its notification and a read of every name in the queue. A waiter
// costs the server three watches (its own node, P, P's grant).
//
// # What a grant proves, and its premises
//
// Nothing but the lock's own queue makes a holder. The argument rests on
// these premises, each checked, none assumed:
//
//  1. A hold exists only while its own node does. A waiter granted by a
//     read finds its node in the list; one granted by a grant or a delete
//     has its own node's watch ahead of the event that grants it (or reads
//     its node). (Another session can delete the node of a
//     holder: an operator clearing a "stuck" lock revokes it by force. The
//     next contender then holds with a larger token, and only a resource
//     that checks fencing tokens refuses the old holder's writes.)
//  2. A grant counts only when the predecessor's own session wrote it.
//     ZooKeeper records the owner of every ephemeral node, and the waiter
//     compares the grant's owner with the one P's stat gave. Whoever can
//     create in the grants directory (by default, anyone: a client with
//     READ on a lock and no other right) can make a node of that name, but
//     it grants nothing: read access to a lock gives no power over it, as
//     with Curator. Such a node also makes P's release multi fail on its
//     create; the release then deletes P plainly, and the waiter reads.
//     One exception, for speed: where the lock path's ACL gives
//     world:anyone DELETE (ZooKeeper's open ACL, the default), anyone who
//     could forge a grant could as well delete the holder's node, which
//     hands the lock to the next waiter by itself (a forced revocation,
//     which only fencing tokens fence), so a forged grant gives no power
//     anyone lacks; there the NodeCreated counts without the grant's read,
//     and the token is read when first asked for. The ACL is read once per
//     ACL version of the lock path (every children read gives the version).
//  3. Only a release multi, which deletes P, creates a grant P's session
//     owns; it commits only while P exists.
//  4. The session rule (above): every read or event that grants counts only
//     while the contender's session is still valid.
//
// Why a grant is safe, given those. A release multi commits only while
// the releaser's node exists (it deletes it), and a core releases with a
// grant only the node of a hold, which is the lowest node: by induction
// every committed release is by the lowest node, since a waiter holds
// either by a read that lists it first, or by its immediate predecessor's
// grant, and then stays the lowest until it is deleted (no node can join
// ahead: sequence numbers only grow while the queue's nodes keep the
// parent alive). So a grant P's session made means P was the lowest node
// and is gone, and nothing lies between P and a waiter that read P as its
// immediate predecessor and whose own node is still there: that waiter is
// the lowest. Two waiters name the same P only if a node between them
// vanished after the first one's read; the first is then the one whose
// node vanished (premise 1 stops it), or, if its node is there, the
// second's read listed it between P and the second, which then named it,
// not P. Every hold's token is unique to it: a grant's czxid is one
// release's zxid, and one waiter at most is P's successor. A missing grant
// never grants anything (it only triggers a read), so lost events after a
// reconnect, a grant deleted before its waiter looked, and a Java holder's
// plain delete change speed, never safety. Multi-name cores (the
// read/write lock) neither grant nor watch grants: a downgrade (AcquireAt)
// puts a node ahead of queued waiters, so "nothing lies between P and me"
// would not hold, and a grant would be a wasted create. The model in
// model_test.go explores every interleaving of these steps for small
// queues, with foreign deletes and forged grants, and finds the two
// holders of issue 30 when either check is removed.
//
// Events are trusted as follows. go-zookeeper delivers watch events from
// one goroutine, in the order the server sent them, and the client fires
// the one-shot watches from its event callback, in that order; a multi's
// events come in the order of its operations. Both watches deliver into
// one channel (framework's Into): if P released by grant after both were
// set, the grant's NodeCreated is in that channel before P's NodeDeleted;
// if P released between the two requests, the exists reply shows the
// grant. A NodeCreated that the grant's read does not confirm (another
// session's node, or one gone before the read: a transient create, see
// watches, below) decides nothing: P's own event does.
//
// The session rule holds for grants: the loss signal is taken before the
// children read that named P (as for a grant by a read), and a grant, its
// event or its exists reply, counts only while the contender's session
// (taken before its create) is still valid when it is handled.
//
// The fencing token still grows with every grant of the path. A hold
// granted by a grant takes the grant's czxid, from the read that confirmed
// it: the release multi's zxid, and so the lock path's pzxid at the
// hand-off. A hold granted by the delete of the only node ahead, or by a
// grant whose owner was not read, reads it when first asked: the grant's
// czxid while it exists, else the lock path's pzxid while our node is
// listed. Every
// token of a holder is at least the zxid at which it got the lock (its
// read's pzxid, or its predecessor's release) and below its own release's
// zxid, which is at most the next holder's: zxids grow across leader
// changes (the epoch) and across a re-created parent.
//
// Cleanup. Each release multi also deletes the grants the client's earlier
// releases made (on any path; one that is gone already is dropped and the
// multi sent again), so a client leaves at most one grant, plus one per
// release in flight, however many paths it locks; grants are ephemeral,
// so a closed session leaves none. Deleting a grant is always safe. A
// client that stops locking keeps its last grant until its session ends:
// deleting it on an idle timer would need a goroutine or timer that the
// client's Close joins, which this package cannot hook into, for one
// node per client.
//
// The grants directory is one empty PERSISTENT node per namespace, made
// by the first release that needs it and never deleted by this package, so
// it keeps the namespace's root node alive (the server reaps no container
// with a child). That is its whole cost to an operator: one node, and its
// ephemeral grants, each gone with its session. Deleting it when no
// go-curator client uses the namespace is safe; a release re-creates it.
// Its ACL is the client's ACL provider's for its path; a directory made by
// another identity whose ACL refuses our creates turns grants off for our
// client (logged once), which then hands over as Curator does.
//
// Grants follow the client's namespace: a contender whose client has
// another namespace (or chroot) than the holder's, on the same server
// path, does not see the holder's grant and reads, as behind a Java
// holder.
//
// Watches. go-zookeeper cannot remove a watch, and an exists watch on a
// grant that is never created stays on the server until the session ends.
// A waiter's data watch on P fires when P goes, however it goes. Its exists
// watch on P's grant fires if P releases by grant; if P goes without one,
// or the waiter gives up, the waiter fires it itself with a transient
// create and delete of the grant, added to its next write: its give-up
// multi (beside the delete of its own node, while it is still the one
// waiter that can be watching that grant) or its release multi. So no
// cancelled acquire leaves a watch behind; an exists watch stays only when
// the write carrying its clearing fails and falls back to a plain delete
// (rare, and it costs one watch until the session ends), and the watches
// of a session the client declared lost go with that session. Clearing
// needs the right to create in the grants directory, so a client first
// shows it has that right (one transient create and delete per client,
// by the first waiter) before any of its waiters sets an exists watch on a
// grant; without it, its waiters watch only P's node.
//
// Java Curator: a Java holder releases without a grant, so its Go successor
// reads (or holds on the delete, if it was next); a Java waiter behind a
// Go holder sees the delete, as always, and ignores the grants directory.
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
