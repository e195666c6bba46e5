// Package atomiclong is a distributed int64 counter: Curator's
// DistributedAtomicLong.
//
// # Use
//
//	policy, _ := retry.NewNTimes(50, 0)
//	counter, err := atomiclong.New(client, "/shop/orders", policy,
//		atomiclong.WithPromotedLock("/shop/orders-lock", time.Second, policy))
//	if err != nil { ... }
//	res, err := counter.Increment(ctx)
//	if err != nil { ... }
//	if !res.Succeeded { ... } // every try lost: try again or give up
//	fmt.Println(res.PreValue, "->", res.PostValue)
//
// # Algorithm
//
// Every change is Curator's: read the node, compute the new value, and
// write it at the version read (or create the node if it was missing). A
// write that loses to another writer is tried again while the policy
// allows. If every optimistic try lost and a promoted lock is configured,
// the operation takes that lock (an InterProcessMutex, recipes/mutex),
// waiting at most its maxWait, and tries again under it with the lock's
// policy. Always check Result.Succeeded: only Get and ForceSet always
// succeed.
//
// The policies decide how many tries are made (RetryNTimes' count, or
// RetryUntilElapsed's time). The sleep between tries is this package's,
// not the policy's: a lost race means the counter moved on, so a fixed
// 100 ms sleep, as Curator's policies give, only adds latency. It is a
// uniform random sleep over a window that starts at the duration of one
// try (about two round trips), doubles with each lost race, and is at
// least one try long per writer seen winning in between, up to 128 tries
// or one second. Under contention this keeps the tail latency near the
// time the contenders need to take their turns.
//
// CompareAndSet makes one try, and fails on a missing node: Initialize
// creates it. ForceSet writes without a version. Arithmetic wraps around,
// as it does in Java.
//
// # ZooKeeper layout
//
// The value is the data of the PERSISTENT node at the counter's path,
// whose parents are created as CONTAINER nodes: 8 bytes, a big-endian
// two's-complement int64, exactly as Curator writes it, so Java and Go
// processes can share a counter. A missing node or empty data reads as 0;
// data of any other length is an error wrapping ErrCorrupt that names the
// node. The promoted lock is a mutex at its own path, with Curator's
// layout: _c_<uuid>-lock-<seq> EPHEMERAL_SEQUENTIAL children.
//
// # Connection states
//
// Every operation runs in the client's retry loop, so a short connection
// loss only delays it. An operation that returns an error may or may not
// have written: after a connection loss, read the value before repeating
// an increment. A Long holds no state between operations, so Suspended and
// Lost need nothing from the caller.
package atomiclong
