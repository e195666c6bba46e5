package integration

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/zktest"
)

// Ports of Curator's NodeCache, PathChildrenCache, TreeCache and
// CuratorCache tests that apply (TestNodeCache, TestPathChildrenCache,
// TestTreeCache, TestCuratorCache).

func startNode(t *testing.T, c *framework.Client, p string, r *recorder) *cache.Node {
	t.Helper()
	n, err := cache.NewNode(c, p)
	if err != nil {
		t.Fatal(err)
	}
	if r != nil {
		n.AddListener(r.listen)
	}
	t.Cleanup(func() { n.Close() })
	if err := n.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return n
}

func startChildren(t *testing.T, c *framework.Client, p string, r *recorder) *cache.Children {
	t.Helper()
	ch, err := cache.NewChildren(c, p)
	if err != nil {
		t.Fatal(err)
	}
	if r != nil {
		ch.AddListener(r.listen)
	}
	t.Cleanup(func() { ch.Close() })
	if err := ch.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return ch
}

// expire expires c's session on the shared server.
func expire(t *testing.T, c *framework.Client) {
	t.Helper()
	if err := zktest.ExpireSession(t.Context(), fwShared(t), c.ZooKeeper()); err != nil {
		t.Fatalf("expire: %v", err)
	}
}

// untilResynced takes events up to Resynced and returns them as "TYPE
// path".
func untilResynced(t *testing.T, r *recorder) []string {
	t.Helper()
	var got []string
	for {
		ev := r.take(t)
		got = append(got, ev.Type.String()+" "+ev.Entry.Path)
		if ev.Type == cache.Resynced {
			return got
		}
	}
}

// TestNodeCache.testBasics
func TestCacheNode_Basics(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p, "")
	r := newRecorder(false)
	n := startNode(t, c, p+"/node", r)
	r.expect(t, cache.Initialized, "")
	if _, err := n.Current(); !errors.Is(err, cache.ErrNoNode) {
		t.Errorf("Current of a missing node: %v", err)
	}
	mustCreate(t, c, p+"/node", "a")
	r.expect(t, cache.NodeAdded, p+"/node", "a")
	mustSet(t, c, p+"/node", "b")
	r.expect(t, cache.NodeUpdated, p+"/node", "b")
	if e, err := n.Current(); err != nil || string(e.Data) != "b" {
		t.Errorf("Current = %q, %v", e.Data, err)
	}
	mustDelete(t, c, p+"/node")
	r.expect(t, cache.NodeRemoved, p+"/node", "b")
	if _, err := n.Current(); !errors.Is(err, cache.ErrNoNode) {
		t.Errorf("Current after delete: %v", err)
	}
}

// TestNodeCache.testDeleteThenCreate
func TestCacheNode_DeleteThenCreate(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/foo", "one")
	r := newRecorder(false)
	n := startNode(t, c, p+"/foo", r)
	r.expect(t, cache.NodeAdded, p+"/foo", "one")
	r.expect(t, cache.Initialized, "")
	mustDelete(t, c, p+"/foo")
	r.expect(t, cache.NodeRemoved, p+"/foo")
	mustCreate(t, c, p+"/foo", "two")
	r.expect(t, cache.NodeAdded, p+"/foo", "two")
	if e, err := n.Current(); err != nil || string(e.Data) != "two" {
		t.Errorf("Current = %q, %v", e.Data, err)
	}
}

// TestNodeCache.testKilledSession: the view survives a session expiry and
// follows changes made after it.
func TestCacheNode_KilledSession(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/node", "start")
	r := newRecorder(true)
	n := startNode(t, c, p+"/node", r)
	r.expect(t, cache.NodeAdded, p+"/node", "start")
	r.expect(t, cache.Initialized, "")
	expire(t, c)
	got := untilResynced(t, r)
	if slices.ContainsFunc(got, func(s string) bool { return s[:5] == "NODE_" }) {
		t.Errorf("node events in a resync that changed nothing: %q", got)
	}
	if !slices.Contains(got, "CONNECTION_LOST ") || !slices.Contains(got, "CONNECTION_RECONNECTED ") {
		t.Errorf("resync without Lost and Reconnected: %q", got)
	}
	if e, err := n.Current(); err != nil || string(e.Data) != "start" {
		t.Errorf("Current after the expiry = %q, %v", e.Data, err)
	}
	mustSet(t, c, p+"/node", "new data")
	r.expect(t, cache.NodeUpdated, p+"/node", "new data")
}

// TestPathChildrenCache.testParentContainerMissing: the parent may be
// missing, deleted and created again.
func TestCacheChildren_ParentMissing(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	r := newRecorder(false)
	ch := startChildren(t, c, p+"/a/b/test", r)
	r.expect(t, cache.Initialized, "")
	mustCreate(t, c, p+"/a/b/test/one", "")
	mustCreate(t, c, p+"/a/b/test/two", "")
	r.expectSet(t, "NODE_ADDED "+p+"/a/b/test/one", "NODE_ADDED "+p+"/a/b/test/two")
	mustDelete(t, c, p+"/a/b/test")
	r.expectSet(t, "NODE_REMOVED "+p+"/a/b/test/one", "NODE_REMOVED "+p+"/a/b/test/two")
	mustCreate(t, c, p+"/a/b/test/new", "")
	r.expect(t, cache.NodeAdded, p+"/a/b/test/new")
	if all, err := ch.Entries(); err != nil || len(all) != 1 || all[0].Path != p+"/a/b/test/new" {
		t.Errorf("Entries = %v, %v", all, err)
	}
	r.quiet(t)
}

