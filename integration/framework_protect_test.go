package integration

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// fwLoseCreateReply runs create through a client behind proxy so that the
// server makes the node but the client never gets the reply: the proxy loses
// the reply to the next create and resets the connection. An observer
// watching parent sees the node appear. It returns create's results and the
// children the observer listed when its watch fired.
//
// (An earlier version delayed traffic, waited for the observer's event and
// then reset the proxy; a delayed reply could reach the client before the
// reset, and the test then failed though the client was right.)
func fwLoseCreateReply(t *testing.T, proxy *zktest.Proxy, obs *zk.Conn, parent string,
	create func() (string, error)) (string, error, []string) {
	t.Helper()
	kids, _, watch, err := obs.ChildrenW(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 0 {
		t.Fatalf("%s has children before the create: %v", parent, kids)
	}
	type result struct {
		p   string
		err error
	}
	done := make(chan result, 1)
	before := proxy.LostReplies()
	proxy.LoseNextReply(zktest.OpCreate, zktest.OpCreate2)
	go func() {
		p, err := create()
		done <- result{p, err}
	}()
	select {
	case ev := <-watch:
		if ev.Type != zk.EventNodeChildrenChanged {
			t.Fatalf("observer's watch: %+v", ev)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the create never reached the server")
	}
	seen, _, err := obs.Children(parent)
	if err != nil {
		t.Fatal(err)
	}
	r := <-done
	if got := proxy.LostReplies() - before; got != 1 {
		t.Fatalf("the proxy lost %d replies, want 1: the test did not test", got)
	}
	return r.p, r.err, seen
}

func TestFramework_ProtectedCreateAfterConnectionLossMakesOneNode(t *testing.T) {
	parent := testPath(t)
	obs := fwRawConn(t, fwShared(t))
	proxy := fwProxy(t, fwShared(t))
	var rec fwRecorder
	c := startClient(t, builder(t, proxy.Addr()).Listener(rec.listen))
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(t.Context(), parent, nil); err != nil {
		t.Fatal(err)
	}

	got, err, seen := fwLoseCreateReply(t, proxy, obs, parent, func() (string, error) {
		return c.Create().WithProtection().WithMode(framework.EphemeralSequential).
			ForPath(t.Context(), parent+"/lock-", []byte("x"))
	})
	if err != nil {
		t.Fatalf("protected create across a connection loss: %v", err)
	}
	if !slices.Contains(rec.got(), fwS) {
		t.Fatalf("the connection never dropped (states %v): the test did not test", rec.got())
	}
	if len(seen) != 1 {
		t.Fatalf("server held %v when the reply was lost, want one node", seen)
	}
	kids := children(t, c, parent)
	if len(kids) != 1 || kids[0] != seen[0] || path.Join(parent, kids[0]) != got {
		t.Fatalf("after the retry the server holds %v (first node %s), create returned %s; want exactly the first node",
			kids, seen[0], got)
	}
	_, stat, err := obs.Get(got)
	if err != nil {
		t.Fatal(err)
	}
	if stat.EphemeralOwner != c.SessionID() {
		t.Errorf("node owner %#x, client session %#x", stat.EphemeralOwner, c.SessionID())
	}
}

func TestFramework_ProtectedCreateThatFailsLeavesNoNode(t *testing.T) {
	parent := testPath(t)
	obs := fwRawConn(t, fwShared(t))
	proxy := fwProxy(t, fwShared(t))
	c := startClient(t, builder(t, proxy.Addr()).RetryPolicy(fwNoRetry{}))
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(t.Context(), parent, nil); err != nil {
		t.Fatal(err)
	}

	// Persistent, so only the client's cleanup can remove the node.
	_, err, seen := fwLoseCreateReply(t, proxy, obs, parent, func() (string, error) {
		return c.Create().WithProtection().WithMode(framework.PersistentSequential).
			ForPath(t.Context(), parent+"/job-", nil)
	})
	if !errors.Is(err, zk.ErrConnectionClosed) || !framework.IsRetryable(err) {
		t.Fatalf("create with no retries across a connection loss = %v, want zk.ErrConnectionClosed", err)
	}
	if len(seen) != 1 || !framework.IsProtected(seen[0]) {
		t.Fatalf("server held %v when the reply was lost, want one protected node", seen)
	}
	eventually(t, 15*time.Second, func() bool {
		kids, _, err := obs.Children(parent)
		return err == nil && len(kids) == 0
	}, "the orphaned protected node is deleted in the background")
}

var fwProtectedName = regexp.MustCompile(`^_c_([0-9a-f-]{36})-lock-\d{10}$`)

func TestFramework_ProtectedCreatePathCarriesUUID(t *testing.T) {
	c := newClient(t)
	parent := testPath(t)
	ids := map[string]bool{}
	for range 3 {
		p, err := c.Create().CreatingParentContainersIfNeeded().WithProtection().
			WithMode(framework.EphemeralSequential).ForPath(t.Context(), parent+"/lock-", nil)
		if err != nil {
			t.Fatal(err)
		}
		dir, name := path.Split(p)
		m := fwProtectedName.FindStringSubmatch(name)
		if dir != parent+"/" || m == nil {
			t.Fatalf("protected create returned %q, want %s/_c_<uuid>-lock-<seq>", p, parent)
		}
		if _, err := uuid.Parse(m[1]); err != nil || !framework.IsProtected(name) {
			t.Fatalf("%q: prefix %q is not a valid UUID (%v), IsProtected %v", name, m[1], err, framework.IsProtected(name))
		}
		if framework.StripProtected(name) != name[len("_c_")+36+1:] {
			t.Errorf("StripProtected(%q) = %q", name, framework.StripProtected(name))
		}
		ids[m[1]] = true
	}
	if len(ids) != 3 {
		t.Errorf("three protected creates shared a UUID: %v", ids)
	}
	if kids := children(t, c, parent); len(kids) != 3 {
		t.Errorf("server holds %v, want 3 nodes", kids)
	}
}

func TestFramework_GuaranteedDeleteWhileServerDown(t *testing.T) {
	cluster := zktest.Start(t)
	srv := fwServer(t, cluster)
	var rec, recNS fwRecorder
	c := startClient(t, builder(t, cluster.ConnectString()).Listener(rec.listen).Logger(fwLogger(t)))
	cn := startClient(t, builder(t, cluster.ConnectString()).Namespace("gd").Listener(recNS.listen).Logger(fwLogger(t)))
	ctx := t.Context()
	plain, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, "/plain/node", nil)
	if err != nil {
		t.Fatal(err)
	}
	inNS, err := cn.Create().CreatingParentsIfNeeded().ForPath(ctx, "/ns/node", nil)
	if err != nil {
		t.Fatal(err)
	}

	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	rec.waitLen(t, 10*time.Second, 2)
	recNS.waitLen(t, 10*time.Second, 2)
	for _, d := range []struct {
		c *framework.Client
		p string
	}{{c, plain}, {cn, inNS}} {
		short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		err := d.c.Delete().Guaranteed().ForPath(short, d.p)
		cancel()
		if err == nil {
			t.Fatalf("guaranteed delete of %s with the server down returned no error", d.p)
		}
	}

	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	obs := fwRawConn(t, cluster.ConnectString())
	for _, p := range []string{"/plain/node", "/gd/ns/node"} {
		eventually(t, 20*time.Second, func() bool {
			ok, _, err := obs.Exists(p)
			return err == nil && !ok
		}, fmt.Sprintf("%s deleted in the background after the server came back (states %v, %v)",
			p, rec.got(), recNS.got()))
	}
	// The parents, untouched, show that only the named nodes went.
	for _, p := range []string{"/plain", "/gd/ns"} {
		if ok, _, err := obs.Exists(p); err != nil || !ok {
			t.Errorf("%s: exists %v, %v", p, ok, err)
		}
	}
}

func TestFramework_GuaranteedDeleteOfMissingNode(t *testing.T) {
	c := newClient(t)
	err := c.Delete().Guaranteed().ForPath(t.Context(), testPath(t))
	if !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("guaranteed delete of a missing node = %v, want zk.ErrNoNode", err)
	}
	if err := c.Delete().Guaranteed().Quietly().ForPath(t.Context(), testPath(t)); err != nil {
		t.Errorf("quiet guaranteed delete of a missing node = %v, want nil", err)
	}
}

var _ retry.Policy = fwNoRetry{}
