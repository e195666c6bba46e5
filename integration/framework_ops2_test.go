package integration

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// Issue 32, item 1: GetACL/SetACL, OrSetData, a create that returns its
// stat, CheckExists().CreatingParentContainersIfNeeded(), transactions and
// containers or TTL nodes, UsingNamespace and DontUseContainerParents.

// opSetACL is ZooKeeper's opcode of setACL, for the proxy.
const opSetACL int32 = 7

// ops2Chroot makes a chroot node for the test, and returns the connect
// string with it and the chroot; a raw connection observes the server.
func ops2Chroot(t *testing.T) (connect, chroot string, obs *zk.Conn) {
	t.Helper()
	obs = fwRawConn(t, fwShared(t))
	chroot = testPath(t)
	for _, p := range []string{"/it", chroot} {
		if _, err := obs.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	cleaner := newClient(t)
	t.Cleanup(func() {
		cleaner.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(t.Context(), chroot)
	})
	return fwShared(t) + chroot, chroot, obs
}

func TestFrameworkOps2_ACLThroughChrootAndNamespace(t *testing.T) {
	securityNoLeaks(t)
	connect, chroot, obs := ops2Chroot(t)
	c := startClient(t, builder(t, connect).Namespace("ns").Authorization("digest", []byte("admin:secret")))
	stranger := startClient(t, builder(t, connect).Namespace("ns"))
	ctx := t.Context()
	if _, err := c.Create().CreatingParentContainersIfNeeded().ForPath(ctx, "/acl/node", []byte("x")); err != nil {
		t.Fatal(err)
	}
	server := chroot + "/ns/acl/node"

	acl, stat, err := c.GetACL().ForPath(ctx, "/acl/node")
	if err != nil || !slices.Equal(acl, zk.WorldACL(zk.PermAll)) || stat == nil || stat.Aversion != 0 {
		t.Fatalf("GetACL of a new node = %v, %+v, %v; want world:anyone all, aversion 0", acl, stat, err)
	}

	owner := zk.DigestACL(zk.PermAll, "admin", "secret")
	want := append(owner, zk.WorldACL(zk.PermRead)...)
	stat, err = c.SetACL().WithVersion(0).ForPath(ctx, "/acl/node", want...)
	if err != nil || stat == nil || stat.Aversion != 1 {
		t.Fatalf("SetACL(version 0) = %+v, %v; want aversion 1", stat, err)
	}
	// ZooKeeper 3.8 hides a digest's hash from a reader without ADMIN.
	if got, _, err := obs.GetACL(server); err != nil || len(got) != 2 || got[0].Scheme != "digest" || got[1] != want[1] {
		t.Errorf("server ACL at %s = %v, %v; want %v", server, got, err, want)
	}
	if got, _, err := c.GetACL().ForPath(ctx, "/acl/node"); err != nil || !slices.Equal(got, want) {
		t.Errorf("GetACL after SetACL = %v, %v; want %v", got, err, want)
	}

	if _, err := c.SetACL().WithVersion(0).ForPath(ctx, "/acl/node", want...); !errors.Is(err, zk.ErrBadVersion) {
		t.Errorf("SetACL with a stale version = %v; want zk.ErrBadVersion", err)
	}
	if _, err := stranger.SetACL().ForPath(ctx, "/acl/node", zk.WorldACL(zk.PermAll)...); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("SetACL without ADMIN = %v; want zk.ErrNoAuth", err)
	}
	if _, _, err := stranger.GetACL().ForPath(ctx, "/acl/node"); err != nil {
		t.Errorf("GetACL needs no permission: %v", err)
	}
	if _, _, err := c.GetACL().ForPath(ctx, "/acl/missing"); !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("GetACL of a missing node = %v; want zk.ErrNoNode", err)
	}
	if _, err := c.SetACL().ForPath(ctx, "/acl/missing", want...); !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("SetACL of a missing node = %v; want zk.ErrNoNode", err)
	}

	// Input is checked before any I/O.
	for name, call := range map[string]func() error{
		"empty ACL": func() error { _, err := c.SetACL().ForPath(ctx, "/acl/node"); return err },
		"no scheme": func() error { _, err := c.SetACL().ForPath(ctx, "/acl/node", zk.ACL{Perms: zk.PermAll}); return err },
		"bad perms": func() error {
			_, err := c.SetACL().ForPath(ctx, "/acl/node", zk.ACL{Scheme: "world", ID: "anyone", Perms: 64})
			return err
		},
		"bad path set": func() error { _, err := c.SetACL().ForPath(ctx, "acl", want...); return err },
		"bad path get": func() error { _, _, err := c.GetACL().ForPath(ctx, "/acl/"); return err },
	} {
		if err := call(); !errors.Is(err, framework.ErrInvalidArgument) && !errors.Is(err, framework.ErrInvalidPath) {
			t.Errorf("%s: %v; want ErrInvalidArgument or ErrInvalidPath", name, err)
		}
	}
	var zero framework.Client
	if _, _, err := zero.GetACL().ForPath(ctx, "/a"); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("GetACL on a zero Client = %v; want ErrNotStarted", err)
	}
	var nilClient *framework.Client
	if _, err := nilClient.SetACL().ForPath(ctx, "/a", want...); !errors.Is(err, framework.ErrNilClient) {
		t.Errorf("SetACL on a nil Client = %v; want ErrNilClient", err)
	}
}

