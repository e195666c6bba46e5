package integration

import (
	"errors"
	"slices"
	"testing"

	"github.com/go-curator/curator/recipes/cache"
)

// Ports of Curator's TestTreeCache that apply.

func TestCacheTree_Startup(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p, "")
	mustCreate(t, c, p+"/1", "one")
	mustCreate(t, c, p+"/2", "two")
	mustCreate(t, c, p+"/3", "three")
	mustCreate(t, c, p+"/2/sub", "two-sub")

	r := newRecorder(false)
	tr := startTree(t, c, p, r)
	r.expect(t, cache.NodeAdded, p)
	r.expectSet(t, "NODE_ADDED "+p+"/1", "NODE_ADDED "+p+"/2", "NODE_ADDED "+p+"/3")
	r.expect(t, cache.NodeAdded, p+"/2/sub", "two-sub")
	r.expect(t, cache.Initialized, "")
	r.quiet(t)

	for path, want := range map[string][]string{p: {"1", "2", "3"}, p + "/1": nil, p + "/2": {"sub"}} {
		got, err := tr.Children(path)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Children(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := tr.Children(p + "/non_exist"); !errors.Is(err, cache.ErrNoNode) {
		t.Errorf("Children of a missing node: %v, want ErrNoNode", err)
	}
	if e, err := tr.Get(p + "/2"); err != nil || string(e.Data) != "two" {
		t.Errorf("Get = %q, %v", e.Data, err)
	}
}

func TestCacheTree_StartEmpty(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	r := newRecorder(false)
	startTree(t, c, p, r)
	r.expect(t, cache.Initialized, "")
	mustCreate(t, c, p, "")
	r.expect(t, cache.NodeAdded, p)
	mustCreate(t, c, p+"/one", "hey there")
	r.expect(t, cache.NodeAdded, p+"/one", "hey there")
	r.quiet(t)
}

func TestCacheTree_Basics(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p, "")
	r := newRecorder(false)
	tr := startTree(t, c, p, r)
	r.expect(t, cache.NodeAdded, p)
	r.expect(t, cache.Initialized, "")

	mustCreate(t, c, p+"/one", "hey there")
	r.expect(t, cache.NodeAdded, p+"/one", "hey there")
	if kids, _ := tr.Children(p); !slices.Equal(kids, []string{"one"}) {
		t.Errorf("Children = %q", kids)
	}
	mustSet(t, c, p+"/one", "sup!")
	ev := r.expect(t, cache.NodeUpdated, p+"/one", "sup!")
	if string(ev.Old.Data) != "hey there" || ev.Entry.Stat.Version != 1 {
		t.Errorf("update: old %q, version %d", ev.Old.Data, ev.Entry.Stat.Version)
	}
	mustDelete(t, c, p+"/one")
	ev = r.expect(t, cache.NodeRemoved, p+"/one", "sup!")
	if kids, _ := tr.Children(p); len(kids) != 0 {
		t.Errorf("Children after delete = %q", kids)
	}
	if _, err := tr.Get(p + "/one"); !errors.Is(err, cache.ErrNoNode) {
		t.Errorf("Get after delete: %v", err)
	}
	r.quiet(t)
}
