package framework

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework/internal/transport"
	"github.com/go-zookeeper/zk"
)

func TestWatchBuilder_BadArguments(t *testing.T) {
	c, err := NewBuilder().ConnectString("127.0.0.1:1").Build()
	if err != nil {
		t.Fatal(err)
	}
	var nilClient *Client
	ctx := context.Background()
	done, cancel := context.WithCancel(ctx)
	cancel()
	for name, tc := range map[string]struct {
		b    WatchBuilder
		ctx  context.Context
		path string
		want error
	}{
		"unknown mode":         {c.Watch().WithMode(WatchMode(7)), ctx, "/a", ErrInvalidArgument},
		"negative mode":        {c.Watch().WithMode(WatchMode(-1)), ctx, "/a", ErrInvalidArgument},
		"depth below 0":        {c.Watch().WithMode(WatchTree).WithMaxDepth(-1), ctx, "/a", ErrInvalidArgument},
		"depth on a node":      {c.Watch().WithMaxDepth(2), ctx, "/a", ErrInvalidArgument},
		"depth on children":    {c.Watch().WithMode(WatchChildren).WithMaxDepth(0), ctx, "/a", ErrInvalidArgument},
		"not started":          {c.Watch(), ctx, "/a", ErrNotStarted},
		"nil client":           {nilClient.Watch(), ctx, "/a", ErrNilClient},
		"zero client":          {(&Client{}).Watch(), ctx, "/a", ErrNotStarted},
		"relative path":        {c.Watch(), ctx, "a", ErrNotStarted},
		"tree, not started":    {c.Watch().WithMode(WatchTree).WithMaxDepth(0), ctx, "/a", ErrNotStarted},
		"nil ctx, not started": {c.Watch(), nil, "/a", ErrNotStarted},
		"done ctx, zero":       {(&Client{}).Watch(), done, "/a", ErrNotStarted},
	} {
		t.Run(name, func(t *testing.T) {
			ch, err := tc.b.ForPath(tc.ctx, tc.path)
			if !errors.Is(err, tc.want) || ch != nil {
				t.Errorf("ForPath = %v, %v; want an error matching %v", ch, err, tc.want)
			}
		})
	}
}

func TestWatchEventType_String(t *testing.T) {
	for typ, want := range map[WatchEventType]string{
		WatchCreated: "CREATED", WatchChanged: "CHANGED", WatchDeleted: "DELETED",
		WatchChildrenChanged: "CHILDREN_CHANGED", WatchSynced: "SYNCED", WatchResynced: "RESYNCED",
		WatchFailed: "FAILED", 0: "UNKNOWN", 99: "UNKNOWN",
	} {
		if got := typ.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(typ), got, want)
		}
	}
}

// regFixture is a registry with one fake connection and a lasting watch
// whose notifications are counted.
type regFixture struct {
	r    watchRegistry
	conn *zk.Conn
	w    *wire
	l    *lasting
	n    *wnode
}

func newRegFixture() *regFixture {
	return &regFixture{conn: &zk.Conn{}, w: transport.NewWire(nil), l: &lasting{wake: make(chan struct{}, 1)}, n: &wnode{path: "/a"}}
}

func (f *regFixture) notified() int {
	f.l.mu.Lock()
	defer f.l.mu.Unlock()
	n := len(f.l.fired)
	f.l.fired = nil
	return n
}

func fired(typ zk.EventType) <-chan zk.Event {
	ch := make(chan zk.Event, 1)
	ch <- zk.Event{Type: typ}
	close(ch)
	return ch
}

