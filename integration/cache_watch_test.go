package integration

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// Tests of the client's lasting watches (framework.Client.Watch), which
// the caches are built on.

// nextWatch takes the next event of a lasting watch.
func nextWatch(t *testing.T, ch <-chan framework.WatchEvent) framework.WatchEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed")
		}
		return ev
	case <-time.After(cacheWait):
		t.Fatalf("no watch event within %v", cacheWait)
	}
	panic("unreachable")
}

// expectWatch takes the next event and checks it: "TYPE path" or
// "TYPE path data".
func expectWatch(t *testing.T, ch <-chan framework.WatchEvent, want string) framework.WatchEvent {
	t.Helper()
	ev := nextWatch(t, ch)
	got := ev.Type.String() + " " + ev.Path
	if ev.Type == framework.WatchCreated || ev.Type == framework.WatchChanged {
		got += " " + string(ev.Data)
	}
	if ev.Type == framework.WatchChildrenChanged {
		got += fmt.Sprintf(" %q", ev.Children)
	}
	if got != want {
		t.Fatalf("watch event %q, want %q", got, want)
	}
	return ev
}

func TestCacheWatch_NodeLifecycle(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	ch, err := c.Watch().ForPath(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	expectWatch(t, ch, "SYNCED "+p) // absent: nothing to report
	mustCreate(t, c, p, "a")
	expectWatch(t, ch, "CREATED "+p+" a")
	mustSet(t, c, p, "b")
	ev := expectWatch(t, ch, "CHANGED "+p+" b")
	if ev.Stat.Version != 1 {
		t.Errorf("version %d, want 1", ev.Stat.Version)
	}
	mustDelete(t, c, p)
	expectWatch(t, ch, "DELETED "+p)
	mustCreate(t, c, p, "c")
	expectWatch(t, ch, "CREATED "+p+" c")
}

func TestCacheWatch_Children(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/b", "")
	ch, err := c.Watch().WithMode(framework.WatchChildren).ForPath(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	expectWatch(t, ch, "CHILDREN_CHANGED "+p+` ["b"]`)
	expectWatch(t, ch, "SYNCED "+p)
	mustCreate(t, c, p+"/a", "")
	expectWatch(t, ch, "CHILDREN_CHANGED "+p+` ["a" "b"]`)
	mustSet(t, c, p+"/a", "data changes are not children changes")
	mustDelete(t, c, p) // its children first: the list may shrink on the way
	for ev := nextWatch(t, ch); ev.Stat != nil; ev = nextWatch(t, ch) {
		if ev.Type != framework.WatchChildrenChanged || len(ev.Children) > 1 {
			t.Fatalf("event %s %q while the node is deleted", ev.Type, ev.Children)
		}
	}
	mustCreate(t, c, p, "")
	expectWatch(t, ch, "CHILDREN_CHANGED "+p+" []")
	mustCreate(t, c, p+"/z", "")
	expectWatch(t, ch, "CHILDREN_CHANGED "+p+` ["z"]`)
}

func TestCacheWatch_TreeDepthAndNamespace(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	ns := startClient(t, builder(t, fwShared(t)).Namespace(p[1:]))
	mustCreate(t, c, p+"/a/b/c", "deep")
	ch, err := ns.Watch().WithMode(framework.WatchTree).WithMaxDepth(2).ForPath(t.Context(), "/a")
	if err != nil {
		t.Fatal(err)
	}
	expectWatch(t, ch, "CREATED /a ")
	expectWatch(t, ch, "CREATED /a/b ")
	expectWatch(t, ch, "CREATED /a/b/c deep")
	expectWatch(t, ch, "SYNCED /a")
	mustCreate(t, c, p+"/a/b/c/d", "below the depth")
	mustSet(t, c, p+"/a/b/c", "deeper")
	expectWatch(t, ch, "CHANGED /a/b/c deeper")
	mustDelete(t, c, p+"/a/b")
	expectWatch(t, ch, "DELETED /a/b/c")
	expectWatch(t, ch, "DELETED /a/b")
}

// A one-shot watch's event path is the caller's, without the namespace
// (it was the server's path before lasting watches came).
func TestCacheWatch_OneShotPathRelativeToNamespace(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	ns := startClient(t, builder(t, fwShared(t)).Namespace(p[1:]))
	mustCreate(t, c, p+"/x", "1")
	_, _, w, err := ns.GetData().ForPathW(t.Context(), "/x")
	if err != nil {
		t.Fatal(err)
	}
	mustSet(t, c, p+"/x", "2")
	select {
	case ev := <-w:
		if ev.Path != "/x" || ev.Type != zk.EventNodeDataChanged {
			t.Errorf("event %v at %q, want a data change at /x", ev.Type, ev.Path)
		}
	case <-time.After(cacheWait):
		t.Fatal("no event")
	}
}

// A receiver that does not read holds back only its own watch: the client
// and another watch go on; when it reads, it sees the changes coalesced,
// in version order, ending with the last.
func TestCacheWatch_SlowReceiverCoalesces(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p, "0")
	slow, err := c.Watch().ForPath(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := c.Watch().ForPath(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	expectWatch(t, fast, "CREATED "+p+" 0")
	expectWatch(t, fast, "SYNCED "+p)
	const writes = 300
	for i := 1; i <= writes; i++ {
		mustSet(t, c, p, fmt.Sprint(i))
	}
	// The fast receiver gets to the last version while the slow one
	// reads nothing.
	for last := int32(0); last < writes; {
		ev := nextWatch(t, fast)
		if ev.Stat.Version <= last {
			t.Fatalf("fast: version %d after %d", ev.Stat.Version, last)
		}
		last = ev.Stat.Version
	}
	var got []int32
	for {
		ev := nextWatch(t, slow)
		if ev.Type == framework.WatchSynced {
			continue
		}
		got = append(got, ev.Stat.Version)
		if ev.Stat.Version == writes {
			break
		}
	}
	if !slices.IsSorted(got) || len(got) >= writes {
		t.Errorf("slow receiver saw versions %v: want increasing and coalesced", got)
	}
	t.Logf("the slow receiver saw %d events for %d writes", len(got), writes)
}

// After a session expiry, the watch reads everything again and sends the
// differences, then WatchResynced: the ephemeral node of the old session
// is gone, and changes made while the client was away are reported.
func TestCacheWatch_ResyncAfterExpiry(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	w := newClient(t)
	mustCreate(t, w, p+"/keep", "k")
	mustCreate(t, w, p+"/change", "1")
	mustCreate(t, w, p+"/gone", "g")
	if _, err := c.Create().WithMode(framework.Ephemeral).ForPath(t.Context(), p+"/mine", nil); err != nil {
		t.Fatal(err)
	}
	ch, err := c.Watch().WithMode(framework.WatchTree).ForPath(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if ev := nextWatch(t, ch); ev.Type == framework.WatchSynced {
			break
		}
	}
	// Cut the client off, change things, expire its session, let it back.
	proxyless := c.ZooKeeper()
	if err := zktest.ExpireSession(t.Context(), fwShared(t), proxyless); err != nil {
		t.Fatal(err)
	}
	mustSet(t, w, p+"/change", "2")
	mustDelete(t, w, p+"/gone")
	mustCreate(t, w, p+"/new", "n")
	var got []string
	for {
		ev := nextWatch(t, ch)
		got = append(got, ev.Type.String()+" "+ev.Path)
		if ev.Type == framework.WatchResynced {
			break
		}
	}
	// The changes may come as plain events (the watches fire before the
	// client learns of the expiry) or in the resync: either way exactly
	// once each, and the resync comes last.
	slices.Sort(got)
	want := []string{"CHANGED " + p + "/change", "CREATED " + p + "/new", "DELETED " + p + "/gone",
		"DELETED " + p + "/mine", "RESYNCED " + p}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// The channel is closed when ctx ends and when the client closes, with no
// goroutine left.
func TestCacheWatch_EndsWithCtxAndClient(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/a", "")
	ctx, cancel := context.WithCancel(t.Context())
	ch, err := c.Watch().WithMode(framework.WatchTree).ForPath(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	cancel() // unread events do not hold the watch
	drain(t, ch)

	c2 := startClient(t, builder(t, fwShared(t)))
	ch, err = c2.Watch().WithMode(framework.WatchTree).ForPath(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	expectWatch(t, ch, "CREATED "+p+" ")
	c2.Close()
	drain(t, ch)
	if _, err := c2.Watch().ForPath(t.Context(), p); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("Watch after Close: %v", err)
	}
	if _, err := c.Watch().ForPath(nil, p); !errors.Is(err, framework.ErrInvalidArgument) { //nolint:staticcheck // nil ctx on purpose
		t.Errorf("Watch with a nil ctx: %v", err)
	}
	if _, err := c.Watch().ForPath(t.Context(), p+"/"); !errors.Is(err, framework.ErrInvalidPath) {
		t.Errorf("Watch of a bad path: %v", err)
	}
}

// drain reads ch until it is closed.
func drain(t *testing.T, ch <-chan framework.WatchEvent) {
	t.Helper()
	deadline := time.After(cacheWait)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("watch channel not closed")
		}
	}
}
