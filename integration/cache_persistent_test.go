package integration

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// The caches on ZooKeeper 3.8 stand on one persistent watch each (issue
// 31 item 4): these tests count the server's watches with wchc, and check
// that nothing is lost across a server's death, an expiry, a lock queue
// inside the cached tree and a one-shot watch on the cache's own root
// (ZOOKEEPER-4466).

// cpWatched returns the distinct paths the server (the only one of cl)
// watches for session id.
func cpWatched(t testing.TB, cl *zktest.Cluster, id int64) []string {
	t.Helper()
	paths := dbWatchesOf(t, cl, id)
	slices.Sort(paths)
	return slices.Compact(paths)
}

// cpTree creates root with a small tree under it: two parents of three
// children each.
func cpTree(t *testing.T, c *framework.Client, root string) {
	t.Helper()
	mustCreate(t, c, root, "root")
	for _, p := range []string{"a", "b"} {
		for _, k := range []string{"x", "y", "z"} {
			mustCreate(t, c, root+"/"+p+"/"+k, p+k)
		}
	}
}

// A Tree, a Node and a Children cache each hold one server watch, on
// their own path, and none once closed.
func TestCachePersistent_OneServerWatchPerCache(t *testing.T) {
	cacheNoLeaks(t)
	cl := zktest.Shared(t)
	writer := newClient(t)
	root := cachePath(t, writer)
	cpTree(t, writer, root)
	type closer interface {
		Start(context.Context) error
		Close() error
	}
	for _, tc := range []struct {
		name string
		path string
		make func(c *framework.Client) (closer, error)
	}{
		{"tree", root, func(c *framework.Client) (closer, error) { return cache.NewTree(c, root) }},
		{"tree depth 1", root, func(c *framework.Client) (closer, error) { return cache.NewTree(c, root, cache.WithMaxDepth(1)) }},
		{"node", root + "/a", func(c *framework.Client) (closer, error) { return cache.NewNode(c, root+"/a") }},
		{"children", root + "/b", func(c *framework.Client) (closer, error) { return cache.NewChildren(c, root+"/b") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t)
			x, err := tc.make(c)
			if err != nil {
				t.Fatal(err)
			}
			if err := x.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := cpWatched(t, cl, c.SessionID()); !slices.Equal(got, []string{tc.path}) {
				x.Close()
				t.Fatalf("server watches of the cache's session: %v, want [%s]", got, tc.path)
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			if got := cpWatched(t, cl, c.SessionID()); len(got) != 0 {
				t.Fatalf("server watches after Close: %v, want none", got)
			}
		})
	}
}

// 1,000 Trees opened, loaded and closed one after the other on one client
// leave no server watch.
func TestCachePersistent_OpenCloseCyclesLeaveNoWatch(t *testing.T) {
	cacheNoLeaks(t)
	cl := zktest.Shared(t)
	c := newClient(t)
	root := cachePath(t, c)
	cpTree(t, c, root)
	for i := range 1000 {
		tr, err := cache.NewTree(c, root)
		if err != nil {
			t.Fatal(err)
		}
		err = tr.Start(t.Context())
		es, _ := tr.Entries()
		tr.Close()
		if err != nil {
			t.Fatalf("cycle %d: Start: %v", i, err)
		}
		if len(es) != 9 {
			t.Fatalf("cycle %d: %d entries, want 9", i, len(es))
		}
	}
	if got := cpWatched(t, cl, c.SessionID()); len(got) != 0 {
		t.Fatalf("server watches after 1000 cycles: %v, want none", got)
	}
}

// cpConverge waits for the Tree's view, and its listener's, to equal the
// server's tree, then checks the listener's model for order problems.
func cpConverge(t *testing.T, writer *framework.Client, root string, tr *cache.Tree, m *eventModel) {
	t.Helper()
	var diff string
	deadline := time.Now().Add(30 * time.Second)
	for {
		server, err := serverTree(t.Context(), writer, root, -1)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := tr.Entries()
		if err != nil {
			t.Fatal(err)
		}
		if diff = sameTree(server, entries); diff == "" {
			if diff = sameTree(server, m.entries()); diff != "" {
				diff = "listener's view: " + diff
			}
		}
		if diff == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cache differs from the server: %s", diff)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if errs := m.problems(); len(errs) > 0 {
		t.Fatalf("%d event order problems: %v", len(errs), errors.Join(errs[:min(len(errs), 5)]...))
	}
}

