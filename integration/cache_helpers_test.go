package integration

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/zktest"
	"go.uber.org/goleak"
)

// cacheWait bounds every wait for an event in the cache tests.
const cacheWait = 15 * time.Second

// cacheNoLeaks checks, after every cleanup registered later (clients,
// caches, servers), that the test left no goroutine behind.
func cacheNoLeaks(t *testing.T) {
	t.Helper()
	zktest.Shared(t) // its goroutines live as long as the binary
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// cachePath returns the test's path on the shared server, deleted with its
// children before the test and after it.
func cachePath(t *testing.T, c *framework.Client) string {
	t.Helper()
	p := testPath(t)
	del := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := c.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, p); err != nil {
			t.Errorf("delete %s: %v", p, err)
		}
	}
	del()
	t.Cleanup(del)
	return p
}

// recorder collects a cache's events, in order.
type recorder struct {
	mu     sync.Mutex
	evs    []cache.Event
	next   int // the first event not yet taken by expect
	wake   chan struct{}
	states bool // keep connection events
}

func newRecorder(states bool) *recorder {
	return &recorder{wake: make(chan struct{}, 1), states: states}
}

func (r *recorder) listen(ev cache.Event) {
	switch ev.Type {
	case cache.ConnectionSuspended, cache.ConnectionReconnected, cache.ConnectionLost:
		if !r.states {
			return
		}
	}
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// take waits for the next event.
func (r *recorder) take(t testing.TB) cache.Event {
	t.Helper()
	deadline := time.NewTimer(cacheWait)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		if r.next < len(r.evs) {
			ev := r.evs[r.next]
			r.next++
			r.mu.Unlock()
			return ev
		}
		r.mu.Unlock()
		select {
		case <-r.wake:
		case <-deadline.C:
			t.Fatalf("no event within %v (had %s)", cacheWait, r.describe())
		}
	}
}

// expect takes the next event and checks its type and path (and data, if
// given).
func (r *recorder) expect(t testing.TB, typ cache.EventType, path string, data ...string) cache.Event {
	t.Helper()
	ev := r.take(t)
	if ev.Type != typ || ev.Entry.Path != path {
		t.Fatalf("event %s %s, want %s %s (all: %s)", ev.Type, ev.Entry.Path, typ, path, r.describe())
	}
	if len(data) > 0 && string(ev.Entry.Data) != data[0] {
		t.Fatalf("event %s %s with data %q, want %q", ev.Type, path, ev.Entry.Data, data[0])
	}
	return ev
}

// expectSet takes len(want) events, in any order, each "TYPE path".
func (r *recorder) expectSet(t testing.TB, want ...string) {
	t.Helper()
	var got []string
	for range want {
		ev := r.take(t)
		got = append(got, ev.Type.String()+" "+ev.Entry.Path)
	}
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}

// quiet checks that no event comes for a little while.
func (r *recorder) quiet(t testing.TB) {
	t.Helper()
	time.Sleep(300 * time.Millisecond)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next < len(r.evs) {
		t.Fatalf("unexpected events: %s", r.describeFrom(r.next))
	}
}

func (r *recorder) describe() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.describeFrom(0)
}

func (r *recorder) describeFrom(i int) string {
	var b strings.Builder
	for _, ev := range r.evs[i:] {
		fmt.Fprintf(&b, "[%s %s %q] ", ev.Type, ev.Entry.Path, ev.Entry.Data)
	}
	return b.String()
}

// all returns every event so far.
func (r *recorder) all() []cache.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.evs)
}

// mustCreate creates p (and its parents) with data.
func mustCreate(t testing.TB, c *framework.Client, p, data string) {
	t.Helper()
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(t.Context(), p, []byte(data)); err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
}

func mustSet(t testing.TB, c *framework.Client, p, data string) {
	t.Helper()
	if _, err := c.SetData().ForPath(t.Context(), p, []byte(data)); err != nil {
		t.Fatalf("set %s: %v", p, err)
	}
}

func mustDelete(t testing.TB, c *framework.Client, p string) {
	t.Helper()
	if err := c.Delete().DeletingChildrenIfNeeded().ForPath(t.Context(), p); err != nil {
		t.Fatalf("delete %s: %v", p, err)
	}
}

// serverTree reads the subtree at root from the server, to maxDepth
// levels below it (-1: all), as path -> entry.
func serverTree(ctx context.Context, c *framework.Client, root string, maxDepth int) (map[string]cache.Entry, error) {
	out := map[string]cache.Entry{}
	var walk func(p string, depth int) error
	walk = func(p string, depth int) error {
		data, stat, err := c.GetData().ForPath(ctx, p)
		if err != nil {
			if strings.Contains(err.Error(), "node does not exist") {
				return nil
			}
			return err
		}
		out[p] = cache.Entry{Path: p, Data: data, Stat: *stat}
		if maxDepth >= 0 && depth >= maxDepth {
			return nil
		}
		kids, err := c.GetChildren().ForPath(ctx, p)
		if err != nil {
			if strings.Contains(err.Error(), "node does not exist") {
				delete(out, p)
				return nil
			}
			return err
		}
		for _, k := range kids {
			if err := walk(framework.JoinPath(p, k), depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(root, 0)
}

// sameTree reports how entries differ from the server's tree ("" if not).
func sameTree(server map[string]cache.Entry, entries []cache.Entry) string {
	var diffs []string
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.Path] = true
		s, ok := server[e.Path]
		switch {
		case !ok:
			diffs = append(diffs, "extra "+e.Path)
		case s.Stat.Czxid != e.Stat.Czxid || s.Stat.Version != e.Stat.Version || s.Stat.Mzxid != e.Stat.Mzxid:
			diffs = append(diffs, fmt.Sprintf("%s: version %d (mzxid %d), server %d (mzxid %d)",
				e.Path, e.Stat.Version, e.Stat.Mzxid, s.Stat.Version, s.Stat.Mzxid))
		case !bytes.Equal(s.Data, e.Data):
			diffs = append(diffs, fmt.Sprintf("%s: data %q, server %q", e.Path, e.Data, s.Data))
		}
	}
	for p := range server {
		if !seen[p] {
			diffs = append(diffs, "missing "+p)
		}
	}
	slices.Sort(diffs)
	if len(diffs) > 8 {
		diffs = append(diffs[:8], fmt.Sprintf("and %d more", len(diffs)-8))
	}
	return strings.Join(diffs, "; ")
}

// startTree builds and starts a Tree with listener r, closed at cleanup.
func startTree(t *testing.T, c *framework.Client, p string, r *recorder, opts ...cache.TreeOption) *cache.Tree {
	t.Helper()
	tr, err := cache.NewTree(c, p, opts...)
	if err != nil {
		t.Fatalf("NewTree: %v", err)
	}
	if r != nil {
		tr.AddListener(r.listen)
	}
	t.Cleanup(func() { tr.Close() })
	if err := tr.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return tr
}
