package integration

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
)

// Curator's cache options (issue 31 item 4): a cache without data, a
// tree's depth and selector, and the children cache's start modes.

// noData fails the test if an entry or event carries data.
func noData(t *testing.T, what string, e cache.Entry) {
	t.Helper()
	if e.Data != nil {
		t.Errorf("%s %s carries data %q", what, e.Path, e.Data)
	}
}

// viewPaths returns the paths of entries, sorted.
func viewPaths(entries []cache.Entry) []string {
	var ps []string
	for _, e := range entries {
		ps = append(ps, e.Path)
	}
	slices.Sort(ps)
	return ps
}

func TestCacheOptions_TreeWithoutData(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p, "root")
	mustCreate(t, c, p+"/a", "alpha")
	mustCreate(t, c, p+"/a/b", "beta")

	r := newRecorder(false)
	tr := startTree(t, c, p, r, cache.WithoutData())
	for _, ev := range []cache.Event{
		r.expect(t, cache.NodeAdded, p), r.expect(t, cache.NodeAdded, p+"/a"), r.expect(t, cache.NodeAdded, p+"/a/b"),
	} {
		noData(t, "NodeAdded", ev.Entry)
	}
	r.expect(t, cache.Initialized, "")

	// The view holds the names and stats the server has, and no data.
	server, err := serverTree(t.Context(), c, p, -1)
	if err != nil {
		t.Fatal(err)
	}
	for k, e := range server {
		e.Data = nil
		server[k] = e
	}
	entries, err := tr.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if d := sameTree(server, entries); d != "" {
		t.Errorf("view differs from the server: %s", d)
	}
	if kids, err := tr.Children(p + "/a"); err != nil || !slices.Equal(kids, []string{"b"}) {
		t.Errorf("Children(a) = %q, %v", kids, err)
	}

	// A change of data still comes, with the new stat and no data.
	mustSet(t, c, p+"/a", "alpha-2")
	ev := r.expect(t, cache.NodeUpdated, p+"/a")
	noData(t, "NodeUpdated", ev.Entry)
	noData(t, "NodeUpdated's old", ev.Old)
	if ev.Entry.Stat.Version != 1 || ev.Old.Stat.Version != 0 {
		t.Errorf("NodeUpdated versions %d (old %d), want 1 (old 0)", ev.Entry.Stat.Version, ev.Old.Stat.Version)
	}
	if e, err := tr.Get(p + "/a"); err != nil || e.Data != nil || e.Stat.Version != 1 {
		t.Errorf("Get(a) = %q version %d, %v; want no data, version 1", e.Data, e.Stat.Version, err)
	}
	mustCreate(t, c, p+"/c", "gamma")
	noData(t, "NodeAdded", r.expect(t, cache.NodeAdded, p+"/c").Entry)
	mustDelete(t, c, p+"/a")
	r.expect(t, cache.NodeRemoved, p+"/a/b")
	r.expect(t, cache.NodeRemoved, p+"/a")
	r.quiet(t)
}

func TestCacheOptions_ChildrenWithoutData(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/x", "ex")
	mustCreate(t, c, p+"/y", "why")

	ch, err := cache.NewChildren(c, p, cache.WithoutData())
	if err != nil {
		t.Fatal(err)
	}
	r := newRecorder(false)
	ch.AddListener(r.listen)
	t.Cleanup(func() { ch.Close() })
	if err := ch.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.expectSet(t, "NODE_ADDED "+p+"/x", "NODE_ADDED "+p+"/y")
	r.expect(t, cache.Initialized, "")
	entries, err := ch.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if got := viewPaths(entries); !slices.Equal(got, []string{p + "/x", p + "/y"}) {
		t.Errorf("view %q", got)
	}
	for _, e := range entries {
		noData(t, "entry", e)
		if e.Stat.Czxid == 0 || e.Stat.DataLength == 0 {
			t.Errorf("entry %s has no stat: %+v", e.Path, e.Stat)
		}
	}
	mustSet(t, c, p+"/x", "ex-2")
	noData(t, "NodeUpdated", r.expect(t, cache.NodeUpdated, p+"/x").Entry)
	for _, ev := range r.all() {
		noData(t, ev.Type.String(), ev.Entry)
	}
}