// cpWrites runs randomWrites for a while around fault, which runs once
// writes have begun.
func cpWrites(t *testing.T, writer *framework.Client, root string, fault func()) int {
	t.Helper()
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var writes int
	wg.Go(func() { writes = randomWrites(ctx, t, writer, root, chaosSeed()) })
	time.Sleep(time.Second)
	fault()
	time.Sleep(3 * time.Second)
	stop()
	wg.Wait()
	return writes
}

// Killing the server a Tree's client is connected to, in a 3-node
// ensemble under writes: the client resumes its session on another server,
// the cache's watch is set there again and its view resynced, and it ends
// equal to the server's with every event in order.
func TestCachePersistent_ServerKilledUnderWrites(t *testing.T) {
	cacheNoLeaks(t)
	cl := zktest.StartEnsemble(t)
	writer := startClient(t, builder(t, cl.ConnectString()))
	c := startClient(t, builder(t, cl.ConnectString()).SessionTimeout(10*time.Second))
	root := testPath(t)
	mustCreate(t, writer, root, "")
	m := newEventModel(root)
	tr, err := cache.NewTree(c, root)
	if err != nil {
		t.Fatal(err)
	}
	tr.AddListener(m.listen)
	t.Cleanup(func() { tr.Close() })
	if err := tr.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	session := c.SessionID()
	writes := cpWrites(t, writer, root, func() {
		addr := c.ZooKeeper().Server()
		for _, s := range cl.Servers() {
			if s.Addr() == addr {
				if err := s.Kill(); err != nil {
					t.Error(err)
				}
				return
			}
		}
		t.Errorf("connected to %s, not a server of %v", addr, cl)
	})
	if err := c.BlockUntilConnected(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c.SessionID() != session {
		t.Fatalf("the session changed (%x to %x): this test wants a reconnect", session, c.SessionID())
	}
	cpConverge(t, writer, root, tr, m)
	n, _ := m.events()
	t.Logf("%d writes, %d events", writes, n)
}

// An expiry under writes: the cache's watch is set on the new session,
// the view resynced (Resynced), and it ends equal to the server's.
func TestCachePersistent_ExpiryUnderWrites(t *testing.T) {
	cacheNoLeaks(t)
	cl := zktest.Shared(t)
	writer := newClient(t)
	root := cachePath(t, writer)
	mustCreate(t, writer, root, "")
	c := newClient(t)
	m := newEventModel(root)
	tr, err := cache.NewTree(c, root)
	if err != nil {
		t.Fatal(err)
	}
	tr.AddListener(m.listen)
	t.Cleanup(func() { tr.Close() })
	if err := tr.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	old := c.SessionID()
	cpWrites(t, writer, root, func() { expire(t, c) })
	cpConverge(t, writer, root, tr, m)
	eventually(t, cacheWait, func() bool { _, r := m.events(); return r > 0 }, "Resynced after the expiry")
	if c.SessionID() == old {
		t.Fatal("the session did not change")
	}
	if got := cpWatched(t, cl, c.SessionID()); !slices.Equal(got, []string{root}) {
		t.Fatalf("server watches of the new session: %v, want [%s]", got, root)
	}
}

// ZOOKEEPER-4466 on 3.8: a mutex queue inside a cached tree, and a
// one-shot watch on the cache's own root, on the cache's client. The
// queue hands off, the one-shot fires, and the cache keeps every change
// after that.
func TestCachePersistent_LockQueueAndOneShotOnRoot(t *testing.T) {
	cacheNoLeaks(t)
	cl := zktest.Shared(t)
	c := newClient(t)
	other := newClient(t)
	root := cachePath(t, c)
	mustCreate(t, c, root+"/locks", "")
	r := newRecorder(false)
	tr := startTree(t, c, root, r)
	r.expectSet(t, "NODE_ADDED "+root, "NODE_ADDED "+root+"/locks")
	r.expect(t, cache.Initialized, "")
	_, _, once, err := c.GetData().ForPathW(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	if got := cpWatched(t, cl, c.SessionID()); !slices.Equal(got, []string{root}) {
		t.Fatalf("server watches with the one-shot set: %v, want [%s]", got, root)
	}

	m1, err := mutex.New(c, root+"/locks")
	if err != nil {
		t.Fatal(err)
	}
	m2, err := mutex.New(c, root+"/locks")
	if err != nil {
		t.Fatal(err)
	}
	h1, err := m1.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got2 := make(chan *mutex.Hold, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		h, err := m2.Acquire(t.Context())
		if err != nil {
			t.Error(err)
		}
		got2 <- h
	})
	// The queue's two nodes enter the view.
	var lockNodes []string
	for len(lockNodes) < 2 {
		ev := r.take(t)
		if ev.Type != cache.NodeAdded {
			t.Fatalf("event %s %s, want the queue's nodes added", ev.Type, ev.Entry.Path)
		}
		lockNodes = append(lockNodes, ev.Entry.Path)
	}

	if _, err := other.SetData().ForPath(t.Context(), root, []byte("1")); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-once:
		if ev.Type != zk.EventNodeDataChanged || ev.Path != root {
			t.Fatalf("one-shot event %v, want NodeDataChanged on %s", ev, root)
		}
	case <-time.After(cacheWait):
		t.Fatal("the one-shot watch on the root did not fire")
	}
	r.expect(t, cache.NodeUpdated, root, "1")

	if err := h1.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	var h2 *mutex.Hold
	select {
	case h2 = <-got2:
	case <-time.After(cacheWait):
		t.Fatal("the waiter did not get the mutex")
	}
	wg.Wait()
	if h2 == nil {
		t.FailNow()
	}
	r.expect(t, cache.NodeRemoved, lockNodes[0])
	if err := h2.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.expect(t, cache.NodeRemoved, lockNodes[1])

	// After all that, the cache still hears of changes on its root and
	// below.
	mustSet(t, other, root, "2")
	r.expect(t, cache.NodeUpdated, root, "2")
	mustCreate(t, other, root+"/after", "x")
	r.expect(t, cache.NodeAdded, root+"/after", "x")
	if got := cpWatched(t, cl, c.SessionID()); !slices.Equal(got, []string{root}) {
		t.Fatalf("server watches at the end: %v, want [%s]", got, root)
	}
	server, err := serverTree(t.Context(), other, root, -1)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := tr.Entries()
	if diff := sameTree(server, entries); diff != "" {
		t.Fatalf("the cache differs from the server: %s", diff)
	}
}

