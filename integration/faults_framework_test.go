package integration

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// The framework fault tests check the fault model's promises to a lock
// holder and to a writer:
//   - Lost comes before the server can have expired the session: it is
//     timed from the last reply, with the negotiated timeout;
//   - each state is reported once per session;
//   - a lost reply is not an answer: a write whose reply was lost either
//     resolves to what the server did, or is reported as indeterminate.

// ffLossRace waits for both the client's LOST (lost closes) and the
// observer's notice that the server deleted the client's ephemeral node
// (watch fires), and fails the test unless LOST came first.
func ffLossRace(t *testing.T, lost <-chan struct{}, watch <-chan zk.Event, node string, bound time.Duration, what string) {
	t.Helper()
	var lostAt, goneAt time.Time
	start := time.Now()
	deadline := time.After(bound)
	for lostAt.IsZero() || goneAt.IsZero() {
		select {
		case <-lost:
			lostAt, lost = time.Now(), nil
		case ev := <-watch:
			if ev.Type != zk.EventNodeDeleted {
				t.Fatalf("%s: observer's watch on %s: %+v, want a delete", what, node, ev)
			}
			goneAt, watch = time.Now(), nil
		case <-deadline:
			t.Fatalf("%s: within %v of the pause, LOST at %v, node deleted by the server at %v (zero: not yet)",
				what, bound, ffSince(start, lostAt), ffSince(start, goneAt))
		}
	}
	if !lostAt.Before(goneAt) {
		t.Errorf("%s: the server deleted the ephemeral node %v after the pause, but the client reported LOST only %v after it: "+
			"a holder under SessionErrorPolicy still trusted a session the server had already ended",
			what, goneAt.Sub(start).Round(time.Millisecond), lostAt.Sub(start).Round(time.Millisecond))
	}
}

func ffSince(start, at time.Time) time.Duration {
	if at.IsZero() {
		return 0
	}
	return at.Sub(start).Round(time.Millisecond)
}

// ffWatchNode sets an ExistsW watch on node through obs and checks that the
// node exists.
func ffWatchNode(t *testing.T, obs *zk.Conn, node string) <-chan zk.Event {
	t.Helper()
	ok, _, watch, err := obs.ExistsW(node)
	if err != nil || !ok {
		t.Fatalf("observer: exists %s = %v, %v", node, ok, err)
	}
	return watch
}

func TestFramework_LostUsesNegotiatedSessionTimeout(t *testing.T) {
	faultsNoLeaks(t)
	cluster := zktest.StartWith(t, zktest.Config{TickTime: 500 * time.Millisecond, MaxSessionTimeout: 2 * time.Second})
	proxy := fwProxy(t, cluster.ConnectString())
	obs := fwRawConn(t, cluster.ConnectString())
	var rec fwRecorder
	c, err := builder(t, proxy.Addr()).
		SessionTimeout(10 * time.Second).
		ConnectionStateErrorPolicy(framework.SessionErrorPolicy).
		Listener(rec.listen).
		Logger(fwLogger(t)).
		Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if got := c.NegotiatedSessionTimeout(); got != 0 {
		t.Errorf("NegotiatedSessionTimeout() before Start = %v, want 0", got)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.NegotiatedSessionTimeout(); got != 2*time.Second {
		t.Errorf("NegotiatedSessionTimeout() = %v, want the server's maximum, 2s (10s was asked)", got)
	}

	node := fwEphemeral(t, c, "/negotiated/node")
	watch := ffWatchNode(t, obs, node)
	lost := c.LossSignal(framework.SessionErrorPolicy)
	proxy.Pause()
	ffLossRace(t, lost, watch, node, 30*time.Second, "negotiated 2s session, 10s asked")
	eventually(t, 10*time.Second, func() bool { return slices.Contains(rec.got(), fwL) }, "LOST reaches the listener")
	if got := rec.got(); !slices.Equal(got[:3], []framework.ConnectionState{fwC, fwS, fwL}) {
		t.Errorf("listener states = %v, want CONNECTED SUSPENDED LOST first", got)
	}
}

func TestFramework_LostTimedFromLastReply(t *testing.T) {
	faultsNoLeaks(t)
	const session = 4 * time.Second
	obs := fwRawConn(t, fwShared(t))
	var rec fwRecorder
	c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder {
		return b.SessionTimeout(session).
			ConnectionStateErrorPolicy(framework.SessionErrorPolicy).
			Listener(rec.listen).
			Logger(fwLogger(t))
	})
	base := testPath(t)
	want := []framework.ConnectionState{fwC}
	for round := 1; round <= 3; round++ {
		what := fmt.Sprintf("round %d", round)
		node := fwEphemeral(t, c, fmt.Sprintf("%s/round-%d", base, round))
		watch := ffWatchNode(t, obs, node)
		lost := c.LossSignal(framework.SessionErrorPolicy)
		if fwIsClosed(lost) {
			t.Fatalf("%s: loss signal closed while connected", what)
		}
		proxy.Pause()
		ffLossRace(t, lost, watch, node, 8*session, what)
		proxy.Resume()
		want = append(want, fwS, fwL, fwR)
		rec.expect(t, 20*time.Second, want...)
	}
}

