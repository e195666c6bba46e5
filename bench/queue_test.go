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

// TestQueueSmoke runs the queue case small against a real ZooKeeper:
// every throughput row takes items without an error, one put wakes at
// most a few of go-curator's 16 idle consumers where it wakes every one
// of Curator's, and both drain the whole big queue. Without Java Curator
// or Kazoo the rest runs alone, unless ZK_TEST_REQUIRE=1.
func TestQueueSmoke(t *testing.T) {
	cluster := zktest.Start(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var log bytes.Buffer
	qc := queueDefaults(true, 200*time.Millisecond, 0, 500)
	qc.dur, qc.noWarmup, qc.herdItems = 500*time.Millisecond, true, 10
	res, err := runQueueCase(t.Context(), cluster.ConnectString(), qc, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var table bytes.Buffer
	res.writeTable(&table)
	t.Logf("%s\n%s", log.String(), table.String())
	if len(res.notes) > 0 && os.Getenv("ZK_TEST_REQUIRE") == "1" {
		t.Errorf("peers missing, and ZK_TEST_REQUIRE=1: %s", strings.Join(res.notes, "; "))
	}
	for _, r := range res.tput {
		if r.Ops == 0 || r.Errors > 0 {
			t.Errorf("%s: %d items taken in the window, %d errors (first: %s)", r.Impl, r.Ops, r.Errors, r.FirstError)
		}
	}
	for _, h := range res.herd {
		per := float64(h.notifications) / float64(h.items)
		switch {
		case h.impl == implGo && per > 4:
			t.Errorf("go-curator: %.1f watch notifications per put with %d idle consumers, want at most 4", per, herdConsumers)
		case h.impl == implCurator && per < herdConsumers:
			t.Errorf("Curator: %.1f watch notifications per put, want every idle consumer's (%d): the herd measure is broken", per, herdConsumers)
		}
	}
	if len(res.big) == 0 {
		t.Error("no big-queue row")
	}
	for _, d := range res.big {
		if d.taken != d.items || d.first <= 0 || d.last <= 0 {
			t.Errorf("%s drained %d of %d (first tenth %v, last tenth %v)", d.impl, d.taken, d.items, d.first, d.last)
		}
	}
}
