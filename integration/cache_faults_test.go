package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// TestCacheFaults_ConvergeUnderSessionChanges: one client creates, changes
// and deletes nodes at random under a subtree while the caches' client,
// behind a fault proxy, has its session expired, its connection cut for
// longer than its session timeout (so it declares the session lost and
// starts another) and reset, on a seeded schedule (CHAOS_SEED). After the
// writes stop, every cache equals the server's tree, node by node (data,
// version, czxid, mzxid), and so does the view each cache's listener built
// from its events alone; every listener saw each node's versions in
// increasing order, with no add of a node it had and no update or removal
// of one it had not, and a Tree's listener never held a node without its
// parent. Nothing is left running after Close.
func TestCacheFaults_ConvergeUnderSessionChanges(t *testing.T) {
	cacheNoLeaks(t)
	seed := chaosSeed()
	t.Logf("seed %d (CHAOS_SEED)", seed)
	writer := newClient(t)
	root := cachePath(t, writer)
	mustCreate(t, writer, root, "")

	proxy := fwProxy(t, fwShared(t))
	c := startClient(t, builder(t, proxy.Addr()))

	type watched struct {
		name  string
		want  func(map[string]cache.Entry) map[string]cache.Entry // the server's tree, cut to what the cache holds
		view  func() ([]cache.Entry, error)
		model *eventModel
	}
	full, err := cache.NewTree(c, root)
	if err != nil {
		t.Fatal(err)
	}
	shallow, err := cache.NewTree(c, root, cache.WithMaxDepth(1))
	if err != nil {
		t.Fatal(err)
	}
	kids, err := cache.NewChildren(c, root)
	if err != nil {
		t.Fatal(err)
	}
	node, err := cache.NewNode(c, root+"/a")
	if err != nil {
		t.Fatal(err)
	}
	depth := func(p string) int { return bytes.Count([]byte(p[len(root):]), []byte("/")) }
	cut := func(keep func(p string) bool) func(map[string]cache.Entry) map[string]cache.Entry {
		return func(all map[string]cache.Entry) map[string]cache.Entry {
			out := map[string]cache.Entry{}
			for p, e := range all {
				if keep(p) {
					out[p] = e
				}
			}
			return out
		}
	}
	caches := []watched{
		{"tree", cut(func(string) bool { return true }), full.Entries, newEventModel(root)},
		{"tree depth 1", cut(func(p string) bool { return depth(p) <= 1 }), shallow.Entries, newEventModel(root)},
		{"children", cut(func(p string) bool { return depth(p) == 1 }), kids.Entries, newEventModel("")},
		{"node", cut(func(p string) bool { return p == root+"/a" }), func() ([]cache.Entry, error) {
			e, err := node.Current()
			if errors.Is(err, cache.ErrNoNode) {
				return nil, nil
			}
			return []cache.Entry{e}, err
		}, newEventModel("")},
	}
	for i, s := range []interface {
		Start(context.Context) error
		Close() error
		AddListener(func(cache.Event)) func()
	}{full, shallow, kids, node} {
		s.AddListener(caches[i].model.listen)
		t.Cleanup(func() { s.Close() })
		if err := s.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
	}

	// Writes and faults, for a while.
	dur := chaosDuration(20 * time.Second)
	ctx, stop := context.WithTimeout(t.Context(), dur)
	defer stop()
	var wg sync.WaitGroup
	var writes, faults int
	wg.Go(func() { writes = randomWrites(ctx, t, writer, root, seed) })
	wg.Go(func() { faults = sessionFaults(ctx, t, c, root, proxy, seed) })
	wg.Wait()
	proxy.Resume()
	t.Logf("%d writes, %d faults", writes, faults)

	server, err := serverTree(t.Context(), writer, root, -1)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, w := range caches {
		want := w.want(server)
		for {
			entries, err := w.view()
			if err != nil {
				t.Fatalf("%s: %v", w.name, err)
			}
			diff := sameTree(want, entries)
			if diff == "" {
				diff = sameTree(want, w.model.entries())
				if diff != "" {
					diff = "listener's view: " + diff
				}
			}
			if diff == "" {
				n, resyncs := w.model.events()
				t.Logf("%s: %d nodes, %d events, %d resyncs", w.name, len(entries), n, resyncs)
				if resyncs == 0 {
					t.Errorf("%s: no resync after %d faults", w.name, faults)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s differs from the server: %s", w.name, diff)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if errs := w.model.problems(); len(errs) > 0 {
			t.Errorf("%s: %d event order problems: %v", w.name, len(errs), errors.Join(errs[:min(len(errs), 5)]...))
		}
	}
}

// randomWrites creates, changes and deletes nodes under root (three
// levels of names a, b, c) until ctx ends, and returns how many it made.
func randomWrites(ctx context.Context, t *testing.T, c *framework.Client, root string, seed uint64) int {
	rng := rand.New(rand.NewPCG(seed, 1))
	n := 0
	for ctx.Err() == nil {
		p := root
		for range 1 + rng.IntN(3) {
			p += "/" + string(rune('a'+rng.IntN(3)))
		}
		var err error
		switch op := rng.IntN(10); {
		case op < 4:
			_, err = c.Create().CreatingParentsIfNeeded().ForPath(ctx, p, fmt.Appendf(nil, "c%d", n))
		case op < 8:
			_, err = c.SetData().ForPath(ctx, p, fmt.Appendf(nil, "s%d", n))
		default:
			err = c.Delete().DeletingChildrenIfNeeded().ForPath(ctx, p)
		}
		switch {
		case err == nil:
			n++
		case errors.Is(err, zk.ErrNodeExists), errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrNotEmpty), ctx.Err() != nil:
		default:
			t.Errorf("write %s: %v", p, err)
			return n
		}
		time.Sleep(time.Duration(rng.IntN(8)) * time.Millisecond)
	}
	return n
}

// sessionFaults hits the caches' client on a seeded schedule until ctx
// ends: a server-side session expiry, a connection reset, or a cut longer
// than the session timeout; before each, the client creates an ephemeral
// node under root. It returns how many faults it made.
func sessionFaults(ctx context.Context, t *testing.T, c *framework.Client, root string, proxy *zktest.Proxy, seed uint64) int {
	rng := rand.New(rand.NewPCG(seed, 2))
	n := 0
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	for {
		// Each fault hits a connected client that has had a moment.
		if c.BlockUntilConnected(ctx) != nil || !sleep(time.Duration(300+rng.IntN(1200))*time.Millisecond) {
			return n
		}
		// An ephemeral node of the caches' own session, which the next
		// session change removes.
		_, err := c.Create().WithMode(framework.Ephemeral).ForPath(ctx, fmt.Sprintf("%s/e%d", root, n), nil)
		if err != nil && ctx.Err() == nil && !framework.IsRetryable(err) && !errors.Is(err, framework.ErrIndeterminate) {
			t.Errorf("create an ephemeral node: %v", err)
		}
		fault := rng.IntN(3)
		if n < 2 {
			fault = 2 * n // always one expiry and one long cut
		}
		n++
		t.Logf("fault %d: %s", n, [...]string{"session expiry", "connection reset", "cut past the session timeout"}[fault])
		switch fault {
		case 0:
			err := zktest.ExpireSession(ctx, fwShared(t), c.ZooKeeper())
			if err != nil && ctx.Err() == nil && !errors.Is(err, zk.ErrSessionExpired) {
				t.Logf("expire: %v", err)
			}
		case 1:
			proxy.Reset()
		case 2:
			proxy.Pause()
			ok := sleep(testSessionTimeout + time.Second)
			proxy.Resume()
			if !ok {
				return n
			}
		}
	}
}

// eventModel is the view a listener builds from a cache's events alone,
// with the order problems it saw.
type eventModel struct {
	root    string // a Tree's root: a node is held only under its parent
	mu      sync.Mutex
	view    map[string]cache.Entry
	last    map[string]cache.Entry // the last version seen of each path, present or not
	errs    []error
	n       int
	resyncs int
}

// newEventModel returns the model of a cache; of a Tree if treeRoot is
// its root, which also checks that a node is added only under a parent
// the listener holds, and removed only once it holds none of its
// children.
func newEventModel(treeRoot string) *eventModel {
	return &eventModel{root: treeRoot, view: map[string]cache.Entry{}, last: map[string]cache.Entry{}}
}

func (m *eventModel) listen(ev cache.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	e := ev.Entry
	cur, had := m.view[e.Path]
	bad := func(format string, args ...any) {
		m.errs = append(m.errs, fmt.Errorf("%s %s: "+format, append([]any{ev.Type, e.Path}, args...)...))
	}
	switch ev.Type {
	case cache.NodeAdded, cache.NodeUpdated:
		if ev.Type == cache.NodeAdded && had {
			bad("already in the view")
		}
		if ev.Type == cache.NodeUpdated && (!had || ev.Old.Stat.Mzxid != cur.Stat.Mzxid) {
			bad("old version %d does not match the view's (%v, %d)", ev.Old.Stat.Version, had, cur.Stat.Version)
		}
		if prev, seen := m.last[e.Path]; seen {
			switch {
			case e.Stat.Mzxid <= prev.Stat.Mzxid:
				bad("mzxid %d after %d", e.Stat.Mzxid, prev.Stat.Mzxid)
			case e.Stat.Czxid == prev.Stat.Czxid && e.Stat.Version <= prev.Stat.Version:
				bad("version %d after %d", e.Stat.Version, prev.Stat.Version)
			case e.Stat.Czxid < prev.Stat.Czxid:
				bad("an older incarnation (czxid %d after %d)", e.Stat.Czxid, prev.Stat.Czxid)
			}
		}
		if parent, _ := framework.SplitPath(e.Path); m.root != "" && e.Path != m.root && !m.has(parent) {
			bad("its parent is not in the view")
		}
		m.view[e.Path], m.last[e.Path] = e, e
	case cache.NodeRemoved:
		if !had {
			bad("not in the view")
		}
		if m.root != "" {
			for q := range m.view {
				if strings.HasPrefix(q, e.Path+"/") {
					bad("%s still in the view", q)
				}
			}
		}
		delete(m.view, e.Path)
	case cache.Resynced:
		m.resyncs++
	}
}

func (m *eventModel) has(p string) bool {
	_, ok := m.view[p]
	return ok
}

func (m *eventModel) entries() []cache.Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Collect(maps.Values(m.view))
}

