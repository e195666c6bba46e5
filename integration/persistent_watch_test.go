package integration

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"
)

// pwNoLeaks checks that the test leaves no goroutine behind.
func pwNoLeaks(t *testing.T) {
	t.Helper()
	zktest.Shared(t)
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// pwEventBound bounds the wait for an event that should come (a lost
// watch shows as a wait that ends here).
const pwEventBound = 10 * time.Second

// pwNext returns the watch's next event, failing the test if none comes
// within pwEventBound or the channel closes.
func pwNext(t *testing.T, w *framework.PersistentWatch, what string) framework.PersistentEvent {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		if !ok {
			t.Fatalf("%s: the channel closed", what)
		}
		return ev
	case <-time.After(pwEventBound):
		t.Fatalf("%s: no event within %v (the watch was lost)", what, pwEventBound)
	}
	return framework.PersistentEvent{}
}

// pwExpect reads one event and checks its type and path.
func pwExpect(t *testing.T, w *framework.PersistentWatch, typ framework.PersistentEventType, path string) {
	t.Helper()
	ev := pwNext(t, w, typ.String()+" "+path)
	if ev.Type != typ || ev.Path != path {
		t.Fatalf("event %s %s, want %s %s", ev.Type, ev.Path, typ, path)
	}
}

// pwNoMore checks that no event is waiting.
func pwNoMore(t *testing.T, w *framework.PersistentWatch) {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		if ok {
			t.Fatalf("unexpected event %s %s", ev.Type, ev.Path)
		}
	default:
	}
}

// pwWatches returns how many watches of session id the server (the only
// one of cl) holds on path.
func pwWatches(t testing.TB, cl *zktest.Cluster, id int64, path string) int {
	t.Helper()
	n := 0
	for _, p := range dbWatchesOf(t, cl, id) {
		if p == path {
			n++
		}
	}
	return n
}

// pwBase returns the test's path, with nothing left there from an earlier
// run, and deletes it at cleanup.
func pwBase(t *testing.T, c *framework.Client) string {
	t.Helper()
	base := testPath(t)
	clean := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Delete().DeletingChildrenIfNeeded().ForPath(ctx, base); err != nil && !errors.Is(err, framework.ErrNoNode) {
			t.Logf("cleanup %s: %v", base, err)
		}
	}
	clean()
	t.Cleanup(clean)
	return base
}

func pwCreate(t *testing.T, c *framework.Client, path string) {
	t.Helper()
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(t.Context(), path, nil); err != nil {
		t.Fatal(err)
	}
}

