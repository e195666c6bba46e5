package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/zktest"
	"go.uber.org/goleak"
)

// TestCacheSmoke runs the cache bench on a small tree against a real
// ZooKeeper: both caches load the whole tree and receive update events.
// Without Java Curator the Go half runs alone, unless ZK_TEST_REQUIRE=1.
func TestCacheSmoke(t *testing.T) {
	cluster := zktest.Start(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var log bytes.Buffer
	g, j, err := runCacheBench(t.Context(), cluster.ConnectString(), 300, 500*time.Millisecond, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if j == nil {
		if os.Getenv("ZK_TEST_REQUIRE") == "1" {
			t.Errorf("Curator was not measured, and ZK_TEST_REQUIRE=1:\n%s", log.String())
		}
	} else if j.Nodes != 300 || j.Events == 0 {
		t.Errorf("Curator: %d nodes, %d events", j.Nodes, j.Events)
	}
	if g.Nodes != 300 || g.Events == 0 || g.Events > g.Writes {
		t.Errorf("go-curator: %d nodes, %d events for %d writes", g.Nodes, g.Events, g.Writes)
	}
	var table bytes.Buffer
	writeCacheTable(&table, 300, g, j)
	if !strings.Contains(table.String(), "| initial load (s) |") {
		t.Errorf("table:\n%s", table.String())
	}
}