// TestPathChildrenCache.testChildrenInitialized and testAsyncInitialPopulation.
func TestCacheChildren_Initialized(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	for _, k := range []string{"1", "2", "3"} {
		mustCreate(t, c, p+"/"+k, k)
	}
	mustCreate(t, c, p+"/2/grandchild", "not cached")
	r := newRecorder(false)
	ch := startChildren(t, c, p, r)
	r.expectSet(t, "NODE_ADDED "+p+"/1", "NODE_ADDED "+p+"/2", "NODE_ADDED "+p+"/3")
	r.expect(t, cache.Initialized, "")
	all, err := ch.Entries()
	if err != nil || len(all) != 3 {
		t.Fatalf("Entries = %v, %v", all, err)
	}
	for i, e := range all {
		if want := []string{"1", "2", "3"}[i]; string(e.Data) != want {
			t.Errorf("entry %d: %s = %q, want %q", i, e.Path, e.Data, want)
		}
	}
	if _, err := ch.Get(p); !errors.Is(err, cache.ErrNoNode) {
		t.Errorf("the parent is in the children cache: %v", err)
	}
	mustSet(t, c, p, "parent data is not a child event")
	mustSet(t, c, p+"/2", "two")
	r.expect(t, cache.NodeUpdated, p+"/2", "two")
	r.quiet(t)
}

// TestPathChildrenCache.testKilledSession: the old session's ephemeral
// child is removed after the session changes.
func TestCacheChildren_KilledSession(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/persistent", "p")
	if _, err := c.Create().WithMode(framework.Ephemeral).ForPath(t.Context(), p+"/ephemeral", []byte("e")); err != nil {
		t.Fatal(err)
	}
	r := newRecorder(false)
	ch := startChildren(t, c, p, r)
	r.expectSet(t, "NODE_ADDED "+p+"/persistent", "NODE_ADDED "+p+"/ephemeral")
	r.expect(t, cache.Initialized, "")
	expire(t, c)
	got := untilResynced(t, r)
	if want := []string{"NODE_REMOVED " + p + "/ephemeral", "RESYNCED "}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	if all, _ := ch.Entries(); len(all) != 1 {
		t.Errorf("Entries after the expiry: %v", all)
	}
}

// TestTreeCache.testDeleteThenCreate
func TestCacheTree_DeleteThenCreate(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/foo", "one")
	r := newRecorder(false)
	startTree(t, c, p, r)
	r.expect(t, cache.NodeAdded, p)
	r.expect(t, cache.NodeAdded, p+"/foo", "one")
	r.expect(t, cache.Initialized, "")
	mustDelete(t, c, p+"/foo")
	r.expect(t, cache.NodeRemoved, p+"/foo")
	mustCreate(t, c, p+"/foo", "two")
	r.expect(t, cache.NodeAdded, p+"/foo", "two")
	r.quiet(t)
}

// TestTreeCache.testKilledSession
func TestCacheTree_KilledSession(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p, "")
	r := newRecorder(true)
	startTree(t, c, p, r)
	r.expect(t, cache.NodeAdded, p)
	r.expect(t, cache.Initialized, "")
	mustCreate(t, c, p+"/foo", "foo")
	r.expect(t, cache.NodeAdded, p+"/foo", "foo")
	if _, err := c.Create().WithMode(framework.Ephemeral).ForPath(t.Context(), p+"/me", []byte("data")); err != nil {
		t.Fatal(err)
	}
	r.expect(t, cache.NodeAdded, p+"/me", "data")
	expire(t, c)
	got := untilResynced(t, r)
	// The server may report the ephemeral's deletion before it closes
	// the connection, so that event's place is not fixed.
	slices.Sort(got)
	want := []string{"CONNECTION_LOST ", "CONNECTION_RECONNECTED ", "NODE_REMOVED " + p + "/me", "RESYNCED "}
	got = slices.DeleteFunc(got, func(s string) bool { return s == "CONNECTION_SUSPENDED " })
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q (Suspended aside)", got, want)
	}
	r.quiet(t)
}