func TestFrameworkOps2_LostReplySetACLWithVersionIsIndeterminate(t *testing.T) {
	f := newReplyFixture(t)
	p := f.parent + "/node"
	if _, err := f.obs.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var err error
	f.lose(t, func() {
		_, err = f.c.SetACL().WithVersion(0).ForPath(t.Context(), p, zk.WorldACL(zk.PermRead|zk.PermWrite|zk.PermAdmin)...)
	}, opSetACL)
	if !errors.Is(err, framework.ErrIndeterminate) || !errors.Is(err, zk.ErrBadVersion) {
		t.Errorf("SetACL(version 0) whose reply was lost = %v; want ErrIndeterminate wrapping zk.ErrBadVersion "+
			"(its retry meets the first attempt's new ACL version)", err)
	}
	if _, stat, gerr := f.obs.GetACL(p); gerr != nil || stat.Aversion != 1 {
		t.Errorf("server ACL version %d (%v), want the lost write applied once", stat.Aversion, gerr)
	}
}

func TestFrameworkOps2_CreateOrSetDataAndStat(t *testing.T) {
	securityNoLeaks(t)
	connect, chroot, obs := ops2Chroot(t)
	c := startClient(t, builder(t, connect).Namespace("ns"))
	ctx := t.Context()

	p, stat, err := c.Create().CreatingParentsIfNeeded().ForPathStat(ctx, "/o/node", []byte("one"))
	if err != nil || p != "/o/node" || stat == nil || stat.Version != 0 || stat.DataLength != 3 || stat.Czxid == 0 {
		t.Fatalf("ForPathStat of a new node = %q, %+v, %v; want /o/node at version 0 with 3 bytes", p, stat, err)
	}
	if _, raw, _ := obs.Exists(chroot + "/ns/o/node"); raw == nil || raw.Czxid != stat.Czxid {
		t.Errorf("the returned stat is not the server's: %+v vs %+v", stat, raw)
	}

	if _, err := c.Create().ForPath(ctx, "/o/node", []byte("two")); !errors.Is(err, zk.ErrNodeExists) {
		t.Errorf("a plain create of an existing node = %v; want zk.ErrNodeExists", err)
	}
	p, stat, err = c.Create().OrSetData().ForPathStat(ctx, "/o/node", []byte("two"))
	if err != nil || p != "/o/node" || stat == nil || stat.Version != 1 {
		t.Errorf("OrSetData on an existing node = %q, %+v, %v; want its data written, version 1", p, stat, err)
	}
	if _, err := c.Create().OrSetDataWithVersion(0).ForPath(ctx, "/o/node", []byte("three")); !errors.Is(err, zk.ErrBadVersion) {
		t.Errorf("OrSetDataWithVersion(0) at version 1 = %v; want zk.ErrBadVersion", err)
	}
	if p, err := c.Create().OrSetDataWithVersion(1).ForPath(ctx, "/o/node", []byte("three")); err != nil || p != "/o/node" {
		t.Errorf("OrSetDataWithVersion(1) at version 1 = %q, %v", p, err)
	}
	if p, err := c.Create().OrSetData().CreatingParentContainersIfNeeded().ForPath(ctx, "/o/new/leaf", []byte("new")); err != nil || p != "/o/new/leaf" {
		t.Errorf("OrSetData of a missing node = %q, %v; want it created", p, err)
	}
	for q, want := range map[string]string{"/ns/o/node": "three", "/ns/o/new/leaf": "new"} {
		if data, _, err := obs.Get(chroot + q); err != nil || string(data) != want {
			t.Errorf("server %s = %q, %v; want %q", q, data, err, want)
		}
	}

	p, stat, err = c.Create().WithMode(framework.EphemeralSequential).ForPathStat(ctx, "/o/seq-", nil)
	if err != nil || stat == nil || stat.EphemeralOwner != c.SessionID() {
		t.Errorf("ForPathStat of an ephemeral sequential = %q, %+v, %v; want this session's node", p, stat, err)
	}
	if _, err := c.Create().OrSetData().WithMode(framework.PersistentSequential).ForPath(ctx, "/o/s-", nil); !errors.Is(err, framework.ErrInvalidArgument) {
		t.Errorf("OrSetData with a sequential mode = %v; want ErrInvalidArgument", err)
	}
	if _, err := c.Create().OrSetData().WithProtection().ForPath(ctx, "/o/p", nil); !errors.Is(err, framework.ErrInvalidArgument) {
		t.Errorf("OrSetData with protection = %v; want ErrInvalidArgument", err)
	}
}

