// Package interop drives Apache Curator (Java) from Go tests, so that the
// integration tests can check that go-curator and Curator processes share
// ZooKeeper paths and respect each other's nodes.
//
// A Helper is one Java process running java/CuratorHelper.java: one
// CuratorFramework, so one ZooKeeper session, with recipe objects cached per
// path; StartCache and StartLeader run java/CacheHelper.java and
// java/LeaderHelper.java the same way. The Go side sends one command per
// line and reads one reply line ("OK ..." or "ERR ..."); lines starting with
// "EVENT " are listener notices, collected apart from the replies (see the
// Java sources for the commands; java/LineProtocol.java is the loop they
// share).
//
// Each helper is compiled with javac once per test binary, into a directory
// under os.TempDir() named by the hash of its source and classpath, so later
// runs reuse it. It needs java, javac and Curator's jars (Debian's
// libcurator-recipes-java: Curator 5.4 with ZooKeeper 3.8) in
// /usr/share/java, or in the directory named by CURATOR_JAVA_DIR. Without
// them, Start fails the test when ZK_TEST_REQUIRE=1 and skips it otherwise.
//
// A Helper runs one command at a time; commands that block (an acquire with
// a timeout, a barrier wait) block that helper only, so a test that wants
// two Java contenders starts two helpers. t.Cleanup closes the Curator
// client (releasing its session's ephemeral nodes) and ends the process.
package interop
