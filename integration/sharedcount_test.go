package integration

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/sharedcount"
	"github.com/go-curator/curator/zktest"
	"go.uber.org/goleak"
)

// countersNoLeaks checks, after every cleanup registered later (clients,
// recipes, servers), that the test left no goroutine behind.
func countersNoLeaks(t *testing.T) {
	t.Helper()
	zktest.Shared(t) // its goroutines live as long as the binary
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// counterPath returns the test's path on the shared server, deleted with
// its children before the test and after it, so the test can run again
// and leaves nothing behind.
func counterPath(t *testing.T) string {
	t.Helper()
	p := testPath(t)
	c := newClient(t)
	del := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, p); err != nil {
			t.Errorf("delete %s: %v", p, err)
		}
	}
	del()
	t.Cleanup(del)
	return p
}

// startSharedCount builds and starts a Count, closed at cleanup.
func startSharedCount(t *testing.T, c *framework.Client, path string, seed int32) *sharedcount.Count {
	t.Helper()
	cnt, err := sharedcount.New(c, path, seed)
	if err != nil {
		t.Fatalf("sharedcount.New: %v", err)
	}
	if err := cnt.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { cnt.Close() })
	return cnt
}

// countRecorder records what a listener receives.
type countRecorder struct {
	mu     sync.Mutex
	values []int32
	states []framework.ConnectionState
	errs   []error
}

func (r *countRecorder) listener() sharedcount.Listener[int32] {
	return sharedcount.Listener[int32]{
		Changed: func(v sharedcount.VersionedValue[int32]) {
			r.mu.Lock()
			r.values = append(r.values, v.Value)
			r.mu.Unlock()
		},
		StateChanged: func(s framework.ConnectionState) {
			r.mu.Lock()
			r.states = append(r.states, s)
			r.mu.Unlock()
		},
		Error: func(err error) {
			r.mu.Lock()
			r.errs = append(r.errs, err)
			r.mu.Unlock()
		},
	}
}

func (r *countRecorder) snapshot() ([]int32, []framework.ConnectionState, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.values), slices.Clone(r.states), slices.Clone(r.errs)
}

func (r *countRecorder) last() (int32, bool) {
	v, _, _ := r.snapshot()
	if len(v) == 0 {
		return 0, false
	}
	return v[len(v)-1], true
}

func (r *countRecorder) sawState(s framework.ConnectionState) bool {
	_, states, _ := r.snapshot()
	return slices.Contains(states, s)
}

func TestSharedCount_ListenersSeeEveryValue(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t)
	recs := make([]*countRecorder, 5)
	for i := range recs {
		recs[i] = &countRecorder{}
		cnt := startSharedCount(t, newClient(t), path, 0)
		cnt.AddListener(recs[i].listener())
	}
	writer := startSharedCount(t, newClient(t), path, 0)

	seed := rand.Uint64()
	t.Logf("rand seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	var want []int32
	prev := int32(0)
	for range 100 {
		v := rng.Int32N(1_000_000) - 500_000
		if v == prev {
			v++
		}
		prev = v
		if err := writer.SetCount(t.Context(), v); err != nil {
			t.Fatal(err)
		}
		want = append(want, v)
		for i, r := range recs {
			eventually(t, 10*time.Second, func() bool { got, ok := r.last(); return ok && got == v },
				"listener "+string(rune('0'+i))+" sees the value just written")
		}
	}
	for i, r := range recs {
		got, _, errs := r.snapshot()
		if !slices.Equal(got, want) {
			t.Errorf("listener %d saw %d values %v;\nwant the %d written, in order: %v", i, len(got), got, len(want), want)
		}
		if len(errs) > 0 {
			t.Errorf("listener %d got errors: %v", i, errs)
		}
	}
	if got := writer.Count(); got != prev {
		t.Errorf("writer's Count = %d, want %d", got, prev)
	}
}

