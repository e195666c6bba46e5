package integration

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-zookeeper/zk"
)

// Bad input to the caches: each gets a clear error, and nothing is left
// running (goleak).

func TestCacheBadInput_Arguments(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	for _, p := range []string{"", "relative", "/trailing/", "/a//b", "/a/./b", "/a/../b", "/nul\x00", "/ctl\x01"} {
		_, errNode := cache.NewNode(c, p)
		_, errKids := cache.NewChildren(c, p)
		_, errTree := cache.NewTree(c, p)
		for _, err := range []error{errNode, errKids, errTree} {
			if !errors.Is(err, cache.ErrInvalidArgument) || !errors.Is(err, framework.ErrInvalidPath) {
				t.Errorf("path %q: %v, want ErrInvalidArgument and framework.ErrInvalidPath", p, err)
			}
		}
	}
	if _, err := cache.NewTree(c, "/a", cache.WithMaxDepth(-1)); !errors.Is(err, cache.ErrInvalidArgument) {
		t.Errorf("depth -1: %v", err)
	}
	if _, err := cache.NewTree(nil, "/a"); !errors.Is(err, cache.ErrInvalidArgument) || !errors.Is(err, framework.ErrNilClient) {
		t.Errorf("nil client: %v", err)
	}
	if _, err := c.Watch().WithMode(framework.WatchTree).WithMaxDepth(-3).ForPath(t.Context(), "/a"); !errors.Is(err, framework.ErrInvalidArgument) {
		t.Errorf("watch depth -3: %v", err)
	}
}

func TestCacheBadInput_Lifecycle(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p, "x")
	tr, err := cache.NewTree(c, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Get(p); !errors.Is(err, cache.ErrNotStarted) {
		t.Errorf("Get before Start: %v", err)
	}
	if _, err := tr.Children(p); !errors.Is(err, cache.ErrNotStarted) {
		t.Errorf("Children before Start: %v", err)
	}
	if err := tr.Start(nil); !errors.Is(err, cache.ErrInvalidArgument) { //nolint:staticcheck // nil ctx on purpose
		t.Errorf("Start(nil): %v", err)
	}
	if err := tr.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(t.Context()); !errors.Is(err, cache.ErrAlreadyStarted) {
		t.Errorf("second Start: %v", err)
	}
	if e, err := tr.Get(p); err != nil || string(e.Data) != "x" {
		t.Errorf("Get = %q, %v", e.Data, err)
	}
	for range 2 {
		if err := tr.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if _, err := tr.Get(p); !errors.Is(err, cache.ErrClosed) {
		t.Errorf("Get after Close: %v", err)
	}
	if err := tr.Start(t.Context()); !errors.Is(err, cache.ErrClosed) {
		t.Errorf("Start after Close: %v", err)
	}

	// A Start that cannot finish (its ctx ends first) closes the cache.
	n, err := cache.NewNode(c, p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := n.Start(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a done ctx: %v", err)
	}

	// A client that is closed, or not started.
	closed := startClient(t, builder(t, fwShared(t)))
	closed.Close()
	kids, _ := cache.NewChildren(closed, p)
	if err := kids.Start(t.Context()); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("Start on a closed client: %v", err)
	}
	idle, err := builder(t, fwShared(t)).Build()
	if err != nil {
		t.Fatal(err)
	}
	kids, _ = cache.NewChildren(idle, p)
	if err := kids.Start(t.Context()); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Start on a client not started: %v", err)
	}

	// The client closing under a running cache ends it.
	short := startClient(t, builder(t, fwShared(t)))
	live := startNode(t, short, p, nil)
	short.Close()
	if err := live.Close(); err != nil {
		t.Errorf("Close after the client closed: %v", err)
	}
}

