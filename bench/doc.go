// Command bench measures go-curator against its peers, side by side in one
// run on one ZooKeeper server, and prints a markdown table with each
// figure's ratio to Apache Curator's from the same run. Absolute figures
// drift on a shared machine; ratios measured minutes apart on the same
// server hold.
//
//	go run ./bench                       # starts a local ZooKeeper (Debian's zookeeper package)
//	go run ./bench -zk 127.0.0.1:2181    # or uses this one
//	go run ./bench -smoke                # about a second per case, 200 waiters
//	go run ./bench -d 10s -out bench.md  # longer windows, and a copy of the table
//	go run ./bench -cases 'contended ×16' -impls 'go-curator' -cpuprofile cpu.out
//	go run ./bench -ensemble             # a 3-node ZooKeeper ensemble (and 3 etcd members) on loopback
//	go run ./bench -svg chart.svg        # the chart somewhere else (default: bench/results/latest.svg)
//
// # Implementations
//
//   - go-curator: this module's recipes.
//   - Curator 5.4 (Java): java/CuratorBench.java, compiled with javac into a
//     temporary directory against Debian's jars in /usr/share/java
//     (libcurator-recipes-java) and run as one JVM for all cases.
//   - Kazoo 2.8 (Python): kazoo/kazoo_bench.py, run with Debian's
//     /usr/bin/python3 (python3-kazoo).
//   - go-zookeeper zk.Lock: go-zookeeper's own lock.
//   - raw go-zookeeper: the floor, the standard lock algorithm written with
//     nothing but go-zookeeper calls and go-curator's node names and data:
//     create EPHEMERAL_SEQUENTIAL, getChildren, delete (and getData with a
//     watch on the predecessor when contended).
//   - raw round trip (exists): one exists per operation, the cost of a
//     single round trip.
//   - etcd concurrency.Mutex [etcd server]: a reference, not a target: the
//     lock a Go team would pick without ZooKeeper (go.etcd.io/etcd/client/v3
//     concurrency.Mutex, one client and one 15 s session lease per worker),
//     on an etcd server of the version the bench's go.mod requires,
//     embedded from go.etcd.io/etcd/server/v3/embed and run as a child
//     process of the bench (this binary again, etcdMemberEnv set) with a
//     temporary data directory, on loopback. etcd fsyncs its log on every
//     commit, as ZooKeeper does with its default forceSync=yes, which the
//     bench keeps. It runs the mutex cases only; its ratios compare two
//     servers, not two libraries.
//
// # Topology
//
// By default one standalone ZooKeeper and one etcd member. With -ensemble,
// a 3-node ZooKeeper ensemble and a 3-member etcd cluster, all on
// loopback, so that every write goes through a quorum on both; clients
// connect to any member. The table's first line says which. mntr and wchs
// figures are then summed over the ZooKeeper servers.
//
// # Chart
//
// Unless -svg is "-" (or -smoke without -svg), the run also writes an SVG
// chart (plain SVG, laid out so that no text is cut in any font): each
// implementation's ops/s over Curator's per case, and the acquire-latency
// CDFs of the most contended mutex case.
//
// Peers run every client of a case in their one process, one thread each,
// and count overlapping holders there; the Go implementations run in this
// process. Every client is its own ZooKeeper session, with a 15 s session
// timeout and exponential backoff from 100 ms with 10 retries.
//
// # Cases
//
// Each case warms up (-warm, 1 s), then measures for -d (5 s). An
// operation counts when it ends inside the measured window.
//
//   - mutex uncontended: one client acquires and releases in a loop; the
//     latency is the whole cycle.
//   - mutex contended ×1, ×4, ×16: that many clients on one lock path; the
//     latency is the acquire's. Each holder enters and leaves a shared
//     witness; a holder that finds another inside is an overlap.
//   - semaphore 2 leases ×16: InterProcessSemaphoreV2 (Kazoo's Semaphore)
//     with 2 leases; acquire and return a lease; more than 2 holders is an
//     overlap.
//   - atomiclong increment ×4, ×16: DistributedAtomicLong (Kazoo's
//     Counter) increments with the client's retry policy and each
//     library's defaults (go-curator's Long queues its losers on its
//     promoted lock; Curator's has no promotion); ops/s counts successful
//     increments, and the final value must equal the successes of the
//     whole run. The notes give each client's successful increments per
//     round (min, mean, max) and the slowest call, successful or not, that
//     ended in or after the window: a starved client shows there, not in
//     the throughput or the p99.
//   - sharedcount TrySetCount ×16: each client loops on
//     TrySetCount(VersionedValue(), value+1); ops/s counts successful sets.
//   - scale: 10,000 goroutines (200 with -smoke) queue on one go-curator
//     Mutex through one client behind a holder. It reports heap bytes,
//     stack bytes and goroutines per waiter (runtime.ReadMemStats and
//     NumGoroutine before and after), the server's watches while they wait
//     (wchs), the watch notifications per release while the queue drains
//     (the sums of mntr's *_watch_count), and whether they acquired in FIFO
//     order.
//   - cache (also alone: go run ./bench cache -nodes 20000): a tree of
//     20,000 nodes (-cache-nodes; 300 with -smoke) cached whole by
//     go-curator's cache.Tree and by Curator 5.4's CuratorCache
//     (java/CacheBench.java), each with its data and without it
//     (cache.WithoutData, CuratorCacheStorage.dataNotCached), each on a
//     client of its own: initial load, heap per cached node (Go's HeapAlloc
//     and the JVM's used heap, after a GC, before and after), the server
//     watches the cache holds (mntr's zk_watch_count, and wchs's data
//     watches) and those left once it is closed, update events per second
//     under 8 writers; then the watches left after -cache-cycles (1,000)
//     open/close cycles of a 10-node tree on one client, and the heap per
//     node of a data-less Tree of -cache-big (100,000) nodes.
//
// The table ends with the targets of issue 9 and of the later issues
// named (25, 31), met or missed in this run.
package main