// Java Curator's CuratorCache and a Go Tree on the same tree, on a server
// of their own: under writes, an expiry of the Go cache's session and a
// restart of the server, both end with the server's nodes, versions and
// data.
func TestCachePersistent_JavaAndGoAgreeAfterExpiryAndRestart(t *testing.T) {
	cacheNoLeaks(t)
	cl := zktest.Start(t)
	writer := startClient(t, builder(t, cl.ConnectString()))
	c := startClient(t, builder(t, cl.ConnectString()))
	root := testPath(t)
	cpTree(t, writer, root)
	j := interop.StartCache(t, cl.ConnectString())
	m := newEventModel(root)
	tr, err := cache.NewTree(c, root)
	if err != nil {
		t.Fatal(err)
	}
	tr.AddListener(m.listen)
	t.Cleanup(func() { tr.Close() })
	if err := tr.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Call(javaCtx(t, 30*time.Second), "cc.start", root); err != nil {
		t.Fatalf("Curator cc.start: %v", err)
	}
	cpWrites(t, writer, root, func() {
		if err := zktest.ExpireSession(t.Context(), cl.ConnectString(), c.ZooKeeper()); err != nil {
			t.Errorf("expire: %v", err)
		}
	})
	srv := cl.Servers()[0]
	cpWrites(t, writer, root, func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
		if err := srv.Start(); err != nil {
			t.Error(err)
		}
	})
	cpConverge(t, writer, root, tr, m)
	eventually(t, 30*time.Second, func() bool {
		gt, _ := tr.Entries()
		return sameAsJava(gt, javaCache(t, j, "cc.dump", root)) == ""
	}, "the Go and Java caches hold the same nodes")
}