func TestSharedCount_VersionedSets(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t)
	c := newClient(t)
	cnt := startSharedCount(t, c, path, 0)
	ctx := t.Context()

	first := cnt.VersionedValue()
	if first.Value != 0 || first.Version != 0 || first.Mzxid == 0 {
		t.Fatalf("fresh VersionedValue = %+v; want value 0 at version 0 with a zxid", first)
	}
	for n := int32(1); n <= 3; n++ {
		prev := cnt.VersionedValue()
		ok, err := cnt.TrySetCount(ctx, prev, n)
		if err != nil || !ok {
			t.Fatalf("TrySetCount(%+v, %d) = %v, %v; want true", prev, n, ok, err)
		}
		if got := cnt.VersionedValue(); got.Value != n || got.Version != n || got.Mzxid <= prev.Mzxid {
			t.Fatalf("after set %d: VersionedValue = %+v (prev %+v)", n, got, prev)
		}
	}
	// A stale VersionedValue fails and changes nothing.
	if ok, err := cnt.TrySetCount(ctx, first, 100); err != nil || ok {
		t.Fatalf("TrySetCount with a stale value = %v, %v; want false, nil", ok, err)
	}
	// An outside write makes the current one stale too.
	held := cnt.VersionedValue()
	if _, err := c.SetData().ForPath(ctx, path, []byte{0, 0, 0, 7}); err != nil {
		t.Fatal(err)
	}
	if ok, err := cnt.TrySetCount(ctx, held, 100); err != nil || ok {
		t.Fatalf("TrySetCount after an outside write = %v, %v; want false, nil", ok, err)
	}
	eventually(t, 5*time.Second, func() bool { return cnt.Count() == 7 }, "the outside write reaches the cache")
	if ok, err := cnt.TrySetCount(ctx, cnt.VersionedValue(), 8); err != nil || !ok {
		t.Fatalf("TrySetCount with the refreshed value = %v, %v; want true", ok, err)
	}
	data, stat, err := c.GetData().ForPath(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, []byte{0, 0, 0, 8}) || stat.Version != 5 {
		t.Errorf("node holds %x at version %d; want 00000008 (Curator's int) at version 5", data, stat.Version)
	}
}

func TestSharedCount_FirstSeedWins(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t) + "/deep/count"
	a := startSharedCount(t, newClient(t), path, 10)
	b := startSharedCount(t, newClient(t), path, 20)
	if a.Count() != 10 || b.Count() != 10 {
		t.Fatalf("counts = %d, %d; want both 10, the first seed", a.Count(), b.Count())
	}
}

func TestSharedCount_FollowsDeleteAndRecreate(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t)
	c := newClient(t)
	cnt := startSharedCount(t, c, path, 0)
	rec := &countRecorder{}
	cnt.AddListener(rec.listener())
	ctx := t.Context()
	for range 3 { // version 3
		if err := cnt.SetCount(ctx, cnt.Count()+1); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Delete().ForPath(ctx, path); err != nil {
		t.Fatal(err)
	}
	// The new node starts again at version 0: only its zxid says it is newer.
	if _, err := c.Create().ForPath(ctx, path, []byte{0, 0, 0, 42}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool { return cnt.Count() == 42 }, "the re-created node's value is read")
	if v := cnt.VersionedValue(); v.Version != 0 {
		t.Errorf("VersionedValue = %+v; want version 0 of the new node", v)
	}
	// Listeners are told on their own goroutine, after the cache changed.
	eventually(t, 5*time.Second, func() bool { got, _ := rec.last(); return got == 42 }, "the listener is told the re-created node's value")
}

func TestSharedCount_CorruptData(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t)
	c := newClient(t)
	ctx := t.Context()
	for _, n := range []int{0, 1, 2, 3, 5, 8} {
		p := path + "/len" + string(rune('0'+n))
		if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, p, bytes.Repeat([]byte{'x'}, n)); err != nil {
			t.Fatal(err)
		}
		cnt, err := sharedcount.New(c, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		err = cnt.Start(ctx)
		if !errors.Is(err, sharedcount.ErrCorrupt) || !strings.Contains(err.Error(), p) {
			t.Errorf("%d bytes: Start = %v; want ErrCorrupt naming %s", n, err, p)
		}
		if err := cnt.SetCount(ctx, 1); !errors.Is(err, sharedcount.ErrClosed) {
			t.Errorf("%d bytes: SetCount after a failed Start = %v; want ErrClosed", n, err)
		}
	}

	// A running count that meets corrupt data tells its listeners, keeps
	// its last good value, and recovers with the next good write.
	p := path + "/running"
	cnt := startSharedCount(t, c, p, 5)
	rec := &countRecorder{}
	cnt.AddListener(rec.listener())
	if _, err := c.SetData().ForPath(ctx, p, []byte("foo")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() bool { _, _, errs := rec.snapshot(); return len(errs) > 0 },
		"the listener hears of the corrupt data")
	_, _, errs := rec.snapshot()
	if !errors.Is(errs[0], sharedcount.ErrCorrupt) || !strings.Contains(errs[0].Error(), p) {
		t.Errorf("listener error = %v; want ErrCorrupt naming %s", errs[0], p)
	}
	if cnt.Count() != 5 {
		t.Errorf("Count = %d; want the last good value 5", cnt.Count())
	}
	if err := cnt.SetCount(ctx, 6); err != nil {
		t.Fatal(err)
	}
	if cnt.Count() != 6 {
		t.Errorf("Count after SetCount = %d, want 6", cnt.Count())
	}
}

