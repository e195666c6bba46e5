package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/zktest"
	"go.uber.org/goleak"
)

// TestSmoke runs the bench's smoke mode end to end against a real
// ZooKeeper: every case with every ZooKeeper implementation that exists (the
// etcd reference peer is TestSmokeEtcdChart's), the scale
// case, and the table. A missing peer (javac and Curator's jars, or
// python3-kazoo) fails the test when ZK_TEST_REQUIRE=1; otherwise the
// smoke runs without it and says so.
func TestSmoke(t *testing.T) {
	cluster := zktest.Start(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// Every implementation but the etcd reference peer, which
	// TestSmokeEtcdChart covers: the package's tests stay short.
	var zkImpls []string
	for _, name := range implOrder {
		if name != implEtcd {
			zkImpls = append(zkImpls, regexp.QuoteMeta(name))
		}
	}
	cfg, err := newConfig(cluster.ConnectString(), 0, 0, true, 0, 0, "", "^("+strings.Join(zkImpls, "|")+")$")
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	cfg.log = &progress
	cfg.drain = 5 * time.Minute // drain all of them
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	rep, err := run(ctx, cfg)
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, progress.String())
	}
	for name, why := range rep.missing {
		if os.Getenv("ZK_TEST_REQUIRE") == "1" {
			t.Errorf("%s is missing, and ZK_TEST_REQUIRE=1: %s", name, why)
		} else {
			t.Logf("ran without %s: %s", name, why)
		}
	}

	ran := map[string]int{}
	for _, r := range rep.results {
		if r.Skipped != "" {
			if _, peerMissing := rep.missing[r.Impl]; !peerMissing && r.Impl != implGo {
				t.Errorf("%s / %s did not run: %s", r.Case, r.Impl, r.Skipped)
			}
			continue
		}
		ran[r.Case]++
		if r.Ops == 0 {
			t.Errorf("%s / %s completed no operation (errors %d: %s)", r.Case, r.Impl, r.Errors, r.FirstError)
		}
		if r.Errors > 0 {
			t.Errorf("%s / %s: %d errors, first: %s", r.Case, r.Impl, r.Errors, r.FirstError)
		}
		if r.Overlaps > 0 {
			t.Errorf("%s / %s: %d overlapping holders (max %d at once)", r.Case, r.Impl, r.Overlaps, r.MaxHolders)
		}
		if r.Final != nil && *r.Final != r.TotalOK {
			t.Errorf("%s / %s: final value %d, but %d successful increments", r.Case, r.Impl, *r.Final, r.TotalOK)
		}
	}
	for _, c := range allCases() {
		if ran[c.name] == 0 {
			t.Errorf("case %q: no implementation ran", c.name)
		}
	}

	s := rep.scale
	if s == nil {
		t.Fatalf("scale case: %v", rep.scaleErr)
	}
	if s.Handoffs != s.Waiters {
		t.Errorf("scale: %d of %d waiters acquired", s.Handoffs, s.Waiters)
	}
	if !s.FIFO || s.Errors > 0 {
		t.Errorf("scale: %d waiters acquired out of FIFO order, %d errors (first: %s)", s.OutOfOrd, s.Errors, s.FirstErr)
	}
	// No herd: a release notifies only the woken waiter, through its two
	// watches (lockcore's grant: an exists watch on its predecessor's
	// grant, fired by the release's create, and a data watch on the
	// predecessor's node, fired by its delete): at most two notifications
	// per release (the holder's release and the container's removal
	// included), however many wait, two watches per waiter while they
	// wait, and none left after the drain.
	if s.Notifications < int64(s.Handoffs) || s.Notifications > 2*int64(s.Handoffs+2) {
		t.Errorf("scale: %d watch notifications for %d hand-offs, want one or two each (the grant's and the predecessor's)", s.Notifications, s.Handoffs)
	}
	if s.WatchesHeld < int64(s.Waiters) || s.WatchesHeld > 2*int64(s.Waiters)+1 || s.WatchesAfter > 1 {
		t.Errorf("scale: %d watches for %d waiters (want one or two each), %d left after they drained (want at most one)", s.WatchesHeld, s.Waiters, s.WatchesAfter)
	}

	var table bytes.Buffer
	rep.writeTable(&table)
	for _, c := range allCases() {
		if !strings.Contains(table.String(), "| "+c.name+" |") {
			t.Errorf("table has no row for %q:\n%s", c.name, table.String())
		}
	}
	t.Logf("\n%s", table.String())
}

// BenchmarkMutexUncontended measures one go-curator Mutex Acquire and
// Release with no other contender: one create, one getChildren, one delete.
func BenchmarkMutexUncontended(b *testing.B) {
	cluster := zktest.Shared(b)
	ctx := b.Context()
	c, err := newCurator(ctx, cluster.ConnectString())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	m, err := mutex.New(c, "/bench-go/mutex-uncontended")
	if err != nil {
		b.Fatal(err)
	}
	warmServer(b, cluster.ConnectString())
	for b.Loop() {
		h, err := m.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawFloor measures the same cycle with go-zookeeper alone: the
// floor that BenchmarkMutexUncontended is compared with.
func BenchmarkRawFloor(b *testing.B) {
	cluster := zktest.Shared(b)
	ctx := b.Context()
	conn, err := newConn(ctx, cluster.ConnectString())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	l := rawLock{conn: conn, path: "/bench-go/raw-floor", data: localData()}
	if err := ensurePath(conn, l.path); err != nil {
		b.Fatal(err)
	}
	warmServer(b, cluster.ConnectString())
	for b.Loop() {
		node, err := l.acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := conn.Delete(node, -1); err != nil {
			b.Fatal(err)
		}
	}
}

// warmServer runs the raw lock cycle for a second before a benchmark is
// timed, so that whichever benchmark runs first on a fresh server does not
// pay for the server's JIT.
func warmServer(b *testing.B, connect string) {
	b.Helper()
	s := spec{kind: kindUncontended, clients: 1, connect: connect,
		w: window{dur: time.Second}, path: "/bench-go/server-warmup"}
	if _, err := rawRunner(false)(b.Context(), s); err != nil {
		b.Fatal(err)
	}
}
