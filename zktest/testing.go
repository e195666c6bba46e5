package zktest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"
)

// setupTimeout bounds how long a test waits for its servers.
const setupTimeout = 2 * time.Minute

// Start returns one standalone server for the calling test, from the first
// source that works (see the package doc). t.Cleanup closes it. Without a
// source, the test skips, or fails when ZK_TEST_REQUIRE=1.
func Start(t testing.TB) *Cluster {
	t.Helper()
	return startFor(t, 1)
}

// StartEnsemble returns a 3-node ensemble on loopback, from the local
// ZooKeeper install, for the calling test. t.Cleanup closes it. Without a
// local install, the test skips, or fails when ZK_TEST_REQUIRE=1.
func StartEnsemble(t testing.TB) *Cluster {
	t.Helper()
	return startFor(t, 3)
}

// StartWith returns one standalone server from the local ZooKeeper install,
// with cfg in its zoo.cfg, for the calling test. t.Cleanup closes it. An
// invalid cfg fails the test; without a local install, the test skips, or
// fails when ZK_TEST_REQUIRE=1. Neither ZK_TEST_CONNECT nor Docker is used:
// the harness can configure only servers it runs itself.
func StartWith(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	return startWithFor(t, 1, cfg)
}

// StartEnsembleWith is [StartEnsemble] with cfg in every server's zoo.cfg.
// An invalid cfg fails the test.
func StartEnsembleWith(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	return startWithFor(t, 3, cfg)
}

func startFor(t testing.TB, n int) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	c, err := StartAny(ctx, n)
	return closeAtCleanup(t, c, err)
}

func startWithFor(t testing.TB, n int, cfg Config) *Cluster {
	t.Helper()
	if _, err := cfg.zooCfg(); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.clientPort(n); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	c, err := StartLocalWith(ctx, n, cfg)
	return closeAtCleanup(t, c, err)
}

// closeAtCleanup returns c, which t.Cleanup closes, or ends the test when
// it could not be started.
func closeAtCleanup(t testing.TB, c *Cluster, err error) *Cluster {
	t.Helper()
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("zktest: close %v: %v", c, err)
		}
	})
	return c
}

var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

// Shared returns one standalone server shared by every test of the test
// binary; it starts on first use. Tests that share it must use distinct
// paths. Call Main from TestMain to close it; otherwise it lives until the
// process exits (on Linux the server is killed then).
func Shared(t testing.TB) *Cluster {
	t.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		shared.c, shared.err = StartAny(ctx, 1)
	})
	if shared.err != nil {
		unavailable(t, shared.err)
	}
	return shared.c
}

// Main runs the tests of m, closes the shared server, and exits with the
// tests' status. Use it as the body of TestMain:
//
//	func TestMain(m *testing.M) { zktest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if shared.c != nil {
		if err := shared.c.Close(); err != nil {
			os.Stderr.WriteString("zktest: close shared server: " + err.Error() + "\n")
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// ServerWaitFunction names the function whose goroutines wait for running
// local servers, such as the one behind Shared: one per server, for as long
// as it runs. A leak check ignores them; with goleak:
//
//	goleak.VerifyNone(t, goleak.IgnoreAnyFunction(zktest.ServerWaitFunction))
//
// zktest's own code does not import goleak, so that a test that uses zktest
// adds none of goleak's requirements to the user's module graph.
const ServerWaitFunction = "github.com/go-curator/curator/zktest.wait"

// unavailable ends the test because no ZooKeeper could be started: it fails
// when ZK_TEST_REQUIRE=1, and skips otherwise. err says why and what to do.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("ZK_TEST_REQUIRE") == "1" {
		t.Fatalf("zktest: cannot start ZooKeeper for this test (it fails, as ZK_TEST_REQUIRE=1): %v", err)
	}
	t.Skipf("zktest: cannot start ZooKeeper for this test, so it is skipped (set ZK_TEST_REQUIRE=1 to fail instead): %v", err)
}
