// Package sharedcount is a value shared by every client that watches one
// ZooKeeper node: Curator's SharedCount (an int32) and SharedValue (raw
// bytes).
//
// # Use
//
//	c, err := sharedcount.New(client, "/shop/max-workers", 10)
//	if err != nil { ... }
//	if err := c.Start(ctx); err != nil { ... }
//	defer c.Close()
//	remove := c.AddListener(sharedcount.Listener[int32]{
//		Changed: func(v sharedcount.VersionedValue[int32]) { resize(v.Value) },
//	})
//	defer remove()
//	for {
//		prev := c.VersionedValue()
//		ok, err := c.TrySetCount(ctx, prev, prev.Value+1)
//		if errors.Is(err, sharedcount.ErrIndeterminate) { ... } // may have happened: read, decide
//		if err != nil || ok { ... }
//	}
//
// Start creates the node with the seed if it is missing (the first writer
// wins; a node that exists keeps its value), reads it and watches it. Count
// and VersionedValue return the cached value at once, without I/O. A single
// goroutine, started by Start and joined by Close, re-reads the node and
// sets a new watch after every watch event (including the end of the
// session that held the watch) and after every Reconnected, so the cache
// follows the node. A read never replaces a newer cached value: values are
// ordered by the zxid of their last change (Mzxid), so a deleted and
// re-created node, whose version starts again at 0, is still seen.
//
// TrySetCount is a compare-and-set on the node's version. It returns false,
// without an error, when another writer got there first, after a random
// wait of up to two round trips that spreads out the writers that lost the
// same race, and once the cache holds the winner's value (from the watch,
// or from a read of its own), so the next VersionedValue is the one to try
// again with. A prev older than the cached value fails without a round
// trip.
//
// # Lost replies: a change is never applied twice
//
// A write can reach the server and be applied while its reply is lost
// with the connection. The client's retry then meets its own first write
// as a BadVersion, which a compare-and-set loop would read as a lost race:
// the caller would read the new value and apply its change on top, twice
// in all. Here TrySetCount never returns false for such a write: it
// returns an error matching ErrIndeterminate (which is
// framework.ErrIndeterminate). The rule for callers: an indeterminate
// change may or may not have happened; read and decide, never repeat it
// blindly. Match ErrIndeterminate before any other error, since it also
// wraps the last error seen (zk.ErrBadVersion, a connection loss). False
// without an error always means the write was not applied, and true that
// it was applied once. SetCount and SetValue write absolute values, so an
// indeterminate one is safe to repeat.
//
// # ZooKeeper layout
//
// The recipe uses the node at its path and nothing else: a PERSISTENT node
// whose parents are created as CONTAINER nodes. A count is stored as 4 bytes,
// a big-endian two's-complement int32, exactly as Curator writes it, so Java
// and Go processes can share one count. Data of any other length is
// corrupt: Start, and any read that meets it, returns an error wrapping
// ErrCorrupt that names the node. A Value stores its bytes as they are.
//
// # Connection states
//
// Listeners receive every connection state as well as every value change.
// On Suspended the cache may be stale: do not act on it as if it were
// current until Reconnected, after which the value is re-read. On Lost the
// session ended (the client reports it nine tenths of the negotiated
// session timeout after the latest answered request, before the server
// can have expired it: the framework package's "When Lost comes"); the node is persistent, so it survives, and the recipe
// re-reads it and watches it again once a new session is connected. The
// recipe never gives up on its own; Close it when done.
//
// # Listeners
//
// Each listener runs on its own goroutine and receives its events in order
// from an unbounded queue: a slow listener delays only itself, never the
// client or the other listeners, and never loses an event; its queue grows
// while it is slow. Removing a listener stops delivery; a call already
// running finishes. Close waits for running calls, so a listener must not
// call Close.
package sharedcount