func TestWatchRegistry(t *testing.T) {
	ev := func(typ zk.EventType) zk.Event { return zk.Event{Type: typ, Path: "/a"} }
	// watch is a read that sets a watch of type typ, fired by mask.
	watch := func(t *testing.T, f *regFixture, kind, mask, typ uint8) *arm {
		t.Helper()
		a, shared := f.r.pre(f.conn, "/a", f.l, f.n, kind, mask, typ)
		if shared {
			t.Errorf("pre shares a watch the registry does not hold")
		}
		f.r.attach(a, make(chan zk.Event, 1), nil, f.w, typ)
		return a
	}
	for _, tc := range []struct {
		name    string
		run     func(t *testing.T, f *regFixture)
		watches int64 // the wire's count at the end
		notes   int   // notifications at the end
		arms    int   // arms left at /a
		held    int   // held watches left at /a
	}{
		{"attached, then fired", func(t *testing.T, f *regFixture) {
			watch(t, f, kindData, bitData, bitData)
			f.r.dispatch(f.conn, ev(zk.EventNodeDataChanged))
		}, 0, 1, 0, 0},
		{"attached, other type", func(t *testing.T, f *regFixture) {
			watch(t, f, kindData, bitData, bitData)
			f.r.dispatch(f.conn, ev(zk.EventNodeChildrenChanged))
			f.r.dispatch(f.conn, ev(zk.EventNodeCreated))
		}, 1, 0, 1, 1},
		{"other connection", func(t *testing.T, f *regFixture) {
			watch(t, f, kindData, bitData, bitData)
			f.r.dispatch(&zk.Conn{}, ev(zk.EventNodeDeleted))
		}, 1, 0, 1, 1},
		{"read failed", func(t *testing.T, f *regFixture) {
			a, _ := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitData, bitData)
			f.r.attach(a, nil, zk.ErrNoNode, f.w, bitData)
			f.r.dispatch(f.conn, ev(zk.EventNodeDeleted))
		}, 0, 0, 0, 0},
		{"event before attach, channel fired", func(t *testing.T, f *regFixture) {
			a, _ := f.r.pre(f.conn, "/a", f.l, f.n, kindChildren, bitChild, bitChild)
			f.r.dispatch(f.conn, ev(zk.EventNodeChildrenChanged))
			f.r.attach(a, fired(zk.EventNodeChildrenChanged), nil, f.w, bitChild)
		}, 0, 1, 0, 0},
		{"event before attach, channel live", func(t *testing.T, f *regFixture) {
			a, _ := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitExist|bitData, bitExist|bitData)
			f.r.dispatch(f.conn, ev(zk.EventNodeCreated))
			f.r.attach(a, make(chan zk.Event, 1), nil, f.w, bitData)
			time.Sleep(2 * sweepDelay) // the sweep keeps a live channel
			// A watch in doubt is counted, never shared.
			if _, shared := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitData, bitData); shared {
				t.Errorf("a watch in doubt is shared")
			}
		}, 1, 1, 1, 1},
		{"event before attach, fired late", func(t *testing.T, f *regFixture) {
			a, _ := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitData, bitData)
			f.r.dispatch(f.conn, ev(zk.EventNodeDeleted))
			ch := make(chan zk.Event, 1)
			f.r.attach(a, ch, nil, f.w, bitData)
			ch <- zk.Event{Type: zk.EventNodeDeleted} // go-zookeeper fires it after the callback
			close(ch)
			time.Sleep(2 * sweepDelay)
		}, 0, 1, 0, 0},
		{"session ended", func(t *testing.T, f *regFixture) {
			for _, m := range []uint8{bitData, bitChild, bitExist} {
				watch(t, f, kindData, m, m)
			}
			f.r.dispatch(f.conn, zk.Event{Type: zk.EventNotWatching, Path: "/a", Err: zk.ErrSessionExpired})
		}, 0, 3, 0, 0},
		{"session event ignored", func(t *testing.T, f *regFixture) {
			watch(t, f, kindData, bitData, bitData)
			f.r.dispatch(f.conn, zk.Event{Type: zk.EventSession, Path: "/a"})
		}, 1, 0, 1, 1},
		{"dead watch", func(t *testing.T, f *regFixture) {
			f.l.dead = true
			watch(t, f, kindData, bitData, bitData)
			f.r.dispatch(f.conn, ev(zk.EventNodeDataChanged))
		}, 0, 0, 0, 0},
		{"shared watch fires every arm", func(t *testing.T, f *regFixture) {
			watch(t, f, kindData, bitData, bitData)
			other := &lasting{wake: make(chan struct{}, 1)}
			a, shared := f.r.pre(f.conn, "/a", other, f.n, kindData, bitData, bitData)
			if !shared {
				t.Errorf("a live watch of the type is not shared")
			}
			f.r.settle(a, nil)
			f.r.dispatch(f.conn, ev(zk.EventNodeDataChanged))
			if len(other.fired) != 1 || other.arms != nil {
				t.Errorf("the sharing watch got %d notifications, arms left %v", len(other.fired), other.arms)
			}
		}, 0, 1, 0, 0},
		{"shared read failed", func(t *testing.T, f *regFixture) {
			watch(t, f, kindData, bitData, bitData)
			a, _ := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitData, bitData)
			f.r.settle(a, zk.ErrConnectionClosed)
		}, 1, 0, 1, 1},
		{"no sharing across types", func(t *testing.T, f *regFixture) {
			watch(t, f, kindChildren, bitChild, bitChild)
			if _, shared := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitData, bitData); shared {
				t.Errorf("a children watch is shared by a data read")
			}
		}, 1, 0, 2, 1},
		{"exists shares an exist watch", func(t *testing.T, f *regFixture) {
			watch(t, f, kindData, bitExist|bitData, bitExist)
			if _, shared := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitExist|bitData, bitExist|bitData); !shared {
				t.Errorf("an exist watch is not shared by an exists read")
			}
		}, 1, 0, 2, 1},
		{"unregistered watch", func(t *testing.T, f *regFixture) {
			watch(t, f, kindData, bitData, bitData)
			watch(t, f, kindChildren, bitChild, bitChild)
			f.r.unregister(f.l)
			if f.l.arms != nil {
				t.Errorf("arms left on the watch's list")
			}
			// The held watches stay (go-zookeeper holds them) until
			// their events, which find no arm.
			f.r.mu.Lock()
			k := f.r.keys[armKey{f.conn, "/a"}]
			if k == nil || len(k.arms) != 0 || len(k.held) != 2 {
				t.Errorf("after unregister: %+v", k)
			}
			f.r.mu.Unlock()
			f.r.dispatch(f.conn, ev(zk.EventNodeDeleted))
		}, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newRegFixture()
			tc.run(t, f)
			f.r.mu.Lock()
			var arms, held int
			if k := f.r.keys[armKey{f.conn, "/a"}]; k != nil {
				arms, held = len(k.arms), len(k.held)
			}
			f.r.mu.Unlock()
			if got := f.w.Watches(); got != tc.watches {
				t.Errorf("wire counts %d watches, want %d", got, tc.watches)
			}
			if got := f.notified(); got != tc.notes {
				t.Errorf("%d notifications, want %d", got, tc.notes)
			}
			if arms != tc.arms || held != tc.held {
				t.Errorf("%d arms and %d held watches left, want %d and %d", arms, held, tc.arms, tc.held)
			}
		})
	}
}