func TestFramework_ServerExpiryWhileSuspendedReportsEachStateOnce(t *testing.T) {
	faultsNoLeaks(t)
	var (
		rec          fwRecorder
		refuseOnLost atomic.Bool
	)
	proxy := fwProxy(t, fwShared(t))
	c := startClient(t, builder(t, proxy.Addr()).Logger(fwLogger(t)).Listener(func(s framework.ConnectionState) {
		if s == fwL && refuseOnLost.CompareAndSwap(true, false) {
			proxy.Refuse(true) // the client learns of the expiry, then cannot reconnect for a while
		}
		rec.listen(s)
	}))
	old := c.SessionID()
	conn := c.ZooKeeper()

	proxy.Pause()
	proxy.Reset()
	rec.expect(t, 10*time.Second, fwC, fwS)
	if err := zktest.ExpireSession(t.Context(), fwShared(t), conn); err != nil {
		t.Fatal(err)
	}
	refuseOnLost.Store(true)
	proxy.Resume()
	rec.expect(t, 10*time.Second, fwC, fwS, fwL)

	// More than a session timeout with the expiry known and no new
	// session: a clock started for the suspension must not report LOST a
	// second time, nor open a second new session.
	time.Sleep(testSessionTimeout + 2*time.Second)
	rec.expect(t, 0, fwC, fwS, fwL)
	proxy.Refuse(false)
	rec.expect(t, 20*time.Second, fwC, fwS, fwL, fwR)
	id := c.SessionID()
	if id == old || id != c.ZooKeeper().SessionID() {
		t.Errorf("after the expiry SessionID() = %#x (old %#x, go-zookeeper's %#x); want one new session",
			id, old, c.ZooKeeper().SessionID())
	}
	time.Sleep(testSessionTimeout + time.Second)
	rec.expect(t, 0, fwC, fwS, fwL, fwR)
	if got := c.SessionID(); got != id {
		t.Errorf("session changed again after RECONNECTED: %#x, then %#x", id, got)
	}
}

// ffReplyFixture is a client behind a fault proxy, an observer that talks
// to the server directly, and a parent path for the test's nodes.
type ffReplyFixture struct {
	c      *framework.Client
	proxy  *zktest.Proxy
	obs    *zk.Conn
	parent string
}

func newReplyFixture(t *testing.T) *ffReplyFixture {
	t.Helper()
	faultsNoLeaks(t)
	f := &ffReplyFixture{obs: fwRawConn(t, fwShared(t)), parent: testPath(t)}
	f.c, f.proxy = proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b.Logger(fwLogger(t)) })
	if _, err := f.c.Create().CreatingParentsIfNeeded().ForPath(t.Context(), f.parent, nil); err != nil &&
		!errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	cleaner := newClient(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cleaner.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, f.parent)
	})
	return f
}

// lose arms the proxy to lose the reply to the next request with one of
// opcodes, runs op, and checks that the fault struck.
func (f *ffReplyFixture) lose(t *testing.T, op func(), opcodes ...int32) {
	t.Helper()
	before := f.proxy.LostReplies()
	f.proxy.LoseNextReply(opcodes...)
	op()
	if got := f.proxy.LostReplies() - before; got != 1 {
		t.Fatalf("the proxy lost %d replies, want 1: the test did not test", got)
	}
}