// ZooKeeper's stat does not tell a container from a persistent node: the
// reaper does. It removes a container once it has had a child and has none
// (every znode.container.checkIntervalMs, 500 ms in the harness), and
// never a persistent node.
func TestFrameworkOps2_CheckExistsCreatingParentContainers(t *testing.T) {
	securityNoLeaks(t)
	connect, chroot, obs := ops2Chroot(t)
	ctx := t.Context()
	containers := startClient(t, builder(t, connect).Namespace("a"))
	persistent := startClient(t, builder(t, connect).Namespace("b").DontUseContainerParents())
	for _, c := range []*framework.Client{containers, persistent} {
		stat, err := c.CheckExists().CreatingParentContainersIfNeeded().ForPath(ctx, "/x/y/z")
		if err != nil || stat != nil {
			t.Fatalf("CheckExists of a missing node = %+v, %v; want nil, nil", stat, err)
		}
		if _, err := c.CheckExists().CreatingParentContainersIfNeeded().ForPath(ctx, "p"); !errors.Is(err, framework.ErrInvalidPath) {
			t.Errorf("a relative path = %v; want ErrInvalidPath", err)
		}
	}
	for _, ns := range []string{"/a", "/b"} {
		for _, q := range []string{ns, ns + "/x", ns + "/x/y"} {
			if ok, _, err := obs.Exists(chroot + q); err != nil || !ok {
				t.Errorf("parent %s: %v, %v; want it made", q, ok, err)
			}
		}
		if ok, _, _ := obs.Exists(chroot + ns + "/x/y/z"); ok {
			t.Errorf("CheckExists created %s/x/y/z itself", ns)
		}
	}
	// A child come and gone lets the reaper take the containers.
	for _, c := range []*framework.Client{containers, persistent} {
		if _, err := c.Create().ForPath(ctx, "/x/y/z", nil); err != nil {
			t.Fatal(err)
		}
		if stat, err := c.CheckExists().CreatingParentContainersIfNeeded().ForPath(ctx, "/x/y/z"); err != nil || stat == nil {
			t.Errorf("CheckExists of an existing node = %+v, %v", stat, err)
		}
		if err := c.Delete().ForPath(ctx, "/x/y/z"); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, func() bool {
		ok, _, err := obs.Exists(chroot + "/a")
		return err == nil && !ok
	}, "the reaper removes the emptied container parents, up to the namespace node")
	for _, q := range []string{"/b", "/b/x", "/b/x/y"} {
		if ok, _, err := obs.Exists(chroot + q); err != nil || !ok {
			t.Errorf("persistent parent %s after the reaper ran: %v, %v; want it kept (DontUseContainerParents)", q, ok, err)
		}
	}
}