func TestCacheOptions_MaxDepth(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/a/deep", "d")
	mustCreate(t, c, p+"/b", "b")

	r := newRecorder(false)
	tr := startTree(t, c, p, r, cache.WithMaxDepth(1))
	r.expect(t, cache.NodeAdded, p)
	r.expectSet(t, "NODE_ADDED "+p+"/a", "NODE_ADDED "+p+"/b")
	r.expect(t, cache.Initialized, "")
	entries, err := tr.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if got := viewPaths(entries); !slices.Equal(got, []string{p, p + "/a", p + "/b"}) {
		t.Errorf("view %q, want the root and its children", got)
	}
	// Below the depth nothing is reported; at it, everything is.
	mustCreate(t, c, p+"/b/deeper", "x")
	mustSet(t, c, p+"/a/deep", "d2")
	mustCreate(t, c, p+"/c", "c")
	r.expect(t, cache.NodeAdded, p+"/c", "c")
	r.quiet(t)
	if _, err := tr.Get(p + "/b/deeper"); !errors.Is(err, cache.ErrNoNode) {
		t.Errorf("Get below the depth: %v, want ErrNoNode", err)
	}

	// Depth 0 caches the root alone.
	r0 := newRecorder(false)
	root := startTree(t, c, p, r0, cache.WithMaxDepth(0))
	r0.expect(t, cache.NodeAdded, p)
	r0.expect(t, cache.Initialized, "")
	if entries, err := root.Entries(); err != nil || len(entries) != 1 {
		t.Errorf("depth 0: %d entries, %v", len(entries), err)
	}
}

func TestCacheOptions_Selector(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	for _, n := range []string{"/keep/one", "/_hidden/inside", "/leaf/below", "/keep/_skip"} {
		mustCreate(t, c, p+n, n)
	}
	var calls []string // only the cache's goroutine appends, before Start returns or an event is posted
	sel := cache.SelectorFuncs{
		// The children of leaf are not traversed; names starting with
		// "_" are not accepted, and neither is anything below them.
		Traverse: func(path string) bool { calls = append(calls, "traverse "+path); return path != p+"/leaf" },
		Accept: func(path string) bool {
			calls = append(calls, "accept "+path)
			return !strings.HasPrefix(path[strings.LastIndex(path, "/")+1:], "_")
		},
	}
	r := newRecorder(false)
	tr := startTree(t, c, p, r, cache.WithSelector(sel))
	r.expect(t, cache.NodeAdded, p)
	r.expectSet(t, "NODE_ADDED "+p+"/keep", "NODE_ADDED "+p+"/leaf", "NODE_ADDED "+p+"/keep/one")
	r.expect(t, cache.Initialized, "")
	entries, err := tr.Entries()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{p, p + "/keep", p + "/keep/one", p + "/leaf"}
	if got := viewPaths(entries); !slices.Equal(got, want) {
		t.Errorf("view %q, want %q", got, want)
	}
	if kids, err := tr.Children(p + "/leaf"); err != nil || len(kids) != 0 {
		t.Errorf("Children(leaf) = %q, %v; want none: its children are not traversed", kids, err)
	}
	if slices.Contains(calls, "accept "+p) {
		t.Errorf("the selector was asked about the root: %q", calls)
	}

	// Later changes follow the same choice: nothing under a left-out
	// node or below leaf is reported, the rest is.
	mustCreate(t, c, p+"/_hidden/more", "x")
	mustSet(t, c, p+"/_hidden/inside", "changed")
	mustCreate(t, c, p+"/leaf/another", "x")
	mustCreate(t, c, p+"/keep/_new", "x")
	mustDelete(t, c, p+"/_hidden")
	mustCreate(t, c, p+"/keep/two", "2")
	r.expect(t, cache.NodeAdded, p+"/keep/two", "2")
	mustDelete(t, c, p+"/keep")
	r.expectSet(t, "NODE_REMOVED "+p+"/keep/one", "NODE_REMOVED "+p+"/keep/two")
	r.expect(t, cache.NodeRemoved, p+"/keep")
	r.quiet(t)
}

