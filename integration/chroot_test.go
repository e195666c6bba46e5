package integration

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// Issue 19: a chroot suffix in the connect string, as ZooKeeper's and
// Curator's: paths, results and watch events are relative to it, and a
// namespace goes below it.

func TestChroot_PathsAreRelative(t *testing.T) {
	securityNoLeaks(t)
	srv := zktest.Shared(t)
	ctx := t.Context()
	admin := newClient(t) // sees the whole tree
	root := "/" + unsafeChars.ReplaceAllString(t.Name(), "_")
	chroot := root + "/services"
	if _, err := admin.Create().CreatingParentsIfNeeded().ForPath(ctx, chroot, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // t.Context() has ended by now
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := admin.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, root); err != nil {
			t.Errorf("delete %s: %v", root, err)
		}
	})

	c := startClient(t, builder(t, srv.ConnectString()+chroot).Namespace("shop"))
	if c.Chroot() != chroot || c.Namespace() != "shop" {
		t.Fatalf("Chroot() = %q, Namespace() = %q; want %q, shop", c.Chroot(), c.Namespace(), chroot)
	}

	// Create, with parents: chroot first, then the namespace.
	p, err := c.Create().CreatingParentContainersIfNeeded().ForPath(ctx, "/orders/o1", []byte("v1"))
	if err != nil || p != "/orders/o1" {
		t.Fatalf("create /orders/o1 = %q, %v", p, err)
	}
	if data, _, err := admin.GetData().ForPath(ctx, chroot+"/shop/orders/o1"); err != nil || string(data) != "v1" {
		t.Fatalf("the node on the server at %s/shop/orders/o1: %q, %v", chroot, data, err)
	}
	seq, err := c.Create().WithMode(framework.PersistentSequential).WithProtection().ForPath(ctx, "/orders/seq-", nil)
	if err != nil || !strings.HasPrefix(seq, "/orders/_c_") {
		t.Fatalf("protected sequential create = %q, %v; want a path relative to the chroot and namespace", seq, err)
	}
	if kids, err := c.GetChildren().ForPath(ctx, "/"); err != nil || !slices.Equal(kids, []string{"orders"}) {
		t.Fatalf("children of / = %q, %v; want [orders] (the namespace's children)", kids, err)
	}

	// A one-shot watch's event path is relative too.
	_, _, ch, err := c.GetData().ForPathW(ctx, "/orders/o1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SetData().ForPath(ctx, chroot+"/shop/orders/o1", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-ch:
		if ev.Type != zk.EventNodeDataChanged || ev.Path != "/orders/o1" {
			t.Fatalf("watch event %v on %q; want a data change on /orders/o1", ev.Type, ev.Path)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event")
	}

	// So is a lasting watch's.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := c.Watch().ForPath(wctx, "/orders/o1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.SetData().ForPath(ctx, chroot+"/shop/orders/o1", []byte("v3")); err != nil {
		t.Fatal(err)
	}
	for done := false; !done; {
		select {
		case ev := <-events:
			if ev.Path != "/orders/o1" {
				t.Fatalf("lasting watch event %v on %q; want /orders/o1", ev.Type, ev.Path)
			}
			// The first read may already see v3 (WatchCreated), or the
			// change comes as WatchChanged.
			done = string(ev.Data) == "v3"
		case <-time.After(10 * time.Second):
			t.Fatal("no lasting watch event for the change")
		}
	}
	cancel()

	// A transaction's results, and a recipe.
	res, err := c.Transaction().Create("/orders/t", nil, framework.Persistent).SetData("/orders/o1", []byte("v4"), -1).Commit(ctx)
	if err != nil || res[0].Path != "/orders/t" {
		t.Fatalf("transaction = %+v, %v", res, err)
	}
	h, err := newMutex(t, c, "/locks/stock").Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h.Node(), "/locks/stock/_c_") {
		t.Errorf("the lock node %q should be relative to the chroot and namespace", h.Node())
	}
	if stat, err := admin.CheckExists().ForPath(ctx, chroot+"/shop"+h.Node()); err != nil || stat == nil {
		t.Errorf("the lock node on the server: %v, %v", stat, err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// A chroot without a namespace: "/" is the chroot, which the client
	// never creates nor deletes.
	plain := startClient(t, builder(t, srv.ConnectString()+chroot))
	if _, err := plain.Create().ForPath(ctx, "/x", nil); err != nil {
		t.Fatal(err)
	}
	if kids, err := plain.GetChildren().ForPath(ctx, "/"); err != nil || !slices.Contains(kids, "x") || !slices.Contains(kids, "shop") {
		t.Fatalf("children of the chroot = %q, %v; want x and shop", kids, err)
	}
	if err := plain.Delete().ForPath(ctx, "/"); !errors.Is(err, framework.ErrInvalidPath) {
		t.Errorf("delete of the chroot itself: %v; want ErrInvalidPath", err)
	}
}

func TestChroot_MissingChrootNamesIt(t *testing.T) {
	securityNoLeaks(t)
	srv := zktest.Shared(t)
	ctx := t.Context()
	admin := newClient(t)
	chroot := "/" + unsafeChars.ReplaceAllString(t.Name(), "_") + "/absent"
	// As with ZooKeeper and Curator, the client starts: the chroot is only
	// a prefix. Every operation below it finds no node.
	c := startClient(t, builder(t, srv.ConnectString()+chroot).Namespace("app"))
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, zk.ErrNoNode) || !errors.Is(err, framework.ErrNoChroot) {
			t.Errorf("%s under a missing chroot: %v; want zk.ErrNoNode and framework.ErrNoChroot", what, err)
			return
		}
		if !strings.Contains(err.Error(), chroot) {
			t.Errorf("%s: %q should name the chroot %s", what, err, chroot)
		}
	}
	_, err := c.Create().CreatingParentContainersIfNeeded().ForPath(ctx, "/a/b", nil)
	check("create with parents", err)
	_, err = c.Create().WithMode(framework.EphemeralSequential).WithProtection().ForPath(ctx, "/a", nil)
	check("protected create", err)
	_, _, err = c.GetData().ForPath(ctx, "/a")
	check("get", err)
	_, err = c.SetData().ForPath(ctx, "/a", nil)
	check("set", err)
	_, err = c.GetChildren().ForPath(ctx, "/")
	check("children", err)
	err = c.Delete().ForPath(ctx, "/a")
	check("delete", err)
	_, err = c.Transaction().Create("/a", nil, framework.Persistent).Commit(ctx)
	check("transaction", err)
	m, err := mutex.New(c, "/locks/x")
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Acquire(ctx)
	check("mutex acquire", err)

	// Nothing was made, not even the chroot's parents.
	root, _ := framework.SplitPath(chroot)
	if stat, err := admin.CheckExists().ForPath(ctx, root); err != nil || stat != nil {
		t.Errorf("%s after the failed operations: %v, %v; want no node", root, stat, err)
	}
}
