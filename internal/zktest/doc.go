// Package zktest starts real ZooKeeper servers for tests, benchmarks and demos.
//
// A [Cluster] is one standalone server or a 3-node ensemble. Tests get one with
// [Start], [StartEnsemble] or [Shared], or with [StartWith] and
// [StartEnsembleWith] for servers with a [Config]; programs without a
// *testing.T use [StartLocal], [StartLocalWith] or [StartAny]. The servers
// come from, in this order:
//
//  1. ZK_TEST_CONNECT, if set: an external server (standalone only). Such a
//     Cluster has no [Server] values, so it offers no fault control.
//  2. A testcontainers-go container running zookeeper:3.9, when a Docker engine
//     answers within two seconds (standalone only; set ZK_TEST_DOCKER=0 to skip).
//  3. A local server from an installed ZooKeeper: `java -cp` over the jars in
//     /usr/share/java (or ZK_TEST_JARS), as Debian's zookeeper package installs
//     them, on free loopback ports in a temporary directory.
//
// Ensembles and servers with a Config need the local install. When no source
// works, tests fail if ZK_TEST_REQUIRE=1 and skip otherwise.
//
// Local servers run with tickTime=500 and maxSessionTimeout=60000, so session
// timeouts from 1 s to 60 s are granted as asked; a Config moves these bounds,
// so that a server grants another timeout than the one asked for. They also
// run with znode.container.checkIntervalMs=500, so empty container nodes are
// reaped within about a second. Each server runs in its own process group,
// which [Cluster.Close] kills; on Linux the JVM also gets SIGKILL if the Go
// process dies first.
//
// Faults: [Server.Stop], [Server.Kill] and [Server.Start] stop and restart one
// server on the same ports and data; [ExpireSession] expires a client's
// session on the server; a [Proxy] sits between a client and a server and adds
// latency, pauses traffic, resets connections or refuses new ones. The proxy
// follows ZooKeeper's framing, so it can also lose the reply to a request the
// server applied ([Proxy.LoseNextReply], [Proxy.SetReplyLoss]) and hold
// replies while requests still flow ([Proxy.HoldReplies]).
//
// A server's log is kept in its directory and its tail is included in any
// start error. [Server.FourLetter] sends four-letter words such as "srvr",
// "wchc" or "mntr".
package zktest
