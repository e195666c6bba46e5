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

// TestCacheSmoke runs the cache case on a small tree against a real
// ZooKeeper: every cache loads the whole tree, the caches with data
// receive update events, and Curator's CuratorCache holds one data watch
// (its persistent recursive watch). Without
// Java Curator the Go half runs alone, unless ZK_TEST_REQUIRE=1.
func TestCacheSmoke(t *testing.T) {
	cluster := zktest.Start(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var log bytes.Buffer
	cfg := cacheConfig{nodes: 300, big: 500, cycles: 5, window: 500 * time.Millisecond, curator: true}
	res, err := runCacheCase(t.Context(), cluster.ConnectString(), cfg, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if res.Curator == nil {
		if os.Getenv("ZK_TEST_REQUIRE") == "1" {
			t.Errorf("Curator was not measured, and ZK_TEST_REQUIRE=1:\n%s", log.String())
		}
	} else {
		for _, j := range []*cacheFigures{res.Curator, res.CuratorNoData} {
			if j.Nodes != 300 || j.DataWatches != 1 {
				t.Errorf("Curator: %s", j.describe())
			}
		}
		if res.Curator.Events == 0 {
			t.Errorf("Curator: %d events", res.Curator.Events)
		}
	}
	for _, g := range []*cacheFigures{res.Go, res.GoNoData} {
		if g.Nodes != 300 || g.Watches <= 0 {
			t.Errorf("go-curator: %s", g.describe())
		}
	}
	if g := res.Go; g.Events == 0 || g.Events > g.Writes {
		t.Errorf("go-curator: %d events for %d writes", g.Events, g.Writes)
	}
	if res.Big == nil || res.Big.Nodes != 500 {
		t.Errorf("the big data-less tree: %+v", res.Big)
	}
	var table bytes.Buffer
	res.writeTable(&table)
	writeTargets(&table, "Targets", res.targets())
	t.Logf("%s\n%s", log.String(), table.String())
	for _, want := range []string{"| initial load (s) |", "| data-less: heap per cached node (B) |", "server watches after 5 open/close cycles", "< 100 B per node"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("no %q in the table:\n%s", want, table.String())
		}
	}
}
