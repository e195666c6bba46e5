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
	for _, tc := range []struct {
		name    string
		run     func(f *regFixture)
		watches int64 // the wire's count at the end
		notes   int   // notifications at the end
		arms    int   // arms left at /a
	}{
		{"attached, then fired", func(f *regFixture) {
			a := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitData)
			f.r.attach(a, make(chan zk.Event, 1), nil, f.w, bitData)
			f.r.dispatch(f.conn, ev(zk.EventNodeDataChanged))
		}, 0, 1, 0},
		{"attached, other type", func(f *regFixture) {
			a := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitData)
			f.r.attach(a, make(chan zk.Event, 1), nil, f.w, bitData)
			f.r.dispatch(f.conn, ev(zk.EventNodeChildrenChanged))
			f.r.dispatch(f.conn, ev(zk.EventNodeCreated))
		}, 1, 0, 1},
		{"other connection", func(f *regFixture) {
			a := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitData)
			f.r.attach(a, make(chan zk.Event, 1), nil, f.w, bitData)
			f.r.dispatch(&zk.Conn{}, ev(zk.EventNodeDeleted))
		}, 1, 0, 1},
		{"read failed", func(f *regFixture) {
			a := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitData)
			f.r.attach(a, nil, zk.ErrNoNode, f.w, bitData)
			f.r.dispatch(f.conn, ev(zk.EventNodeDeleted))
		}, 0, 0, 0},
		{"event before attach, channel fired", func(f *regFixture) {
			a := f.r.pre(f.conn, "/a", f.l, f.n, kindChildren, bitChild)
			f.r.dispatch(f.conn, ev(zk.EventNodeChildrenChanged))
			f.r.attach(a, fired(zk.EventNodeChildrenChanged), nil, f.w, bitChild)
		}, 0, 1, 0},
		{"event before attach, channel live", func(f *regFixture) {
			a := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitExist|bitData)
			f.r.dispatch(f.conn, ev(zk.EventNodeCreated))
			f.r.attach(a, make(chan zk.Event, 1), nil, f.w, bitData)
			time.Sleep(2 * sweepDelay) // the sweep keeps a live channel
		}, 1, 1, 1},
		{"event before attach, fired late", func(f *regFixture) {
			a := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitData)
			f.r.dispatch(f.conn, ev(zk.EventNodeDeleted))
			ch := make(chan zk.Event, 1)
			f.r.attach(a, ch, nil, f.w, bitData)
			ch <- zk.Event{Type: zk.EventNodeDeleted} // go-zookeeper fires it after the callback
			close(ch)
			time.Sleep(2 * sweepDelay)
		}, 0, 1, 0},
		{"session ended", func(f *regFixture) {
			for _, m := range []uint8{bitData, bitChild, bitExist} {
				a := f.r.pre(f.conn, "/a", f.l, f.n, kindData, m)
				f.r.attach(a, make(chan zk.Event, 1), nil, f.w, m)
			}
			f.r.dispatch(f.conn, zk.Event{Type: zk.EventNotWatching, Path: "/a", Err: zk.ErrSessionExpired})
		}, 0, 3, 0},
		{"session event ignored", func(f *regFixture) {
			a := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitData)
			f.r.attach(a, make(chan zk.Event, 1), nil, f.w, bitData)
			f.r.dispatch(f.conn, zk.Event{Type: zk.EventSession, Path: "/a"})
		}, 1, 0, 1},
		{"dead watch", func(f *regFixture) {
			f.l.dead = true
			a := f.r.pre(f.conn, "/a", f.l, f.n, kindData, bitData)
			f.r.attach(a, make(chan zk.Event, 1), nil, f.w, bitData)
			f.r.dispatch(f.conn, ev(zk.EventNodeDataChanged))
		}, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newRegFixture()
			tc.run(f)
			f.r.mu.Lock()
			arms := len(f.r.arms[armKey{f.conn, "/a"}])
			f.r.mu.Unlock()
			if got := f.w.Watches(); got != tc.watches {
				t.Errorf("wire counts %d watches, want %d", got, tc.watches)
			}
			if got := f.notified(); got != tc.notes {
				t.Errorf("%d notifications, want %d", got, tc.notes)
			}
			if arms != tc.arms {
				t.Errorf("%d arms left, want %d", arms, tc.arms)
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