func TestLasting_Bits(t *testing.T) {
	for k, want := range map[uint8]int{0: 0, kindData: 1, kindChildren: 1, kindData | kindChildren: 2} {
		if got := bits(k); got != want {
			t.Errorf("bits(%b) = %d, want %d", k, got, want)
		}
	}
}

// A node's new incarnation is reported only when it falls within its
// parent's reported incarnation: created with or after the parent, and
// no later than the parent's last known child change.
func TestLasting_Placed(t *testing.T) {
	l := &lasting{}
	root := &wnode{path: "/r"}
	parent := &wnode{path: "/r/p", parent: root, present: true, czxid: 10, pzxid: 20}
	for _, tc := range []struct {
		name  string
		n     *wnode
		czxid int64
		want  bool
	}{
		{"the root", root, 5, true},
		{"created after the parent, listed", &wnode{parent: parent}, 15, true},
		{"created in the parent's transaction", &wnode{parent: parent}, 10, true},
		{"the parent's last child change", &wnode{parent: parent}, 20, true},
		{"created after the parent's listing", &wnode{parent: parent}, 21, false},
		{"older than the parent", &wnode{parent: parent}, 9, false},
		{"under a parent not reported", &wnode{parent: &wnode{czxid: 1, pzxid: 100}}, 50, false},
	} {
		if got := l.placed(tc.n, &zk.Stat{Czxid: tc.czxid}); got != tc.want {
			t.Errorf("%s: placed = %v, want %v", tc.name, got, tc.want)
		}
	}
}
