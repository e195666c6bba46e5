package mutex

import "github.com/go-curator/curator/internal/lockcore"

// LockName is the name part of a contender's node: the one that
// [SortNodes] cuts a mutex's children at, Curator's InterProcessMutex's.
const LockName = "lock-"

// SortNodes sorts the names of a lock's child nodes in place into queue
// order, the order in which they hold the lock: by the part of each name
// after the last occurrence of any of lockNames (the server's sequence
// suffix), as Curator's StandardLockInternalsDriver.fixForSorting and
// LockInternals.getSortedChildren do. It serves every lock recipe that
// shares Curator's layout: LockName for a mutex, a semaphorev2 lock or a
// leaderselector election; "__READ__" and "__WRIT__" together for an rwlock;
// "lease-" for a semaphorev2's leases. A name that contains none of
// lockNames sorts by the whole name, so with no lockNames SortNodes sorts
// by name; names with equal keys keep their order.
//
// Children read with a client's GetChildren are in no order; the first
// after SortNodes(children, LockName) holds a mutex.
func SortNodes(nodes []string, lockNames ...string) {
	lockcore.Sort(nodes, lockNames...)
}
