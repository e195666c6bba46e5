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
// waiter. If the contender's own node vanished (its session expired), the
// client's retry policy decides whether to start again with a fresh node.
// On cancel, timeout or error the contender deletes its node with a
// detached, bounded context, so a cancelled wait leaves nothing behind.
//
// AcquireAt is the one exception to the queue: it creates a plain
// EPHEMERAL node named with the sequence of a hold the caller already has
// on the path, and holds it at once while that hold's node is still there
// (the read/write lock's downgrade, Curator 5.5's CURATOR-621).
//
// Reentrant adds the per-goroutine bookkeeping of Curator's
// InterProcessMutex on top of a Core: a map from goroutine to hold and
// count, so a nested Acquire costs no I/O, and Release from a goroutine
// that holds nothing is ErrNotOwner. The mutex and both sides of the
// read/write lock are Reentrants.
package lockcore
