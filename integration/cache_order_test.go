package integration

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
)

// treeOrder follows a Tree's events and checks, at each one, what a
// listener relies on: a node is added only under a parent it holds, and
// removed only once it holds none of its children. It also checks the
// view itself, read from the listener: no entry without its parent.
type treeOrder struct {
	root string
	tr   *cache.Tree

	mu       sync.Mutex
	model    map[string]bool
	evs      []string
	problems []string
	wake     chan struct{}
}

func newTreeOrder(root string) *treeOrder {
	return &treeOrder{root: root, model: map[string]bool{}, wake: make(chan struct{}, 1)}
}

func (o *treeOrder) listen(ev cache.Event) {
	o.mu.Lock()
	defer func() {
		o.mu.Unlock()
		select {
		case o.wake <- struct{}{}:
		default:
		}
	}()
	p := ev.Entry.Path
	o.evs = append(o.evs, ev.Type.String()+" "+p)
	switch ev.Type {
	case cache.NodeAdded:
		if parent, _ := framework.SplitPath(p); p != o.root && !o.model[parent] {
			o.problems = append(o.problems, fmt.Sprintf("%s added while its parent is not held", p))
		}
		o.model[p] = true
	case cache.NodeRemoved:
		for q := range o.model {
			if strings.HasPrefix(q, p+"/") {
				o.problems = append(o.problems, fmt.Sprintf("%s removed while %s is held", p, q))
			}
		}
		delete(o.model, p)
	}
	if o.tr == nil {
		return
	}
	entries, err := o.tr.Entries()
	if err != nil {
		return // closed
	}
	held := map[string]bool{}
	for _, e := range entries {
		held[e.Path] = true
	}
	for _, e := range entries {
		if parent, _ := framework.SplitPath(e.Path); e.Path != o.root && !held[parent] {
			o.problems = append(o.problems, fmt.Sprintf("view holds %s without %s (after %s %s)", e.Path, parent, ev.Type, p))
		}
	}
}

// waitAdded waits until each path's latest event is NODE_ADDED with the
// given czxid.
func (o *treeOrder) waitAdded(t *testing.T, tr *cache.Tree, want map[string]int64) {
	t.Helper()
	eventually(t, cacheWait, func() bool {
		for p, czxid := range want {
			e, err := tr.Get(p)
			if err != nil || e.Stat.Czxid != czxid {
				return false
			}
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		for p := range want {
			if !o.model[p] {
				return false
			}
		}
		return true
	}, "the cache holds the new incarnations")
}

// TestCacheTree_RemovalOrderOnRecreatedParent deletes a parent with its
// children and creates them again in one transaction, so that the
// cache's next reads find every node in a new incarnation. A Tree
// reports each child's NODE_REMOVED before its parent's, deepest first,
// as Curator's TreeCache does (TreeNode.wasDeleted deletes the children
// first): a listener, and the view, never hold a child without its
// parent. Checked on a Tree over the parent and on one rooted at it.
func TestCacheTree_RemovalOrderOnRecreatedParent(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	r := p + "/r"
	nodes := []string{r, r + "/a", r + "/a/x", r + "/a/x/y", r + "/b"}
	for _, n := range nodes {
		mustCreate(t, c, n, "one")
	}
	above, atRoot := newTreeOrder(p), newTreeOrder(r)
	for _, o := range []*treeOrder{above, atRoot} {
		tr, err := cache.NewTree(c, o.root)
		if err != nil {
			t.Fatal(err)
		}
		o.mu.Lock()
		o.tr = tr
		o.mu.Unlock()
		tr.AddListener(o.listen)
		t.Cleanup(func() { tr.Close() })
		if err := tr.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
	}

	for round := range 3 {
		tx := c.Transaction()
		for i := len(nodes) - 1; i >= 0; i-- {
			tx = tx.Delete(nodes[i], -1)
		}
		for _, n := range nodes {
			tx = tx.Create(n, []byte(fmt.Sprint("round ", round)), framework.Persistent)
		}
		if _, err := tx.Commit(t.Context()); err != nil {
			t.Fatalf("round %d: recreate: %v", round, err)
		}
		server, err := serverTree(t.Context(), c, r, -1)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{}
		for _, n := range nodes {
			want[n] = server[n].Stat.Czxid
		}
		for _, o := range []*treeOrder{above, atRoot} {
			o.waitAdded(t, o.tr, want)
		}
	}
	for _, o := range []*treeOrder{above, atRoot} {
		o.mu.Lock()
		if len(o.problems) > 0 {
			t.Errorf("tree at %s: %d problems, first: %q\nevents: %q", o.root, len(o.problems), o.problems[:min(4, len(o.problems))], o.evs)
		}
		o.mu.Unlock()
	}
}