// TestTreeCache.testWithNamespaceAtRoot: paths are the namespace's.
func TestCacheTree_NamespaceAtRoot(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/outer/foo", "")
	mustCreate(t, c, p+"/outer/test/one", "hey there")
	ns := startClient(t, builder(t, fwShared(t)).Namespace(p[1:]+"/outer"))
	r := newRecorder(false)
	tr := startTree(t, ns, "/", r)
	r.expect(t, cache.NodeAdded, "/")
	// Every node after its parent (the cache's only order across nodes;
	// Curator's test also lists /foo before /test/one, an order its loader
	// happens to give).
	var got []string
	for range 3 {
		ev := r.take(t)
		got = append(got, ev.Type.String()+" "+ev.Entry.Path)
	}
	if i, j := slices.Index(got, "NODE_ADDED /test"), slices.Index(got, "NODE_ADDED /test/one"); i < 0 || j < i ||
		!slices.Contains(got, "NODE_ADDED /foo") {
		t.Fatalf("events %q, want /foo, /test and then /test/one added, each after its parent", got)
	}
	r.expect(t, cache.Initialized, "")
	if kids, err := tr.Children("/"); err != nil || !slices.Equal(kids, []string{"foo", "test"}) {
		t.Errorf("Children(/) = %q, %v", kids, err)
	}
	if e, err := tr.Get("/test/one"); err != nil || string(e.Data) != "hey there" {
		t.Errorf("Get = %q, %v", e.Data, err)
	}
}

// TreeCache's maxDepth (TestTreeCache's depth tests, through
// BaseTestTreeCache): nodes below the depth are neither cached nor watched.
func TestCacheTree_MaxDepth(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/1/2/3", "")
	for depth, want := range map[int][]string{0: {p}, 1: {p, p + "/1"}, 2: {p, p + "/1", p + "/1/2"}} {
		tr := startTree(t, c, p, nil, cache.WithMaxDepth(depth))
		all, err := tr.Entries()
		var got []string
		for _, e := range all {
			got = append(got, e.Path)
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("depth %d: %q, %v; want %q", depth, got, err, want)
		}
		tr.Close()
	}
}

// TestTreeCache.testBasicsOnTwoCaches: two caches of one client on one
// path both follow it.
func TestCacheTree_BasicsOnTwoCaches(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p, "")
	r1, r2 := newRecorder(false), newRecorder(false)
	t1 := startTree(t, c, p, r1)
	t2 := startTree(t, c, p, r2)
	for _, r := range []*recorder{r1, r2} {
		r.expect(t, cache.NodeAdded, p)
		r.expect(t, cache.Initialized, "")
	}
	// One write at a time, each seen by both caches before the next, as
	// Curator's test does: a node made and deleted between two reads of
	// its parent is coalesced away, and the caches would see nothing.
	mustCreate(t, c, p+"/one", "hey there")
	for _, r := range []*recorder{r1, r2} {
		r.expect(t, cache.NodeAdded, p+"/one")
	}
	mustSet(t, c, p+"/one", "sup!")
	for _, r := range []*recorder{r1, r2} {
		r.expect(t, cache.NodeUpdated, p+"/one")
	}
	mustDelete(t, c, p+"/one")
	for _, r := range []*recorder{r1, r2} {
		r.expect(t, cache.NodeRemoved, p+"/one")
	}
	for _, tr := range []*cache.Tree{t1, t2} {
		if _, err := tr.Get(p + "/one"); !errors.Is(err, cache.ErrNoNode) {
			t.Errorf("Get after delete: %v", err)
		}
	}
}

// TestTreeCache.testDeleteNodeAfterCloseDoesntCallExecutor, and
// TestCuratorCache.testClearOnClose: after Close no event comes and the
// view is gone.
func TestCacheTree_NothingAfterClose(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/one", "hey there")
	r := newRecorder(true)
	tr := startTree(t, c, p, r)
	r.expect(t, cache.NodeAdded, p)
	r.expect(t, cache.NodeAdded, p+"/one")
	r.expect(t, cache.Initialized, "")
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	mustDelete(t, c, p+"/one")
	r.quiet(t)
	if _, err := tr.Entries(); !errors.Is(err, cache.ErrClosed) {
		t.Errorf("Entries after Close: %v", err)
	}
}

// TestCuratorCache.testAfterInitialized: a deep tree is complete when
// Start returns.
func TestCacheTree_CompleteAfterStart(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/one/two/three", "")
	tr := startTree(t, c, p, nil)
	all, err := tr.Entries()
	if err != nil || len(all) != 4 {
		t.Fatalf("Entries = %v, %v", all, err)
	}
	for _, q := range []string{p, p + "/one", p + "/one/two", p + "/one/two/three"} {
		if _, err := tr.Get(q); err != nil {
			t.Errorf("Get(%s): %v", q, err)
		}
	}
}

// TestTreeCache.testServerNotStartedYet: a cache started while the server
// is away loads once it is back.
func TestCacheTree_ServerNotStartedYet(t *testing.T) {
	cacheNoLeaks(t)
	cluster := zktest.Start(t)
	srv := fwServer(t, cluster)
	c := startClient(t, builder(t, cluster.ConnectString()).SessionTimeout(20*time.Second))
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	tr, err := cache.NewTree(c, "/test")
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	r := newRecorder(false)
	tr.AddListener(r.listen)
	started := make(chan error, 1)
	go func() { started <- tr.Start(t.Context()) }()
	time.Sleep(500 * time.Millisecond)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := <-started; err != nil {
		t.Fatalf("Start: %v", err)
	}
	r.expect(t, cache.Initialized, "")
	mustCreate(t, c, "/test", "")
	r.expect(t, cache.NodeAdded, "/test")
	r.quiet(t)
}
