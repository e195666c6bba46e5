// Package zktest runs real ZooKeeper servers for tests: a standalone server
// or a 3-node ensemble on loopback, with tools to stop, kill and restart a
// server, expire a client's session, and put a faulty network between a
// client and a server. It plays the part of Apache Curator's curator-test
// (TestingServer, TestingCluster, KillSession) for Go tests.
//
// # A server for a test
//
// [Start] gives the calling test a standalone server, closed by t.Cleanup;
// [Cluster.ConnectString] is what a client connects to:
//
//	func TestWorkers(t *testing.T) {
//		cluster := zktest.Start(t)
//		policy, err := retry.NewExponentialBackoff(100*time.Millisecond, 3)
//		if err != nil {
//			t.Fatal(err)
//		}
//		client, err := framework.NewClient(cluster.ConnectString(), policy)
//		if err != nil {
//			t.Fatal(err)
//		}
//		if err := client.Start(t.Context()); err != nil {
//			t.Fatal(err)
//		}
//		defer client.Close()
//		if _, err := client.Create().CreatingParentsIfNeeded().ForPath(t.Context(), "/workers/w1", nil); err != nil {
//			t.Fatal(err)
//		}
//	}
//
// [StartEnsemble] gives a 3-node ensemble; [StartWith] and
// [StartEnsembleWith] take a [Config] that sets the servers' tick time,
// session timeout bounds, or any other zoo.cfg line (such as
// extendedTypesEnabled=true for TTL nodes), and [TLS] on a second client
// port, with certificates from [NewCA]. [Shared] gives one
// server to every test of the binary, which [Main] closes from TestMain:
//
//	func TestMain(m *testing.M) { zktest.Main(m) }
//
// [StartReconfigurable] (or Config.Reconfig) gives servers whose ensemble
// dynamic reconfiguration can change, with [SuperUser] allowed to; and
// [Cluster.AddServer] starts a server that a reconfiguration can then add,
// by its [Server.Spec].
//
// Programs without a *testing.T (demos, benchmarks) use [StartLocal],
// [StartLocalWith] or [StartAny] and Close the [Cluster] themselves; the
// zkserver command in cmd/zkserver runs one from the shell.
//
// # What a test needs installed
//
// A standalone server comes from the first of these that works:
//
//  1. ZK_TEST_CONNECT=host:port: a server that runs already. The tests get
//     its address and no control over it: a Cluster from ZK_TEST_CONNECT
//     has no [Server] values, and its fault tools return [ErrNoControl].
//  2. A container, when the test binary links a [ContainerRuntime] in and
//     it can run one: the zktest/docker module, a module of its own so
//     that only the tests that want Docker add testcontainers-go to their
//     module graph, runs a zookeeper:3.9 container when a Docker engine
//     answers within two seconds. A test opts in with a blank import:
//     import _ "github.com/go-curator/curator/zktest/docker".
//     ZK_TEST_DOCKER=0 turns containers off.
//  3. A local ZooKeeper install: the jars of Debian's zookeeper package in
//     /usr/share/java (apt-get install zookeeper), or every jar in
//     ZK_TEST_JARS, the lib/ directory of a ZooKeeper release; and Java,
//     $JAVA_HOME/bin/java or java on PATH. Each server is a JVM on free
//     loopback ports, with its data in a temporary directory.
//
// Ensembles and servers with a Config always come from the local install.
//
// zktest's code imports only go-zookeeper and the standard library (its own
// tests use goleak), and it needs the same Go as the library.
//
// When no source works, the test is skipped, and the skip message says what
// each source lacked and what to do: "apt-get install zookeeper", "set
// JAVA_HOME", which port another process holds. With ZK_TEST_REQUIRE=1 the
// test fails with that message instead; set it in CI, where a missing
// ZooKeeper must not pass as a run of skipped tests. An invalid Config
// always fails the test. StartLocal and StartLocalWith return such errors,
// within the ctx they are given.
//
// # No server outlives its test
//
// [Cluster.Close], which t.Cleanup calls, kills every server's process group,
// reaps the process, and removes the temporary directory; so does a start
// that fails. [Server.PID] names a running server's process. On Linux a
// server is also killed when the test binary dies (a panic, a -timeout);
// the next run removes the directories that such a binary left behind.
//
// # Servers and their timing
//
// Local servers run with tickTime=500 and maxSessionTimeout=60000, so session
// timeouts from 1 s to 60 s are granted as asked; a Config moves these bounds,
// so that a server grants another timeout than the one asked for. They also
// run with znode.container.checkIntervalMs=500, so empty container nodes are
// reaped within about a second.
//
// # Faults
//
//   - [Server.Stop], [Server.Kill] and [Server.Start] stop a server (SIGTERM
//     or SIGKILL) and start it again on the same ports and data;
//     [Cluster.Leader] and [Cluster.WaitLeader] find an ensemble's leader.
//   - [Server.Pause] and [Server.Resume] freeze a local server and let it go
//     on (SIGSTOP, SIGCONT), as a long GC pause or a stopped VM does; with
//     [Config.SyncLimit] a test sets how long a follower keeps serving
//     without its leader, and [Server.QuorumAddr] is where a leader takes
//     its followers' links.
//   - [ExpireSession] expires a client's session on the server, as
//     curator-test's KillSession does: with this module's framework,
//     zktest.ExpireSession(ctx, cluster.ConnectString(), client.ZooKeeper()).
//   - A [Proxy] sits between a client and a server: connect the client to
//     [Proxy.Addr]. It adds latency ([Proxy.SetLatency]), pauses traffic
//     ([Proxy.Pause], [Proxy.Resume]), resets connections ([Proxy.Reset]) or
//     refuses new ones ([Proxy.Refuse]). It follows ZooKeeper's framing, so it
//     can also lose the reply to a request the server applied
//     ([Proxy.LoseNextReply], [Proxy.SetReplyLoss]) and hold replies while
//     requests still flow ([Proxy.HoldReplies], [Proxy.ReleaseReplies]).
//   - [Server.FourLetter] sends four-letter words such as "srvr", "wchc" or
//     "mntr"; [Server.Mode] reads the server's mode.
//
// # Environment
//
//	ZK_TEST_CONNECT  host:port of a server to use instead of starting one
//	ZK_TEST_DOCKER   0 or false: do not use containers (zktest/docker)
//	ZK_TEST_JARS     directory of ZooKeeper's jars (default: Debian's, /usr/share/java)
//	JAVA_HOME        Java for the local servers (default: java on PATH)
//	ZK_TEST_REQUIRE  1: fail, instead of skip, the tests that get no server
//	ZK_TEST_VERBOSE  set: let testcontainers log (zktest/docker)
//
// A local server's log is kept in its directory while it runs, and its tail
// ends any error about its start.
package zktest