func TestSharedCount_Misuse(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t)
	ctx := t.Context()
	c := newClient(t)
	cnt := startSharedCount(t, c, path, 1)
	if err := cnt.Start(ctx); !errors.Is(err, sharedcount.ErrAlreadyStarted) {
		t.Errorf("second Start = %v, want ErrAlreadyStarted", err)
	}
	if err := cnt.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cnt.SetCount(ctx, 2); !errors.Is(err, sharedcount.ErrClosed) {
		t.Errorf("SetCount after Close = %v, want ErrClosed", err)
	}
	if ok, err := cnt.TrySetCount(ctx, cnt.VersionedValue(), 2); ok || !errors.Is(err, sharedcount.ErrClosed) {
		t.Errorf("TrySetCount after Close = %v, %v; want false, ErrClosed", ok, err)
	}
	if cnt.Count() != 1 {
		t.Errorf("Count after Close = %d, want the last value 1", cnt.Count())
	}

	// Closing the client under a running count ends its loop; Close joins.
	c2, err := builder(t, zktest.Shared(t).ConnectString()).Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cnt2 := startSharedCount(t, c2, path, 1)
	c2.Close()
	if err := cnt2.SetCount(ctx, 3); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("SetCount on a closed client = %v, want framework.ErrClosed", err)
	}
	cnt2.Close()

	// A Count started on a client that was never started fails clearly.
	c3, err := builder(t, zktest.Shared(t).ConnectString()).Build()
	if err != nil {
		t.Fatal(err)
	}
	cnt3, err := sharedcount.New(c3, path, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := cnt3.Start(ctx); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Start on an unstarted client = %v, want framework.ErrNotStarted", err)
	}
	if kids := children(t, c, path); len(kids) != 0 {
		t.Errorf("the count node has children %v", kids)
	}
}

func TestSharedCount_SuspendedAndRefreshedAfterReconnect(t *testing.T) {
	countersNoLeaks(t)
	cluster := zktest.Start(t)
	proxy, err := zktest.NewProxy(cluster.ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	path := testPath(t)
	ctx := t.Context()

	viaProxy := startClient(t, builder(t, proxy.Addr()))
	direct := startClient(t, builder(t, cluster.ConnectString()))
	cnt := startSharedCount(t, viaProxy, path, 1)
	rec := &countRecorder{}
	cnt.AddListener(rec.listener())
	other := startSharedCount(t, direct, path, 1)

	// Cut the first client off; another writes while it cannot see.
	proxy.Refuse(true)
	proxy.Reset()
	eventually(t, 5*time.Second, func() bool { return rec.sawState(framework.Suspended) },
		"Suspended reaches the listener when the connection drops")
	if err := other.SetCount(ctx, 42); err != nil {
		t.Fatal(err)
	}
	proxy.Refuse(false)
	eventually(t, 10*time.Second, func() bool { return rec.sawState(framework.Reconnected) },
		"Reconnected reaches the listener")
	eventually(t, 5*time.Second, func() bool { return cnt.Count() == 42 },
		"the value written while disconnected is read after the reconnect")

	// Stop the server itself: both clients are suspended.
	server := cluster.Servers()[0]
	before := len(statesOf(rec))
	if err := server.Stop(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() bool { return slices.Contains(statesOf(rec)[before:], framework.Suspended) },
		"Suspended reaches the listener when the server stops")
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() bool {
		return other.SetCount(ctx, 43) == nil
	}, "the other client writes after the restart")
	eventually(t, 20*time.Second, func() bool { return cnt.Count() == 43 },
		"the value is refreshed after the restart")
	if got, _ := rec.last(); got != 43 {
		t.Errorf("listener's last value = %d, want 43", got)
	}
	_, _, errs := rec.snapshot()
	for _, err := range errs {
		if errors.Is(err, sharedcount.ErrCorrupt) {
			t.Errorf("unexpected listener error: %v", err)
		}
	}
}

func statesOf(r *countRecorder) []framework.ConnectionState {
	_, s, _ := r.snapshot()
	return s
}

// BenchmarkSharedCount_TrySet16 is issue 5's speed check: 16 clients each
// adding 1 with a TrySetCount loop on one count (Curator: about 730/s).
func BenchmarkSharedCount_TrySet16(b *testing.B) {
	path := testPath(b)
	contendedBench(b, func(c *framework.Client) func() error {
		cnt, err := sharedcount.New(c, path, 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := cnt.Start(b.Context()); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cnt.Close() })
		return func() error {
			for {
				prev := cnt.VersionedValue()
				ok, err := cnt.TrySetCount(b.Context(), prev, prev.Value+1)
				if err != nil || ok {
					return err
				}
			}
		}
	})
}