func TestPersistentWatch_RecursiveEventsInOrder(t *testing.T) {
	pwNoLeaks(t)
	cl := zktest.Shared(t)
	c := newClient(t)
	base := pwBase(t, c)
	other := newClient(t)
	w, err := c.AddWatch().Recursive().ForPath(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	if got := pwWatches(t, cl, c.SessionID(), base); got != 1 {
		t.Fatalf("server watches on %s = %d, want 1", base, got)
	}
	ctx := t.Context()
	pwCreate(t, other, base)
	pwCreate(t, other, base+"/a")
	if _, err := other.SetData().ForPath(ctx, base+"/a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	pwCreate(t, other, base+"/a/b")
	if err := other.Delete().DeletingChildrenIfNeeded().ForPath(ctx, base); err != nil {
		t.Fatal(err)
	}
	pwExpect(t, w, framework.PersistentCreated, base)
	pwExpect(t, w, framework.PersistentCreated, base+"/a")
	pwExpect(t, w, framework.PersistentDataChanged, base+"/a")
	pwExpect(t, w, framework.PersistentCreated, base+"/a/b")
	pwExpect(t, w, framework.PersistentDeleted, base+"/a/b")
	pwExpect(t, w, framework.PersistentDeleted, base+"/a")
	pwExpect(t, w, framework.PersistentDeleted, base)
	// One server watch for the whole tree, whatever its size.
	if paths := dbWatchesOf(t, cl, c.SessionID()); !slices.Equal(paths, []string{base}) {
		t.Fatalf("the session's server watches: %v, want [%s]", paths, base)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-w.Events(); ok {
		t.Fatal("an event after Close")
	}
	if paths := dbWatchesOf(t, cl, c.SessionID()); len(paths) != 0 {
		t.Fatalf("server watches after Close: %v, want none", paths)
	}
	if err := w.Close(ctx); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

func TestPersistentWatch_NodeAndChildren(t *testing.T) {
	pwNoLeaks(t)
	cl := zktest.Shared(t)
	c := newClient(t)
	base := pwBase(t, c)
	pwCreate(t, c, base)
	w, err := c.AddWatch().ForPath(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	pwCreate(t, c, base+"/k")
	pwCreate(t, c, base+"/k/deep") // not followed
	if _, err := c.SetData().ForPath(t.Context(), base, []byte("v")); err != nil {
		t.Fatal(err)
	}
	pwExpect(t, w, framework.PersistentChildrenChanged, base)
	pwExpect(t, w, framework.PersistentDataChanged, base)
	pwNoMore(t, w)
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if paths := dbWatchesOf(t, cl, c.SessionID()); len(paths) != 0 {
		t.Fatalf("server watches after Close: %v, want none", paths)
	}
}

// Opening and closing watches on one client leaves no server watch.
func TestPersistentWatch_OpenCloseCyclesLeaveNothing(t *testing.T) {
	pwNoLeaks(t)
	cl := zktest.Shared(t)
	c := newClient(t)
	base := pwBase(t, c)
	pwCreate(t, c, base)
	for i := range 200 {
		w, err := c.AddWatch().Recursive().ForPath(t.Context(), base)
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		if err := w.Close(t.Context()); err != nil {
			t.Fatalf("cycle %d: close: %v", i, err)
		}
	}
	if paths := dbWatchesOf(t, cl, c.SessionID()); len(paths) != 0 {
		t.Fatalf("server watches after 200 cycles: %v, want none", paths)
	}
}

// Two watches of one client on one path share one server watch, which
// stays until the last one closes.
func TestPersistentWatch_SharedPath(t *testing.T) {
	pwNoLeaks(t)
	cl := zktest.Shared(t)
	c := newClient(t)
	base := pwBase(t, c)
	pwCreate(t, c, base)
	a, err := c.AddWatch().Recursive().ForPath(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.AddWatch().ForPath(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	pwCreate(t, c, base+"/x")
	pwExpect(t, a, framework.PersistentCreated, base+"/x")
	pwExpect(t, b, framework.PersistentChildrenChanged, base)
	if err := a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := pwWatches(t, cl, c.SessionID(), base); got == 0 {
		t.Fatal("the server watch went with the first of two watches")
	}
	if err := c.Delete().ForPath(t.Context(), base+"/x"); err != nil {
		t.Fatal(err)
	}
	pwExpect(t, b, framework.PersistentChildrenChanged, base)
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if paths := dbWatchesOf(t, cl, c.SessionID()); len(paths) != 0 {
		t.Fatalf("server watches after both closed: %v, want none", paths)
	}
}

// ZOOKEEPER-4466: before 3.9 a standard watch set on a path that has a
// persistent watch on the same connection turns it one-shot. A recursive
// watch on root, then a one-shot data watch on root itself and a mutex
// queue inside root/locks (whose waiters watch their predecessors): after
// the one-shot fires and the queue moves, the recursive watch still
// reports every change.
func TestPersistentWatch_OneModePerPath(t *testing.T) {
	pwNoLeaks(t)
	cl := zktest.Shared(t)
	c := newClient(t)
	root := pwBase(t, c)
	other := newClient(t)
	pwCreate(t, c, root+"/locks")
	w, err := c.AddWatch().Recursive().ForPath(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	_, _, once, err := c.GetData().ForPathW(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	if paths := dbWatchesOf(t, cl, c.SessionID()); !slices.Equal(paths, []string{root}) {
		t.Fatalf("server watches with the one-shot set: %v, want [%s] only", paths, root)
	}
	// A mutex queue inside the tree: a holder and a waiter of this client.
	m1, err := mutex.New(c, root+"/locks")
	if err != nil {
		t.Fatal(err)
	}
	m2, err := mutex.New(c, root+"/locks")
	if err != nil {
		t.Fatal(err)
	}
	h1, err := m1.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got2 := make(chan *mutex.Hold, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		h, err := m2.Acquire(t.Context())
		if err != nil {
			t.Error(err)
		}
		got2 <- h
	}()
	// Drain the events of the queue's nodes until the waiter's node shows.
	nodes := 0
	for nodes < 2 {
		ev := pwNext(t, w, "the queue's nodes")
		if ev.Type == framework.PersistentCreated && strings.HasPrefix(ev.Path, root+"/locks/") {
			nodes++
		}
	}
	// The one-shot fires.
	if _, err := other.SetData().ForPath(t.Context(), root, []byte("1")); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-once:
		if ev.Type != zk.EventNodeDataChanged || ev.Path != root {
			t.Fatalf("one-shot event %v, want NodeDataChanged on %s", ev, root)
		}
	case <-time.After(pwEventBound):
		t.Fatal("the one-shot watch on the root did not fire")
	}
	pwExpect(t, w, framework.PersistentDataChanged, root)
	// The queue moves on.
	if err := h1.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	var h2 *mutex.Hold
	select {
	case h2 = <-got2:
	case <-time.After(pwEventBound):
		t.Fatal("the waiter did not get the mutex")
	}
	wg.Wait()
	if h2 == nil {
		t.FailNow()
	}
	if err := h2.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	// After all that, the root's watch still reports changes on the root
	// and below.
	if _, err := other.SetData().ForPath(t.Context(), root, []byte("2")); err != nil {
		t.Fatal(err)
	}
	pwCreate(t, other, root+"/after")
	deadline := time.After(pwEventBound)
	var sawRoot, sawAfter bool
	for !sawRoot || !sawAfter {
		select {
		case ev := <-w.Events():
			sawRoot = sawRoot || (ev.Type == framework.PersistentDataChanged && ev.Path == root)
			sawAfter = sawAfter || (ev.Type == framework.PersistentCreated && ev.Path == root+"/after")
		case <-deadline:
			t.Fatalf("the recursive watch stopped reporting after the one-shot fired (root change seen: %v, create seen: %v)", sawRoot, sawAfter)
		}
	}
	if got := pwWatches(t, cl, c.SessionID(), root); got != 1 {
		t.Fatalf("server watches on %s = %d, want 1", root, got)
	}
}

// A reconnect to another server of an ensemble keeps the watch: Resync,
// then the events after the reconnect.
func TestPersistentWatch_ReconnectToAnotherServer(t *testing.T) {
	pwNoLeaks(t)
	cl := zktest.StartEnsemble(t)
	c := startClient(t, builder(t, cl.ConnectString()).SessionTimeout(10*time.Second))
	base := pwBase(t, c)
	pwCreate(t, c, base)
	w, err := c.AddWatch().Recursive().ForPath(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	pwCreate(t, c, base+"/before")
	pwExpect(t, w, framework.PersistentCreated, base+"/before")
	session := c.SessionID()
	addr := c.ZooKeeper().Server()
	var killed *zktest.Server
	for _, s := range cl.Servers() {
		if s.Addr() == addr {
			killed = s
		}
	}
	if killed == nil {
		t.Fatalf("connected to %s, not a server of %v", addr, cl)
	}
	if err := killed.Kill(); err != nil {
		t.Fatal(err)
	}
	ev := pwNext(t, w, "after the reconnect")
	if ev.Type != framework.PersistentResync || ev.Path != base {
		t.Fatalf("first event after the reconnect: %s %s, want RESYNC %s", ev.Type, ev.Path, base)
	}
	if c.SessionID() != session {
		t.Fatalf("the session changed (%x to %x): this test wants a reconnect", session, c.SessionID())
	}
	if c.ZooKeeper().Server() == addr {
		t.Fatalf("still on %s", addr)
	}
	other := startClient(t, builder(t, cl.ConnectString()))
	pwCreate(t, other, base+"/after")
	pwExpect(t, w, framework.PersistentCreated, base+"/after")
}

// After the session expires, the watch is set anew on the new session:
// Resync, then the events after it.
func TestPersistentWatch_SessionExpiry(t *testing.T) {
	pwNoLeaks(t)
	cl := zktest.Shared(t)
	c := newClient(t)
	base := pwBase(t, c)
	pwCreate(t, c, base)
	w, err := c.AddWatch().Recursive().ForPath(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	old := c.SessionID()
	if err := zktest.ExpireSession(t.Context(), cl.ConnectString(), c.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	pwExpect(t, w, framework.PersistentResync, base)
	if c.SessionID() == old {
		t.Fatal("the session did not change")
	}
	if got := pwWatches(t, cl, c.SessionID(), base); got != 1 {
		t.Fatalf("server watches of the new session on %s = %d, want 1", base, got)
	}
	other := newClient(t)
	pwCreate(t, other, base+"/after")
	pwExpect(t, w, framework.PersistentCreated, base+"/after")
}

// Close while the client is disconnected returns at once, and once
// reconnected the server holds nothing of the watch.
func TestPersistentWatch_CloseWhileDisconnected(t *testing.T) {
	pwNoLeaks(t)
	cl := zktest.Start(t)
	srv := fwServer(t, cl)
	c := startClient(t, builder(t, cl.ConnectString()).SessionTimeout(20*time.Second))
	base := pwBase(t, c)
	pwCreate(t, c, base)
	w, err := c.AddWatch().Recursive().ForPath(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	session := c.SessionID()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() bool { return !c.State().IsConnected() }, "the client sees the server gone")
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.BlockUntilConnected(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c.SessionID() != session {
		// A new session must not get the closed watch either: the check
		// below holds for both.
		t.Logf("the session did not survive the restart (%x to %x)", session, c.SessionID())
	}
	// A request after the reconnect: the re-registration, if any, came
	// before its reply.
	if _, err := c.CheckExists().ForPath(t.Context(), base); err != nil {
		t.Fatal(err)
	}
	if paths := dbWatchesOf(t, cl, c.SessionID()); len(paths) != 0 {
		t.Fatalf("server watches after the reconnect: %v, want none", paths)
	}
}

// Bad input: a nil or done ctx, a bad path, a client not started or
// closed; a zero PersistentWatch does nothing.
func TestPersistentWatch_BadInput(t *testing.T) {
	pwNoLeaks(t)
	c := newClient(t)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	//nolint:staticcheck // a nil ctx is the input under test
	if _, err := c.AddWatch().ForPath(nil, "/a"); !errors.Is(err, framework.ErrInvalidArgument) {
		t.Errorf("nil ctx: %v", err)
	}
	if _, err := c.AddWatch().ForPath(done, "/a"); !errors.Is(err, context.Canceled) {
		t.Errorf("done ctx: %v", err)
	}
	if _, err := c.AddWatch().Recursive().ForPath(t.Context(), "a/"); !errors.Is(err, framework.ErrInvalidPath) {
		t.Errorf("bad path: %v", err)
	}
	var zero framework.PersistentWatch
	if zero.Events() != nil || zero.Close(t.Context()) != nil || zero.Path() != "" {
		t.Error("a zero PersistentWatch is not closed")
	}
	var nilWatch *framework.PersistentWatch
	if nilWatch.Close(t.Context()) != nil {
		t.Error("a nil PersistentWatch's Close")
	}
	if _, err := (&framework.Client{}).AddWatch().ForPath(t.Context(), "/a"); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("zero client: %v", err)
	}
	// A watch open at the client's Close ends with it.
	w, err := c.AddWatch().ForPath(t.Context(), testPath(t))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, ok := <-w.Events(); ok {
		t.Error("an event after the client closed")
	}
	if err := w.Close(t.Context()); err != nil {
		t.Errorf("Close after the client's Close: %v", err)
	}
	if _, err := c.AddWatch().ForPath(t.Context(), "/a"); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("closed client: %v", err)
	}
}

// A persistent watch asked for on a path where the client holds a
// one-shot watch is set once that one fires (a standard watch set
// first would otherwise turn it one-shot): ForPath returns, the one-shot
// still fires, then Resync, and every change after.
func TestPersistentWatch_DeferredBehindAOneShot(t *testing.T) {
	pwNoLeaks(t)
	cl := zktest.Shared(t)
	c := newClient(t)
	base := pwBase(t, c)
	other := newClient(t)
	pwCreate(t, c, base)
	_, _, once, err := c.GetData().ForPathW(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.AddWatch().Recursive().ForPath(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	if _, err := other.SetData().ForPath(t.Context(), base, []byte("1")); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-once:
		if ev.Type != zk.EventNodeDataChanged {
			t.Fatalf("one-shot event %v", ev)
		}
	case <-time.After(pwEventBound):
		t.Fatal("the one-shot did not fire")
	}
	// The change that fired the one-shot may reach the watch too; then
	// Resync once the watch is set.
	for {
		ev := pwNext(t, w, "resync")
		if ev.Type == framework.PersistentResync {
			break
		}
		if ev.Type != framework.PersistentDataChanged || ev.Path != base {
			t.Fatalf("event %s %s before Resync", ev.Type, ev.Path)
		}
	}
	pwCreate(t, other, base+"/x")
	pwExpect(t, w, framework.PersistentCreated, base+"/x")
	if got := pwWatches(t, cl, c.SessionID(), base); got != 1 {
		t.Fatalf("server watches on %s = %d, want 1", base, got)
	}
}

// Closing a persistent watch that serves a one-shot watch of the client
// on its path keeps the server watch (removeWatches would take both,
// ZOOKEEPER-4472) until the one-shot has fired; then it is removed.
func TestPersistentWatch_RemovalWaitsForOneShot(t *testing.T) {
	pwNoLeaks(t)
	cl := zktest.Shared(t)
	c := newClient(t)
	base := pwBase(t, c)
	other := newClient(t)
	pwCreate(t, c, base)
	w, err := c.AddWatch().ForPath(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	_, _, once, err := c.GetData().ForPathW(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := pwWatches(t, cl, c.SessionID(), base); got == 0 {
		t.Fatal("the server watch was removed while a one-shot watch it serves waits")
	}
	if _, err := other.SetData().ForPath(t.Context(), base, []byte("1")); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-once:
		if ev.Type != zk.EventNodeDataChanged || ev.Path != base {
			t.Fatalf("one-shot event %v", ev)
		}
	case <-time.After(pwEventBound):
		t.Fatal("the one-shot did not fire")
	}
	eventually(t, pwEventBound, func() bool { return len(dbWatchesOf(t, cl, c.SessionID())) == 0 },
		"the server watch removed once the one-shot fired")
}
