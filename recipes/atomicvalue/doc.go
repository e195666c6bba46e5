// Package atomicvalue holds distributed values that change by
// compare-and-set: Curator's DistributedAtomicValue (raw bytes, [Value])
// and DistributedAtomicInteger (an int32, [Integer]). Curator's
// DistributedAtomicLong is recipes/atomiclong, and its CachedAtomicLong is
// atomiclong.Cached.
//
// # Use
//
//	policy, _ := retry.NewNTimes(10, 0)
//	v, err := atomicvalue.New(client, "/config/leader-epoch", policy)
//	if err != nil { ... }
//	res, err := v.CompareAndSet(ctx, old, []byte("epoch-7"))
//	if err != nil { ... }
//	if !res.Succeeded { ... } // the value was not old, or another writer won
//
//	n, err := atomicvalue.NewInteger(client, "/shop/visits", policy)
//	res, err := n.Increment(ctx)
//
// # Algorithm
//
// Both types run the algorithm of recipes/atomiclong, on the same code: a
// change reads the node, computes the new value, and writes it at the
// version read (or creates a missing node); a lost race is tried again,
// first optimistically, then in the queue of a promoted lock (Curator's
// PromotedToLock, an InterProcessMutex), by default at the value's path
// plus "-lock". See the atomiclong package doc for the turns the writers
// take, [WithPromotedLock] and [WithoutPromotedLock], and what the retry
// policy bounds. Always check Result.Succeeded: only Get and ForceSet
// always succeed.
//
// CompareAndSet makes one try and fails on a missing node: Initialize
// creates it. A Value compares bytes (nil and empty data are equal); an
// Integer compares numbers, so a node without data matches 0 (Curator
// compares the encoded bytes, where it does not). ForceSet writes without
// a version. Integer arithmetic wraps around, as Java's int does.
//
// # ZooKeeper layout
//
// The value is the data of the PERSISTENT node at the value's path, whose
// parents are created as CONTAINER nodes, exactly as Curator writes it, so
// Java and Go processes can share a value:
//
//   - a Value's data is the bytes themselves; a missing node reads as nil
//     (Curator's null), a node without data as no bytes;
//   - an Integer's data is 4 bytes, a big-endian two's-complement int32; a
//     missing node or one without data reads as 0, and data of any other
//     length is an error wrapping [ErrCorrupt] that names the node
//     (Curator reads the first 4 bytes of longer data; 8 bytes are usually
//     a DistributedAtomicLong at the wrong path).
//
// The promoted lock is a mutex at its own path, with Curator's layout
// (_c_<uuid>-lock-<seq> EPHEMERAL_SEQUENTIAL children of a CONTAINER
// node); share its path with Java processes that use PromotedToLock on the
// same value. A value made WithoutPromotedLock writes nothing but its node.
//
// # Lost replies
//
// A write can reach the server and be applied while its reply is lost with
// the connection. Such a write ends the operation with an error matching
// [ErrIndeterminate] (framework.ErrIndeterminate): the change happened
// once or not at all, and nothing tries it again. The Result tells what
// the write was: PreValue, and the PostValue it may have stored. Read and
// decide; never repeat an increment blindly. A nil error with Succeeded
// true means the change was applied exactly once; Succeeded false without
// an error means it was not applied at all.
//
// # Connection states
//
// Every operation runs in the client's retry loop, so a short connection
// loss only delays it. Values hold no state between operations, so
// Suspended and Lost need nothing from the caller. An operation cancelled
// while it waits in the promoted lock's queue deletes its node and returns
// the ctx's error, having written nothing.
package atomicvalue