func (m *eventModel) problems() []error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]error(nil), m.errs...)
}

func (m *eventModel) events() (n, resyncs int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n, m.resyncs
}

// TestCacheFaults_ReconnectSameSessionLosesNothing: while the caches'
// client is cut off for less than its session timeout, another client
// changes, creates and deletes nodes; after the reconnect ZooKeeper
// reports those changes to the watches the client re-sent, and the cache
// catches up without a resync.
func TestCacheFaults_ReconnectSameSessionLosesNothing(t *testing.T) {
	cacheNoLeaks(t)
	writer := newClient(t)
	root := cachePath(t, writer)
	mustCreate(t, writer, root+"/a", "1")
	mustCreate(t, writer, root+"/b", "1")
	proxy := fwProxy(t, fwShared(t))
	c := startClient(t, builder(t, proxy.Addr()))
	r := newRecorder(true)
	tr := startTree(t, c, root, r)
	session := c.SessionID()

	proxy.Pause()
	mustSet(t, writer, root+"/a", "2")
	mustDelete(t, writer, root+"/b")
	mustCreate(t, writer, root+"/c/d", "new")
	proxy.Reset() // the client reconnects at once, on the same session
	proxy.Resume()

	eventually(t, cacheWait, func() bool {
		server, err := serverTree(t.Context(), writer, root, -1)
		entries, _ := tr.Entries()
		return err == nil && sameTree(server, entries) == ""
	}, "the cache equals the server")
	if c.SessionID() != session {
		t.Fatalf("the session changed (%x -> %x): this test wants a reconnect on the same one", session, c.SessionID())
	}
	// Listeners hear on their own goroutine: the view can equal the
	// server before the reconnect event is delivered.
	eventually(t, cacheWait, func() bool {
		for _, ev := range r.all() {
			if ev.Type == cache.ConnectionReconnected {
				return true
			}
		}
		return false
	}, "the listener hears of the reconnect")
	for _, ev := range r.all() {
		switch ev.Type {
		case cache.Resynced, cache.ConnectionLost:
			t.Errorf("%s on a reconnect to the same session", ev.Type)
		}
	}
}