// kids lists parent's children on the server, sorted.
func (f *ffReplyFixture) kids(t *testing.T) []string {
	t.Helper()
	kids, _, err := f.obs.Children(f.parent)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(kids)
	return kids
}

var ffCreateOps = []int32{zktest.OpCreate, zktest.OpCreate2, zktest.OpCreateContainer, zktest.OpCreateTTL}

func TestFramework_LostReplySetDataWithVersionIsIndeterminate(t *testing.T) {
	f := newReplyFixture(t)
	p := f.parent + "/node"
	if _, err := f.obs.Create(p, []byte("v0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var err error
	f.lose(t, func() { _, err = f.c.SetData().WithVersion(0).ForPath(t.Context(), p, []byte("v1")) }, zktest.OpSetData)
	if !errors.Is(err, framework.ErrIndeterminate) {
		t.Errorf("SetData(version 0) whose reply was lost = %v, want an error matching ErrIndeterminate "+
			"(its retry meets the first attempt's new version: BadVersion is not the answer)", err)
	}
	data, stat, gerr := f.obs.Get(p)
	if gerr != nil || string(data) != "v1" || stat.Version != 1 {
		t.Errorf("server holds %q at version %d (%v), want the lost write applied once: \"v1\" at version 1",
			data, stat.Version, gerr)
	}
}

func TestFramework_LostReplyCreateIsNotNodeExists(t *testing.T) {
	f := newReplyFixture(t)
	p := f.parent + "/node"
	var (
		got string
		err error
	)
	f.lose(t, func() { got, err = f.c.Create().ForPath(t.Context(), p, []byte("mine")) }, ffCreateOps...)
	switch {
	case err == nil:
		if got != p {
			t.Errorf("Create returned %q, want %q", got, p)
		}
	case errors.Is(err, framework.ErrIndeterminate):
	default:
		t.Errorf("Create whose reply was lost = %v; want success (the node is there) or an error matching ErrIndeterminate, "+
			"never a plain NodeExists for the caller's own node", err)
	}
	data, _, gerr := f.obs.Get(p)
	if gerr != nil || string(data) != "mine" {
		t.Errorf("server holds %q (%v) at %s, want the create applied", data, gerr, p)
	}
}

func TestFramework_LostReplyDelete(t *testing.T) {
	f := newReplyFixture(t)
	for _, tc := range []struct {
		name    string
		version int32
	}{{"any version", -1}, {"version 0", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			p := fmt.Sprintf("%s/node%d", f.parent, tc.version)
			if _, err := f.obs.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatal(err)
			}
			var err error
			f.lose(t, func() { err = f.c.Delete().WithVersion(tc.version).ForPath(t.Context(), p) }, zktest.OpDelete)
			switch {
			case err == nil:
			case tc.version == -1:
				t.Errorf("unversioned Delete whose reply was lost = %v, want nil: the node is gone, the delete did its job", err)
			case !errors.Is(err, framework.ErrIndeterminate):
				t.Errorf("Delete(version 0) whose reply was lost = %v; want nil or an error matching ErrIndeterminate, "+
					"never a plain NoNode for the caller's own delete", err)
			}
			if ok, _, err := f.obs.Exists(p); err != nil || ok {
				t.Errorf("%s after the delete: exists %v, err %v", p, ok, err)
			}
		})
	}
}