// Issue 32: a transaction creates container and TTL nodes as Curator's
// do (createContainer and createTTL operations, which go-zookeeper's Multi
// cannot send), with the rest of the multi's operations beside them.
func TestFrameworkOps2_TransactionContainerAndTTL(t *testing.T) {
	securityNoLeaks(t)
	srv := zktest.StartWith(t, zktest.Config{ExtraConfig: "extendedTypesEnabled=true\n"})
	c := startClient(t, builder(t, srv.ConnectString()).Namespace("tx"))
	ctx := t.Context()
	if _, err := c.Create().ForPath(ctx, "/old", []byte("v0")); err != nil {
		t.Fatal(err)
	}
	res, err := c.Transaction().
		Create("/box", nil, framework.Container).
		Create("/box/item", []byte("i"), framework.Persistent).
		CreateTTL("/ttl", []byte("t"), framework.PersistentWithTTL, time.Hour).
		CreateTTL("/seq-", nil, framework.PersistentSequentialWithTTL, time.Minute).
		SetData("/old", []byte("v1"), 0).
		Check("/old", 1).
		Delete("/old", 1).
		Commit(ctx)
	if err != nil {
		t.Fatalf("commit = %v", err)
	}
	if len(res) != 7 || res[0].Path != "/box" || res[2].Path != "/ttl" || !strings.HasPrefix(res[3].Path, "/seq-00000") ||
		res[4].Stat == nil || res[4].Stat.Version != 1 {
		t.Fatalf("results = %+v", res)
	}
	for _, p := range []string{"/box", "/box/item", "/ttl", res[3].Path} {
		if stat, err := c.CheckExists().ForPath(ctx, p); err != nil || stat == nil {
			t.Errorf("%s after commit: %v, %v", p, stat, err)
		}
	}
	if stat, _ := c.CheckExists().ForPath(ctx, "/old"); stat != nil {
		t.Error("/old survived the transaction's delete")
	}
	// The server shows a container's ephemeralOwner as 0, as a persistent
	// node's: what tells it apart is that the reaper removes it once
	// emptied (the harness checks every 500 ms), and leaves /ttl (a TTL
	// of an hour) alone.
	if err := c.Delete().ForPath(ctx, "/box/item"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() bool {
		stat, err := c.CheckExists().ForPath(ctx, "/box")
		return err == nil && stat == nil
	}, "the reaper removes the emptied container made by the transaction")
	if stat, err := c.CheckExists().ForPath(ctx, "/ttl"); err != nil || stat == nil {
		t.Errorf("/ttl after the reaper ran: %v, %v; want it kept", stat, err)
	}

	// A failing op leaves none of them, and its error is the cause.
	res, err = c.Transaction().
		Create("/box2", nil, framework.Container).
		CreateTTL("/ttl2", nil, framework.PersistentWithTTL, time.Hour).
		Delete("/missing", -1).
		Commit(ctx)
	if !errors.Is(err, framework.ErrNoNode) || len(res) != 3 || !errors.Is(res[2].Err, framework.ErrNoNode) {
		t.Errorf("failing commit = %+v, %v; want ErrNoNode from op 2", res, err)
	}
	for _, p := range []string{"/box2", "/ttl2"} {
		if stat, _ := c.CheckExists().ForPath(ctx, p); stat != nil {
			t.Errorf("%s made by a failed transaction", p)
		}
	}

	// Bad TTLs are refused before anything is sent.
	for name, tx := range map[string]framework.Transaction{
		"TTL mode without a TTL": c.Transaction().Create("/x", nil, framework.PersistentWithTTL),
		"zero TTL":               c.Transaction().CreateTTL("/x", nil, framework.PersistentWithTTL, 0),
		"TTL on a plain mode":    c.Transaction().CreateTTL("/x", nil, framework.Persistent, time.Hour),
		"over MaxTTL":            c.Transaction().CreateTTL("/x", nil, framework.PersistentWithTTL, framework.MaxTTL+time.Millisecond),
	} {
		if _, err := tx.Commit(ctx); !errors.Is(err, framework.ErrInvalidArgument) {
			t.Errorf("%s: %v; want ErrInvalidArgument", name, err)
		}
	}
	if stat, _ := c.CheckExists().ForPath(ctx, "/x"); stat != nil {
		t.Error("a refused transaction made a node")
	}

	// A server without extendedTypesEnabled refuses the TTL op.
	plain := startClient(t, builder(t, zktest.Shared(t).ConnectString()).Namespace(unsafeChars.ReplaceAllString(t.Name(), "_")))
	_, err = plain.Transaction().Create("/box", nil, framework.Container).
		CreateTTL("/ttl", nil, framework.PersistentWithTTL, time.Hour).Commit(ctx)
	if !errors.Is(err, framework.ErrTTLNotEnabled) {
		t.Errorf("TTL transaction on a server without extended types = %v; want ErrTTLNotEnabled", err)
	}
	if stat, _ := plain.CheckExists().ForPath(ctx, "/box"); stat != nil {
		t.Error("the container of a refused transaction was made")
	}
}