// A listener may Close its own cache: Close does not wait for the call
// it is made from.
func TestCacheBadInput_CloseFromListener(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	n, err := cache.NewNode(c, p)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	n.AddListener(func(ev cache.Event) {
		if ev.Type == cache.NodeAdded {
			closed <- n.Close()
		}
	})
	if err := n.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, p, "")
	if err := <-closed; err != nil {
		t.Errorf("Close from a listener: %v", err)
	}
}

// The largest node ZooKeeper stores (its jute.maxbuffer, 1 MiB, less room
// for the rest of the request) is cached whole. A larger write fails at
// the writer, and the cache keeps the node's last version and goes on.
func TestCacheBadInput_NodeTooLarge(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p, "small")
	r := newRecorder(false)
	n := startNode(t, c, p, r)
	r.expect(t, cache.NodeAdded, p, "small")
	r.expect(t, cache.Initialized, "")

	big := bytes.Repeat([]byte("x"), 1<<20-1<<10)
	if _, err := c.SetData().ForPath(t.Context(), p, big); err != nil {
		t.Fatalf("set %d bytes: %v", len(big), err)
	}
	ev := r.expect(t, cache.NodeUpdated, p)
	if !bytes.Equal(ev.Entry.Data, big) || ev.Entry.Stat.DataLength != int32(len(big)) {
		t.Errorf("cached %d bytes (stat %d), want %d", len(ev.Entry.Data), ev.Entry.Stat.DataLength, len(big))
	}

	writer := newClient(t)
	_, err := writer.SetData().ForPath(t.Context(), p, make([]byte, 2<<20))
	if err == nil {
		t.Fatal("a 2 MiB write succeeded")
	}
	t.Logf("a 2 MiB write: %v", err)
	mustSet(t, c, p, "after")
	r.expect(t, cache.NodeUpdated, p, "after")
	if e, err := n.Current(); err != nil || e.Stat.Version != 2 {
		t.Errorf("Current = version %d, %v; want version 2", e.Stat.Version, err)
	}
}

// A node the cache's client may not read (its ACL lets only another user
// read it) is reported with an Error event matching zk.ErrNoAuth; the rest
// of the tree loads, and the cache goes on.
func TestCacheBadInput_UnreadableNode(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p+"/open", "o")
	secret := zk.DigestACL(zk.PermAll, "someone", "else")
	if _, err := c.Create().WithACL(secret...).ForPath(t.Context(), p+"/secret", []byte("s")); err != nil {
		t.Fatal(err)
	}
	r := newRecorder(false)
	tr := startTree(t, c, p, r)
	// Start returns once the view is loaded; listeners hear of it on
	// their own goroutine, so read events up to Initialized.
	var failed *cache.Event
	for {
		ev := r.take(t)
		if ev.Type == cache.Error {
			failed = &ev
		}
		if ev.Type == cache.Initialized {
			break
		}
	}
	if failed == nil || failed.Entry.Path != p+"/secret" || !errors.Is(failed.Err, zk.ErrNoAuth) {
		t.Fatalf("no Error event for %s/secret matching zk.ErrNoAuth: %s", p, r.describe())
	}
	if _, err := tr.Get(p + "/secret"); !errors.Is(err, cache.ErrNoNode) {
		t.Errorf("Get of the unreadable node: %v", err)
	}
	if e, err := tr.Get(p + "/open"); err != nil || string(e.Data) != "o" {
		t.Errorf("Get(open) = %q, %v", e.Data, err)
	}
	mustSet(t, c, p+"/open", "still followed")
	for {
		ev := r.take(t)
		if ev.Type == cache.NodeUpdated {
			if ev.Entry.Path != p+"/open" || string(ev.Entry.Data) != "still followed" {
				t.Errorf("event %s %s %q", ev.Type, ev.Entry.Path, ev.Entry.Data)
			}
			break
		}
	}
	// Clean up with the right to do so: delete needs no read right.
	if err := c.Delete().ForPath(t.Context(), p+"/secret"); err != nil {
		t.Fatal(err)
	}
}