func TestFramework_LostReplyTransactionIsNotNodeExists(t *testing.T) {
	f := newReplyFixture(t)
	a, b := f.parent+"/a", f.parent+"/b"
	if _, err := f.obs.Create(b, []byte("old"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var err error
	f.lose(t, func() {
		_, err = f.c.Transaction().Create(a, []byte("A"), framework.Persistent).SetData(b, []byte("new"), -1).Commit(t.Context())
	}, zktest.OpMulti)
	if err != nil && !errors.Is(err, framework.ErrIndeterminate) {
		t.Errorf("Commit whose reply was lost = %v; want success or an error matching ErrIndeterminate, "+
			"never a definite failure (NodeExists: %v) for a transaction that was committed", err, errors.Is(err, zk.ErrNodeExists))
	}
	da, _, errA := f.obs.Get(a)
	db, _, errB := f.obs.Get(b)
	if errA != nil || string(da) != "A" || errB != nil || string(db) != "new" {
		t.Errorf("server holds %s = %q (%v), %s = %q (%v); want the transaction committed once",
			a, da, errA, b, db, errB)
	}
}

func TestFramework_LostReplySequentialCreateMakesNoSecondNode(t *testing.T) {
	f := newReplyFixture(t)
	var (
		got string
		err error
	)
	f.lose(t, func() {
		got, err = f.c.Create().WithMode(framework.PersistentSequential).ForPath(t.Context(), f.parent+"/job-", nil)
	}, ffCreateOps...)
	kids := f.kids(t)
	if len(kids) != 1 {
		t.Fatalf("an unprotected sequential create whose reply was lost left %v (err %v), want exactly one node", kids, err)
	}
	switch {
	case err == nil:
		if got != path.Join(f.parent, kids[0]) {
			t.Errorf("Create returned %q, the server holds %v", got, kids)
		}
	case !errors.Is(err, framework.ErrIndeterminate):
		t.Errorf("unprotected sequential create whose reply was lost = %v, want success or an error matching ErrIndeterminate", err)
	}
}

func TestFramework_LostReplyProtectedCreateFindsItsNode(t *testing.T) {
	f := newReplyFixture(t)
	var (
		got string
		err error
	)
	f.lose(t, func() {
		got, err = f.c.Create().WithProtection().WithMode(framework.EphemeralSequential).
			ForPath(t.Context(), f.parent+"/lock-", nil)
	}, ffCreateOps...)
	if err != nil {
		t.Fatalf("protected create whose reply was lost = %v, want success", err)
	}
	kids := f.kids(t)
	if len(kids) != 1 || path.Join(f.parent, kids[0]) != got || !framework.IsProtected(kids[0]) {
		t.Fatalf("server holds %v, create returned %q; want exactly that one protected node", kids, got)
	}
	_, stat, gerr := f.obs.Get(got)
	if gerr != nil || stat.EphemeralOwner != f.c.SessionID() {
		t.Errorf("node %s: owner %#x (%v), client session %#x", got, stat.EphemeralOwner, gerr, f.c.SessionID())
	}
}

// TestFramework_LostReplyProtectedCreateLateTwinIsDeleted: after a protected
// create met a connection loss, a node with its prefix that appears after
// the create returned (the server applying the lost attempt's request late,
// which a standalone ZooKeeper can do: it does not refuse a session's
// request from a connection that has since been replaced) is deleted, and
// the node the create returned stays. The observer makes the late twin
// here, since the server's own race cannot be made on demand. Without the
// client's second sweep the twin stays: a persistent one forever, an
// ephemeral one in a lock's queue until the session ends.
func TestFramework_LostReplyProtectedCreateLateTwinIsDeleted(t *testing.T) {
	for name, mode := range map[string]framework.CreateMode{
		"persistent": framework.PersistentSequential, "ephemeral": framework.EphemeralSequential,
	} {
		t.Run(name, func(t *testing.T) {
			f := newReplyFixture(t)
			var (
				got string
				err error
			)
			f.lose(t, func() {
				got, err = f.c.Create().WithProtection().WithMode(mode).ForPath(t.Context(), f.parent+"/lock-", nil)
			}, ffCreateOps...)
			if err != nil {
				t.Fatalf("protected create whose reply was lost = %v, want success", err)
			}
			_, name := path.Split(got)
			twin := path.Join(f.parent, name[:len("_c_")+36+1]+"lock-late")
			other := path.Join(f.parent, framework.NewProtectedPrefix()+"lock-other")
			for _, p := range []string{twin, other} {
				if _, err := f.obs.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
					t.Fatal(err)
				}
			}
			_, otherName := path.Split(other)
			want := slices.Sorted(slices.Values([]string{name, otherName}))
			eventually(t, 15*time.Second, func() bool { return slices.Equal(f.kids(t), want) },
				"the late twin is deleted; the returned node and another create's node stay")
			// The sweep is over: nothing else goes.
			time.Sleep(3 * time.Second)
			if kids := f.kids(t); !slices.Equal(kids, want) {
				t.Fatalf("server holds %v, want %v", kids, want)
			}
		})
	}
}