func TestFrameworkOps2_UsingNamespace(t *testing.T) {
	securityNoLeaks(t)
	connect, chroot, obs := ops2Chroot(t)
	c := startClient(t, builder(t, connect).Namespace("first"))
	ctx := t.Context()
	other, err := c.UsingNamespace("second")
	if err != nil || other.Namespace() != "second" || other.Client() != c {
		t.Fatalf("UsingNamespace = %+v, %v", other, err)
	}
	none, err := c.UsingNamespace("")
	if err != nil || none.Namespace() != "" {
		t.Fatalf("UsingNamespace(\"\") = %+v, %v", none, err)
	}
	if _, err := c.UsingNamespace("bad/"); !errors.Is(err, framework.ErrInvalidPath) {
		t.Errorf("UsingNamespace(\"bad/\") = %v; want ErrInvalidPath", err)
	}

	if _, err := c.Create().ForPath(ctx, "/n", []byte("first")); err != nil {
		t.Fatal(err)
	}
	if p, err := other.Create().CreatingParentsIfNeeded().ForPath(ctx, "/d/n", []byte("second")); err != nil || p != "/d/n" {
		t.Fatalf("create through the view = %q, %v", p, err)
	}
	if p, err := none.Create().ForPath(ctx, "/top", []byte("none")); err != nil || p != "/top" {
		t.Fatalf("create through the view without a namespace = %q, %v", p, err)
	}
	for q, want := range map[string]string{"/first/n": "first", "/second/d/n": "second", "/top": "none"} {
		if data, _, err := obs.Get(chroot + q); err != nil || string(data) != want {
			t.Errorf("server %s = %q, %v; want %q", q, data, err, want)
		}
	}

	// Every operation goes through the view's namespace, on the same session.
	if data, _, err := other.GetData().ForPath(ctx, "/d/n"); err != nil || string(data) != "second" {
		t.Errorf("GetData through the view = %q, %v", data, err)
	}
	if kids, err := none.GetChildren().ForPath(ctx, "/"); err != nil || !slices.Contains(kids, "first") || !slices.Contains(kids, "second") {
		t.Errorf("children of the chroot through the view = %v, %v", kids, err)
	}
	if _, err := other.SetData().ForPath(ctx, "/d/n", []byte("2")); err != nil {
		t.Error(err)
	}
	if _, err := other.SetACL().ForPath(ctx, "/d/n", zk.WorldACL(zk.PermAll)...); err != nil {
		t.Error(err)
	}
	if _, s, err := other.GetACL().ForPath(ctx, "/d/n"); err != nil || s.Aversion != 1 {
		t.Errorf("GetACL through the view = %+v, %v", s, err)
	}
	res, err := other.Transaction().Create("/d/t", nil, framework.Ephemeral).Check("/d/n", 1).Commit(ctx)
	if err != nil || res[0].Path != "/d/t" {
		t.Errorf("transaction through the view = %+v, %v", res, err)
	}
	if _, s, _ := obs.Exists(chroot + "/second/d/t"); s == nil || s.EphemeralOwner != c.SessionID() {
		t.Errorf("the view's ephemeral node %+v is not on the client's session %x", s, c.SessionID())
	}
	if stat, err := other.CheckExists().CreatingParentContainersIfNeeded().ForPath(ctx, "/e/f"); err != nil || stat != nil {
		t.Errorf("CheckExists through the view = %+v, %v", stat, err)
	}
	if ok, _, _ := obs.Exists(chroot + "/second/e"); !ok {
		t.Error("CheckExists through the view did not make its parent under the view's namespace")
	}
	if err := other.Delete().DeletingChildrenIfNeeded().ForPath(ctx, "/d"); err != nil {
		t.Error(err)
	}
	if err := other.Delete().ForPath(ctx, "/"); !errors.Is(err, framework.ErrInvalidPath) {
		t.Errorf("deleting the view's namespace node = %v; want ErrInvalidPath", err)
	}
	if data, _, err := c.GetData().ForPath(ctx, "/n"); err != nil || string(data) != "first" {
		t.Errorf("the client's own namespace after the view's work = %q, %v", data, err)
	}

	// Watches through a view are refused, not misreported.
	if _, _, _, err := other.GetData().ForPathW(ctx, "/x"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("GetData().ForPathW through a view = %v; want errors.ErrUnsupported", err)
	}

	// The view shares the client's life.
	c.Close()
	if _, _, err := other.GetData().ForPath(ctx, "/d/n"); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("a view of a closed client = %v; want ErrClosed", err)
	}
	var zero framework.NamespaceView
	if _, err := zero.Create().ForPath(ctx, "/a", nil); !errors.Is(err, framework.ErrNilClient) {
		t.Errorf("a zero NamespaceView = %v; want ErrNilClient", err)
	}
	if zero.Namespace() != "" {
		t.Error("a zero NamespaceView has a namespace")
	}
}

// TestFrameworkOps2_ViewNamespaceReaped: a view's namespace container
// reaped once empty is made again by the next create, as the client's own.
func TestFrameworkOps2_ViewNamespaceReaped(t *testing.T) {
	securityNoLeaks(t)
	srv := zktest.Shared(t)
	c := startClient(t, builder(t, srv.ConnectString()))
	v, err := c.UsingNamespace("it-ops2-reaped")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := v.Create().ForPath(ctx, "/a", nil); err != nil {
		t.Fatal(err)
	}
	if err := v.Delete().ForPath(ctx, "/a"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() bool {
		s, err := c.CheckExists().ForPath(ctx, "/it-ops2-reaped")
		return err == nil && s == nil
	}, "the server reaps the view's empty namespace container")
	if _, err := v.Create().ForPath(ctx, "/b", nil); err != nil {
		t.Errorf("create after the namespace node was reaped: %v", err)
	}
	t.Cleanup(func() { c.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, "/it-ops2-reaped") })
}
