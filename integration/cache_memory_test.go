package integration

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
)

// heapAfterGC returns the live heap once garbage is collected.
func heapAfterGC() int64 {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestCacheTree_ClosedCacheIsFreed opens and closes a 651-node Tree many
// times on one client: the client's memory stays flat. A closed cache
// leaves nothing of its own behind (its view, its nodes, the lasting
// watch's state), and the ZooKeeper watches it set, which stay on the
// server until they fire, are shared by the next cache instead of being
// set again, so go-zookeeper's table of watches does not grow either.
// The heap after 32 cycles must be within a quarter of one open cache's
// footprint of the heap after 4.
func TestCacheTree_ClosedCacheIsFreed(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p, "")
	for i := range 25 {
		kid := fmt.Sprintf("%s/k%02d", p, i)
		tx := c.Transaction().Create(kid, []byte("some data of a node"), framework.Persistent)
		for j := range 25 {
			tx = tx.Create(fmt.Sprintf("%s/g%02d", kid, j), []byte("some data of a node"), framework.Persistent)
		}
		if _, err := tx.Commit(t.Context()); err != nil {
			t.Fatalf("create %s: %v", kid, err)
		}
	}
	cycle := func() {
		t.Helper()
		tr, err := cache.NewTree(c, p)
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Start(t.Context()); err != nil {
			t.Fatalf("Start: %v", err)
		}
		if es, err := tr.Entries(); err != nil || len(es) != 651 {
			t.Fatalf("Entries: %d entries, %v; want 651", len(es), err)
		}
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
	}

	before := heapAfterGC()
	open, err := cache.NewTree(c, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := open.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	footprint := heapAfterGC() - before
	open.Close()
	runtime.KeepAlive(open)

	for range 4 {
		cycle()
	}
	at4 := heapAfterGC()
	for range 28 {
		cycle()
	}
	at32 := heapAfterGC()
	t.Logf("one open cache: %d KB; kept for the paths' watches after the first close: %d KB; "+
		"heap after 4 cycles %d KB, after 32 cycles %d KB: %+.1f KB per closed cache",
		footprint>>10, (at4-before)>>10, at4>>10, at32>>10, float64(at32-at4)/28/1024)
	if footprint <= 0 {
		t.Fatalf("an open cache measured %d bytes", footprint)
	}
	if at32-at4 > footprint/4 {
		t.Errorf("the heap grew by %d KB over 28 closed caches (%d KB each); one open cache holds %d KB",
			(at32-at4)>>10, (at32-at4)/28>>10, footprint>>10)
	}
}

// TestCacheTree_SharedWatchesFollowTheServer: caches of one client on the
// same paths share the ZooKeeper watches the client holds there, those of
// a closed cache included (its reads set none where one is held). A cache
// opened after another closed, and one left open while another closes,
// still see every change.
func TestCacheTree_SharedWatchesFollowTheServer(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/a/x", "one")
	first := startTree(t, c, p, nil)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	r2, r3 := newRecorder(false), newRecorder(false)
	second := startTree(t, c, p, r2) // on the first cache's watches
	startTree(t, c, p, r3)
	for _, r := range []*recorder{r2, r3} {
		r.expect(t, cache.NodeAdded, p)
		r.expect(t, cache.NodeAdded, p+"/a")
		r.expect(t, cache.NodeAdded, p+"/a/x", "one")
		r.expect(t, cache.Initialized, "")
	}
	mustSet(t, c, p+"/a/x", "two")
	for _, r := range []*recorder{r2, r3} {
		r.expect(t, cache.NodeUpdated, p+"/a/x", "two")
	}
	mustCreate(t, c, p+"/a/y", "new")
	for _, r := range []*recorder{r2, r3} {
		r.expect(t, cache.NodeAdded, p+"/a/y", "new")
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	mustSet(t, c, p+"/a", "three")
	r3.expect(t, cache.NodeUpdated, p+"/a", "three")
	mustDelete(t, c, p+"/a/x")
	r3.expect(t, cache.NodeRemoved, p+"/a/x")
	mustCreate(t, c, p+"/b", "")
	r3.expect(t, cache.NodeAdded, p+"/b")
	r3.quiet(t)
	r2.quiet(t)
}