// The three start modes of a children cache over two existing children:
// which events the initial nodes bring, and what the view holds.
func TestCacheOptions_StartModes(t *testing.T) {
	for _, mode := range []cache.StartMode{cache.StartNormal, cache.StartBuildInitialCache, cache.StartPostInitializedEvent} {
		t.Run(mode.String(), func(t *testing.T) {
			cacheNoLeaks(t)
			c := newClient(t)
			p := cachePath(t, c)
			mustCreate(t, c, p+"/a", "1")
			mustCreate(t, c, p+"/b", "2")
			ch, err := cache.NewChildren(c, p, cache.WithStartMode(mode))
			if err != nil {
				t.Fatal(err)
			}
			r := newRecorder(false)
			ch.AddListener(r.listen)
			t.Cleanup(func() { ch.Close() })
			if err := ch.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			initial := []string{p + "/a", p + "/b"}
			switch mode {
			case cache.StartNormal:
				// Start returned without waiting: the events bring the
				// view, and no Initialized follows them.
				r.expectSet(t, "NODE_ADDED "+initial[0], "NODE_ADDED "+initial[1])
			case cache.StartBuildInitialCache:
				// The view is loaded when Start returns, without events.
				entries, err := ch.Entries()
				if err != nil || !slices.Equal(viewPaths(entries), initial) {
					t.Fatalf("view at Start's return %q, %v; want %q", viewPaths(entries), err, initial)
				}
			case cache.StartPostInitializedEvent:
				entries, err := ch.Entries()
				if err != nil || !slices.Equal(viewPaths(entries), initial) {
					t.Fatalf("view at Start's return %q, %v; want %q", viewPaths(entries), err, initial)
				}
				r.expectSet(t, "NODE_ADDED "+initial[0], "NODE_ADDED "+initial[1])
				r.expect(t, cache.Initialized, "")
			}
			// Every mode reports the changes after the load.
			mustCreate(t, c, p+"/c", "3")
			r.expect(t, cache.NodeAdded, p+"/c", "3")
			mustSet(t, c, p+"/a", "1b")
			r.expect(t, cache.NodeUpdated, p+"/a", "1b")
			r.quiet(t)
			entries, err := ch.Entries()
			if err != nil || !slices.Equal(viewPaths(entries), []string{p + "/a", p + "/b", p + "/c"}) {
				t.Errorf("view %q, %v", viewPaths(entries), err)
			}
		})
	}
}

// A tree takes the start modes too; BUILD_INITIAL_CACHE over a deeper tree
// sends nothing for the nodes loaded, at any depth.
func TestCacheOptions_TreeBuildInitialCache(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/a/b/c", "x")
	r := newRecorder(false)
	tr := startTree(t, c, p, r, cache.WithStartMode(cache.StartBuildInitialCache), cache.WithoutData())
	if entries, err := tr.Entries(); err != nil || len(entries) != 4 {
		t.Fatalf("view %q, %v; want 4 nodes", viewPaths(entries), err)
	}
	mustDelete(t, c, p+"/a/b")
	r.expect(t, cache.NodeRemoved, p+"/a/b/c")
	r.expect(t, cache.NodeRemoved, p+"/a/b")
	r.quiet(t)
}

// Bad option values give an error matching the package's
// ErrInvalidArgument and the framework's, start nothing, and leave no
// goroutine (cacheNoLeaks); a good cache beside them still works.
func TestCacheOptions_BadInput(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	var nilSel cache.Selector
	for name, build := range map[string]func() error{
		"negative depth":         func() error { _, err := cache.NewTree(c, p, cache.WithMaxDepth(-2)); return err },
		"nil selector":           func() error { _, err := cache.NewTree(c, p, cache.WithSelector(nilSel)); return err },
		"unknown mode":           func() error { _, err := cache.NewChildren(c, p, cache.WithStartMode(cache.StartMode(42))); return err },
		"zero mode":              func() error { _, err := cache.NewTree(c, p, cache.WithStartMode(0)); return err },
		"depth on Children":      func() error { _, err := cache.NewChildren(c, p, cache.WithMaxDepth(3)); return err },
		"selector on Children":   func() error { _, err := cache.NewChildren(c, p, cache.WithSelector(cache.SelectorFuncs{})); return err },
		"nil option after good":  func() error { _, err := cache.NewTree(c, p, cache.WithoutData(), nil); return err },
		"bad path, good options": func() error { _, err := cache.NewTree(c, p+"/", cache.WithoutData()); return err },
	} {
		err := build()
		if !errors.Is(err, cache.ErrInvalidArgument) || !errors.Is(err, framework.ErrInvalidArgument) && !errors.Is(err, framework.ErrInvalidPath) {
			t.Errorf("%s: %v, want cache.ErrInvalidArgument and the framework's sentinel", name, err)
		} else if strings.Count(err.Error(), "cache: ") != 1 {
			t.Errorf("%s: message %q: want the one prefix cache:", name, err)
		}
	}
	mustCreate(t, c, p, "ok")
	r := newRecorder(false)
	startTree(t, c, p, r, cache.WithoutData(), cache.WithMaxDepth(0))
	r.expect(t, cache.NodeAdded, p)
	r.expect(t, cache.Initialized, "")
}
