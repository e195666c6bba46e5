package integration

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/recipes/sharedcount"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

func newSem(t testing.TB, c *framework.Client, path string, max int, opts ...semaphorev2.Option) *semaphorev2.Semaphore {
	t.Helper()
	s, err := semaphorev2.New(c, path, max, opts...)
	if err != nil {
		t.Fatalf("semaphorev2.New: %v", err)
	}
	return s
}

// gauge counts the leases held at once and remembers the peak.
type gauge struct{ now, peak atomic.Int32 }

func (g *gauge) in(n int) {
	v := g.now.Add(int32(n))
	for p := g.peak.Load(); v > p && !g.peak.CompareAndSwap(p, v); p = g.peak.Load() {
	}
}

func (g *gauge) out(n int) { g.now.Add(-int32(n)) }

// awaitLease waits up to 10 s for a lease from an acquiring goroutine.
func awaitLease(t testing.TB, got <-chan *semaphorev2.Lease, what string) *semaphorev2.Lease {
	t.Helper()
	select {
	case l := <-got:
		if l == nil {
			t.Fatalf("%s: no lease", what)
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no lease within 10 s", what)
	}
	return nil
}

func nodeNames(leases []*semaphorev2.Lease) []string {
	names := make([]string, len(leases))
	for i, l := range leases {
		names[i] = l.NodeName()
	}
	slices.Sort(names)
	return names
}

func TestSemaphore_MaxOneSecondAcquireTimesOut(t *testing.T) {
	path := testPath(t)
	ca := newClient(t)
	a, b := newSem(t, ca, path, 1), newSem(t, newClient(t), path, 1)
	ctx := t.Context()

	l, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, wait := range []time.Duration{300 * time.Millisecond, 0} {
		got, ok, err := b.TryAcquire(ctx, wait)
		if ok || err != nil || got != nil {
			t.Fatalf("TryAcquire(%v) while the only lease is held = %v, %v, %v; want nil, false, nil", wait, got, ok, err)
		}
	}
	if kids := children(t, ca, path+"/leases"); !slices.Equal(kids, []string{l.NodeName()}) {
		t.Fatalf("leases after two timed-out tries = %v; want only the holder's %s", kids, l.NodeName())
	}
	eventually(t, 5*time.Second, func() bool { return len(children(t, ca, path+"/locks")) == 0 }, "the internal lock is free")
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got, ok, err := b.TryAcquire(ctx, 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("TryAcquire after the close = %v, %v", ok, err)
	}
	got.Close(ctx)
}

func TestSemaphore_FourthOfThreeWaitsUntilOneCloses(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	ctx := t.Context()
	var held []*semaphorev2.Lease
	for i := 0; i < 3; i++ {
		l, err := newSem(t, newClient(t), path, 3).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	fourth := newSem(t, c, path, 3)
	if _, ok, err := fourth.TryAcquire(ctx, 300*time.Millisecond); ok || err != nil {
		t.Fatalf("4th TryAcquire with 3 of 3 held = %v, %v; want false, nil", ok, err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := fourth.Acquire(ctx)
		if err == nil {
			err = l.Close(ctx)
		}
		got <- err
	}()
	eventually(t, 5*time.Second, func() bool { return len(children(t, c, path+"/locks")) == 1 }, "the 4th queues on the lock")
	select {
	case err := <-got:
		t.Fatalf("the 4th acquired while 3 of 3 were held (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := held[1].Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the 4th after a close: %v", err)
	}
	for _, l := range held {
		l.Close(ctx)
	}
	if kids := children(t, c, path+"/leases"); len(kids) != 0 {
		t.Fatalf("leases left: %v", kids)
	}
}

func TestSemaphore_NodeLayoutDataAndParticipants(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	ctx := t.Context()
	plain := newSem(t, c, path, 5)
	tagged := newSem(t, newClient(t), path, 5, semaphorev2.WithData([]byte("worker-7")))
	if p, err := plain.Participants(ctx); err != nil || len(p) != 0 {
		t.Fatalf("Participants before any lease = %v, %v; want empty", p, err)
	}
	leases, err := plain.AcquireN(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	one, err := tagged.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all := append(slices.Clone(leases), one)
	for _, l := range all {
		name := l.NodeName()
		stripped := framework.StripProtected(name)
		if !framework.IsProtected(name) || !strings.HasPrefix(stripped, "lease-") || len(stripped) != len("lease-")+10 {
			t.Fatalf("lease node %q is not _c_<uuid>-lease-<seq10>", name)
		}
		if l.Node() != path+"/leases/"+name {
			t.Fatalf("Node() = %q, want under %s/leases", l.Node(), path)
		}
	}
	data, err := leases[0].Data(ctx)
	if err != nil || string(data) != string(c.DefaultData()) {
		t.Fatalf("default lease data = %q, %v; want the client's default data %q", data, err, c.DefaultData())
	}
	if data, err := one.Data(ctx); err != nil || string(data) != "worker-7" {
		t.Fatalf("WithData lease data = %q, %v", data, err)
	}
	_, stat, err := c.GetData().ForPath(ctx, leases[0].Node())
	if err != nil || stat.EphemeralOwner != c.SessionID() {
		t.Fatalf("lease node is not an ephemeral of the holder's session: %+v, %v", stat, err)
	}
	for _, s := range []*semaphorev2.Semaphore{plain, tagged} {
		p, err := s.Participants(ctx)
		slices.Sort(p)
		if err != nil || !slices.Equal(p, nodeNames(all)) {
			t.Fatalf("Participants = %v, %v; want the 4 leases held %v", p, err, nodeNames(all))
		}
	}
	if err := plain.ReturnAll(ctx, leases); err != nil {
		t.Fatal(err)
	}
	if p, err := tagged.Participants(ctx); err != nil || !slices.Equal(p, []string{one.NodeName()}) {
		t.Fatalf("Participants after ReturnAll = %v, %v; want %v", p, err, one.NodeName())
	}
	if err := tagged.ReturnLease(ctx, one); err != nil {
		t.Fatal(err)
	}
	if _, err := one.Data(ctx); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("Data of a returned lease = %v, want ErrNoNode", err)
	}
	eventually(t, 5*time.Second, func() bool { return len(children(t, c, path+"/locks")) == 0 }, "no lock node left")
}

func TestSemaphore_FencingTokensGrowWithEachHolder(t *testing.T) {
	path := testPath(t)
	clients := []*framework.Client{newClient(t), newClient(t)}
	var last int64
	for i := 0; i < 8; i++ {
		l, err := newSem(t, clients[i%2], path, 1).Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		tok, err := l.FencingToken()
		if err != nil || tok <= last {
			t.Fatalf("holder %d token %d (err %v); previous %d: want strictly greater", i, tok, err, last)
		}
		last = tok
		select {
		case <-l.Lost():
			t.Fatal("a fresh lease is already lost")
		default:
		}
		if err := l.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSemaphore_ClosingHolderClientLetsAnotherAcquire(t *testing.T) {
	path := testPath(t)
	ca, cb := newClient(t), newClient(t)
	a, b := newSem(t, ca, path, 1), newSem(t, cb, path, 1)
	ctx := t.Context()
	held, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *semaphorev2.Lease, 1)
	go func() {
		l, err := b.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	eventually(t, 5*time.Second, func() bool { return len(children(t, cb, path+"/locks")) == 1 }, "the second client waits")
	ca.Close()
	select {
	case <-held.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("the closed client's lease did not report Lost")
	}
	l := awaitLease(t, got, "the second client, after the holder's client closed")
	if kids := children(t, cb, path+"/leases"); !slices.Equal(kids, []string{l.NodeName()}) {
		t.Fatalf("leases = %v; want only the new holder's", kids)
	}
	l.Close(ctx)
}

// TestSemaphore_RandomMaxAndQtyNeverExceedMax runs 10 clients × 100 loops
// of AcquireN with a random quantity. Each client's quantity is at most
// max/10, so the leases the others hold while waiting for more can never
// use up the maximum (AcquireN takes leases one after the other).
func TestSemaphore_RandomMaxAndQtyNeverExceedMax(t *testing.T) {
	path := testPath(t)
	max := 25 + rand.IntN(75)
	var g gauge
	var wg sync.WaitGroup
	var acquired atomic.Int32
	for i := 0; i < 10; i++ {
		s := newSem(t, newClient(t), path, max)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				qty := 1 + rand.IntN(max/10)
				leases, err := s.AcquireN(t.Context(), qty)
				if err != nil {
					t.Error(err)
					return
				}
				if len(leases) != qty {
					t.Errorf("AcquireN(%d) gave %d leases", qty, len(leases))
				}
				g.in(qty)
				acquired.Add(int32(qty))
				g.out(qty)
				if err := s.ReturnAll(t.Context(), leases); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if p := int(g.peak.Load()); p > max {
		t.Fatalf("%d leases held at once; max %d", p, max)
	}
	if kids := children(t, newClient(t), path+"/leases"); len(kids) != 0 {
		t.Fatalf("leases left: %v", kids)
	}
	t.Logf("max %d, %d leases taken", max, acquired.Load())
}

func TestSemaphore_TenClientsWithMaxFiveReachExactlyFive(t *testing.T) {
	path := testPath(t)
	observer := newClient(t)
	ctx := t.Context()
	var g gauge
	release := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		s := newSem(t, newClient(t), path, 5)
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := s.Acquire(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			g.in(1)
			<-release
			g.out(1)
			l.Close(ctx)
		}()
	}
	eventually(t, 10*time.Second, func() bool { return g.now.Load() == 5 }, "5 clients hold leases")
	if _, ok, err := newSem(t, observer, path, 5).TryAcquire(ctx, 300*time.Millisecond); ok || err != nil {
		t.Fatalf("an 11th TryAcquire with 5 of 5 held = %v, %v", ok, err)
	}
	if n := g.now.Load(); n != 5 {
		t.Fatalf("%d holders; want exactly 5", n)
	}
	if kids := children(t, observer, path+"/leases"); len(kids) != 5 {
		t.Fatalf("lease nodes %v; want 5", kids)
	}
	close(release)
	wg.Wait()
	if p := g.peak.Load(); p != 5 {
		t.Fatalf("peak %d leases held at once; want exactly 5", p)
	}
}

func TestSemaphore_HundredGoroutinesReleasedInChunks(t *testing.T) {
	const max, goroutines = 11, 100
	path := testPath(t)
	clients := []*framework.Client{newClient(t), newClient(t), newClient(t), newClient(t)}
	ctx := t.Context()
	var g gauge
	held := make(chan *semaphorev2.Lease, goroutines)
	var wg sync.WaitGroup
	for i := 0; i < goroutines; i++ {
		s := newSem(t, clients[i%len(clients)], path, max)
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := s.Acquire(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			g.in(1)
			held <- l
		}()
	}
	for released := 0; released < goroutines; {
		eventually(t, 10*time.Second, func() bool {
			return len(held) == min(max, goroutines-released)
		}, "the leases fill up")
		chunk := 1 + rand.IntN(len(held))
		for i := 0; i < chunk; i++ {
			l := <-held
			g.out(1)
			if err := l.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}
		released += chunk
	}
	wg.Wait()
	if p := g.peak.Load(); p != max {
		t.Fatalf("peak %d leases held at once; want %d", p, max)
	}
}

func TestSemaphore_AcquireNAllOrNone(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	ctx := t.Context()
	holder := newSem(t, newClient(t), path, 3)
	held, err := holder.AcquireN(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	s := newSem(t, c, path, 3)
	leases, ok, err := s.TryAcquireN(ctx, 2, 300*time.Millisecond)
	if ok || err != nil || leases != nil {
		t.Fatalf("TryAcquireN(2) with 1 free = %v, %v, %v; want nil, false, nil", leases, ok, err)
	}
	if kids := children(t, c, path+"/leases"); !slices.Equal(kids, nodeNames(held)) {
		t.Fatalf("leases after a timed-out AcquireN = %v; want only the 2 held %v (the one it took is returned)", kids, nodeNames(held))
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if leases, err := s.AcquireN(cctx, 2); !errors.Is(err, context.DeadlineExceeded) || leases != nil {
		t.Fatalf("cancelled AcquireN = %v, %v; want nil, DeadlineExceeded", leases, err)
	}
	if kids := children(t, c, path+"/leases"); !slices.Equal(kids, nodeNames(held)) {
		t.Fatalf("leases after a cancelled AcquireN = %v; want only the 2 held", kids)
	}
	eventually(t, 5*time.Second, func() bool { return len(children(t, c, path+"/locks")) == 0 }, "no lock node left")
	if err := holder.ReturnAll(ctx, held); err != nil {
		t.Fatal(err)
	}
	leases, err = s.AcquireN(ctx, 3)
	if err != nil || len(leases) != 3 {
		t.Fatalf("AcquireN(3) when free = %d leases, %v", len(leases), err)
	}
	s.ReturnAll(ctx, leases)
}

func TestSemaphore_CancelledWaitLeavesOnlyHeldLeases(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	ctx := t.Context()
	held, err := newSem(t, c, path, 2).AcquireN(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	s := newSem(t, newClient(t), path, 2)
	wctx, cancel := context.WithCancel(ctx)
	got := make(chan error, 1)
	go func() {
		_, err := s.Acquire(wctx)
		got <- err
	}()
	eventually(t, 5*time.Second, func() bool { return len(children(t, c, path+"/locks")) == 1 }, "the waiter queues")
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Acquire = %v, want context.Canceled", err)
	}
	if kids := children(t, c, path+"/leases"); !slices.Equal(kids, nodeNames(held)) {
		t.Fatalf("leases after the cancel = %v; want exactly the held %v", kids, nodeNames(held))
	}
	if kids := children(t, c, path+"/locks"); len(kids) != 0 {
		t.Fatalf("lock nodes after the cancel = %v", kids)
	}
	for _, l := range held {
		l.Close(ctx)
	}
}

func TestSemaphore_FiveHundredCancellationsLeaveNothing(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	ctx := t.Context()
	holder, err := newSem(t, c, path, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 500
	clients := []*framework.Client{c, newClient(t), newClient(t)}
	gate := make(chan struct{}, 50)
	var wg sync.WaitGroup
	var bad atomic.Int32
	for i := 0; i < n; i++ {
		wg.Add(1)
		gate <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-gate }()
			s, _ := semaphorev2.New(clients[i%3], path, 1)
			d := time.Duration(1+i%25) * time.Millisecond
			if i%2 == 0 {
				cctx, cancel := context.WithTimeout(ctx, d)
				defer cancel()
				if l, err := s.Acquire(cctx); !errors.Is(err, context.DeadlineExceeded) || l != nil {
					bad.Add(1)
				}
				return
			}
			if l, ok, err := s.TryAcquire(ctx, d); ok || err != nil || l != nil {
				bad.Add(1)
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d of %d cancelled acquires did not end as expected", bad.Load(), n)
	}
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path+"/locks")) == 0 }, "no lock node left")
	if kids := children(t, c, path+"/leases"); !slices.Equal(kids, []string{holder.NodeName()}) {
		t.Fatalf("leases = %v; want only the holder's", kids)
	}
	if err := holder.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, c, path+"/leases"); len(kids) != 0 {
		t.Fatalf("leases left: %v", kids)
	}
}

// TestSemaphore_WaiterNodeDeletedFromOutside deletes the node a waiter
// waits with. A go-curator waiter waits with its lock node (it makes its
// lease node only when there is room), so that is the node deleted. The
// waiter starts again under the retry policy, gets the lease when the
// holder leaves, and nothing is left behind.
func TestSemaphore_WaiterNodeDeletedFromOutside(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	ctx := t.Context()
	holder, err := newSem(t, c, path, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waiter := newSem(t, newClient(t), path, 1)
	got := make(chan *semaphorev2.Lease, 1)
	go func() {
		l, err := waiter.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	eventually(t, 5*time.Second, func() bool { return len(children(t, c, path+"/locks")) == 1 }, "the waiter queues")
	node := children(t, c, path+"/locks")[0]
	if err := c.Delete().ForPath(ctx, path+"/locks/"+node); err != nil {
		t.Fatal(err)
	}
	if err := holder.Close(ctx); err != nil {
		t.Fatal(err)
	}
	l := awaitLease(t, got, "the waiter, after its node was deleted")
	if kids := children(t, c, path+"/leases"); !slices.Equal(kids, []string{l.NodeName()}) {
		t.Fatalf("leases while the waiter holds = %v; want only its lease", kids)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, c, path+"/leases"); len(kids) != 0 {
		t.Fatalf("leases left: %v", kids)
	}
	eventually(t, 5*time.Second, func() bool { return len(children(t, c, path+"/locks")) == 0 }, "no lock node left")
	again, ok, err := newSem(t, c, path, 1).TryAcquire(ctx, 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("a new acquire afterwards = %v, %v", ok, err)
	}
	again.Close(ctx)
}

// TestSemaphore_HeldLeaseNodeDeletedFromOutside: a lease whose node is
// gone is free for another, and closing it is harmless.
func TestSemaphore_HeldLeaseNodeDeletedFromOutside(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	ctx := t.Context()
	l, err := newSem(t, c, path, 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete().ForPath(ctx, l.Node()); err != nil {
		t.Fatal(err)
	}
	other, ok, err := newSem(t, newClient(t), path, 1).TryAcquire(ctx, 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("acquire after the holder's node was deleted = %v, %v", ok, err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatalf("closing a lease whose node is gone = %v, want nil", err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatalf("closing twice = %v, want nil", err)
	}
	other.Close(ctx)
}

func TestSemaphore_ExpiredHolderLosesItsLease(t *testing.T) {
	path := testPath(t)
	cluster := zktest.Shared(t)
	ca := newClient(t)
	a, b := newSem(t, ca, path, 1), newSem(t, newClient(t), path, 1)
	held, err := a.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *semaphorev2.Lease, 1)
	go func() {
		l, err := b.Acquire(t.Context())
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	if err := zktest.ExpireSession(t.Context(), cluster.ConnectString(), ca.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held.Lost():
	case <-time.After(3 * testSessionTimeout):
		t.Fatal("the expired holder's Lost() did not close")
	}
	l := awaitLease(t, got, "the other client, after the holder's session expired")
	if err := held.Close(t.Context()); err != nil {
		t.Logf("closing the lost lease: %v", err)
	}
	if kids := children(t, ca, path+"/leases"); !slices.Equal(kids, []string{l.NodeName()}) {
		t.Fatalf("leases = %v; want only the new holder's", kids)
	}
	l.Close(t.Context())
	if again, ok, err := a.TryAcquire(t.Context(), 5*time.Second); !ok || err != nil {
		t.Fatalf("the expired client acquires again = %v, %v", ok, err)
	} else {
		again.Close(t.Context())
	}
}

// TestSemaphore_ServerOutageThenAllAcquire stops a private server until
// every client is Lost, then starts it again: all 10 clients acquire
// afterwards, and never more than max hold at once.
func TestSemaphore_ServerOutageThenAllAcquire(t *testing.T) {
	const max, n = 2, 10
	cluster := zktest.Start(t)
	path := testPath(t)
	ctx := t.Context()
	var g gauge
	var lost sync.WaitGroup
	restarted := make(chan struct{})
	var wg sync.WaitGroup
	var after atomic.Int32
	var clients []*framework.Client
	for i := 0; i < n; i++ {
		lost.Add(1)
		var once sync.Once
		c := startClient(t, builder(t, cluster.ConnectString()).Listener(func(s framework.ConnectionState) {
			if s == framework.Lost {
				once.Do(lost.Done)
			}
		}))
		clients = append(clients, c)
		s := newSem(t, c, path, max)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				l, err := s.Acquire(ctx)
				if err != nil {
					time.Sleep(50 * time.Millisecond) // the server is away: try again
					continue
				}
				g.in(1)
				select {
				case <-restarted:
					time.Sleep(5 * time.Millisecond)
					g.out(1)
					l.Close(ctx)
					after.Add(1)
					return
				default:
				}
				select { // held across the outage: drop it when it is lost
				case <-l.Lost():
				case <-restarted:
				}
				g.out(1)
				l.Close(ctx)
			}
		}()
	}
	eventually(t, 10*time.Second, func() bool { return g.now.Load() == max }, "the leases are held")
	eventually(t, 10*time.Second, func() bool { return len(children(t, clients[0], path+"/locks")) > 0 }, "waiters queue")
	srv := cluster.Servers()[0]
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	lostAll := make(chan struct{})
	go func() { lost.Wait(); close(lostAll) }()
	select {
	case <-lostAll:
	case <-time.After(30 * time.Second):
		t.Fatal("not every client reported Lost while the server was down")
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	close(restarted)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("only %d of %d clients acquired after the outage", after.Load(), n)
	}
	if after.Load() != n {
		t.Fatalf("%d of %d clients acquired after the outage", after.Load(), n)
	}
	if p := g.peak.Load(); p > max {
		t.Fatalf("%d leases held at once; max %d", p, max)
	}
	eventually(t, 10*time.Second, func() bool { return len(children(t, clients[0], path+"/leases")) == 0 }, "no lease left")
}

func TestSemaphore_BadInput(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	path := testPath(t)
	for _, max := range []int{0, -1} {
		if _, err := semaphorev2.New(c, path, max); !errors.Is(err, semaphorev2.ErrInvalidArgument) {
			t.Errorf("New(max %d) = %v, want ErrInvalidArgument", max, err)
		}
	}
	if _, err := semaphorev2.New(nil, path, 1); !errors.Is(err, framework.ErrNilClient) {
		t.Errorf("New(nil client) = %v, want ErrNilClient", err)
	}
	if _, err := semaphorev2.New(c, "/a//b", 1); !errors.Is(err, framework.ErrInvalidPath) {
		t.Errorf("New(bad path) = %v, want ErrInvalidPath", err)
	}
	s := newSem(t, c, path, 2)
	if _, err := s.AcquireN(ctx, 0); !errors.Is(err, semaphorev2.ErrInvalidArgument) {
		t.Errorf("AcquireN(0) = %v, want ErrInvalidArgument", err)
	}
	if _, err := s.AcquireN(ctx, 3); !errors.Is(err, semaphorev2.ErrInvalidArgument) {
		t.Errorf("AcquireN(3) of 2 = %v, want ErrInvalidArgument", err)
	}
	foreign, err := newSem(t, c, path+"_other", 1).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReturnLease(ctx, foreign); !errors.Is(err, semaphorev2.ErrForeignLease) {
		t.Errorf("ReturnLease(foreign) = %v, want ErrForeignLease", err)
	}
	if _, err := foreign.Data(ctx); err != nil {
		t.Errorf("a refused foreign return touched the lease: %v", err)
	}
	foreign.Close(ctx)
	l, err := s.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReturnLease(ctx, l); err != nil {
		t.Fatal(err)
	}
	if err := s.ReturnLease(ctx, l); !errors.Is(err, semaphorev2.ErrNotOwner) {
		t.Errorf("ReturnLease twice = %v, want ErrNotOwner", err)
	}
	if err := l.Close(ctx); err != nil {
		t.Errorf("Close after return = %v, want nil", err)
	}
	if err := l.Release(ctx); !errors.Is(err, semaphorev2.ErrNotOwner) {
		t.Errorf("Release after return = %v, want ErrNotOwner", err)
	}
	if err := s.ReturnAll(ctx, []*semaphorev2.Lease{l, nil}); !errors.Is(err, semaphorev2.ErrNotOwner) ||
		!errors.Is(err, semaphorev2.ErrInvalidArgument) {
		t.Errorf("ReturnAll(closed, nil) = %v, want both errors", err)
	}
	closedClient := startClient(t, builder(t, zktest.Shared(t).ConnectString()))
	closedClient.Close()
	if _, err := newSem(t, closedClient, path, 1).Acquire(ctx); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("Acquire on a closed client = %v, want ErrClosed", err)
	}
	if kids := children(t, c, path+"/leases"); len(kids) != 0 {
		t.Errorf("bad input left leases: %v", kids)
	}
}

func TestSemaphore_MaximumFollowsTheSharedCount(t *testing.T) {
	path := testPath(t)
	ctx := t.Context()
	newCounted := func(c *framework.Client) (*semaphorev2.Semaphore, *sharedcount.Count) {
		count, err := sharedcount.New(c, path+"_max", 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := count.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { count.Close() })
		s, err := semaphorev2.NewWithCount(c, path, count)
		if err != nil {
			t.Fatal(err)
		}
		return s, count
	}
	observer := newClient(t)
	// a's count writes the new maximum; b, waiting, learns it from its watch.
	a, count := newCounted(newClient(t))
	b, _ := newCounted(newClient(t))
	held, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.TryAcquire(ctx, 300*time.Millisecond); ok || err != nil {
		t.Fatalf("TryAcquire at count 1 with 1 held = %v, %v; want false, nil", ok, err)
	}
	got := make(chan *semaphorev2.Lease, 1)
	go func() {
		l, err := b.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	eventually(t, 5*time.Second, func() bool { return len(children(t, observer, path+"/locks")) == 1 }, "the waiter queues")
	if err := count.SetCount(ctx, 2); err != nil {
		t.Fatal(err)
	}
	l := awaitLease(t, got, "the waiter, after the count became 2")
	if b.MaxLeases() != 2 {
		t.Fatalf("MaxLeases() = %d after the count became 2", b.MaxLeases())
	}
	if kids := children(t, observer, path+"/leases"); len(kids) != 2 {
		t.Fatalf("leases = %v; want the 2 allowed", kids)
	}
	if _, ok, err := a.TryAcquire(ctx, 0); ok || err != nil {
		t.Fatalf("a 3rd lease at count 2 = %v, %v; want false, nil", ok, err)
	}
	l.Close(ctx)
	held.Close(ctx)
}

// BenchmarkSemaphore_TwoLeases16Clients measures acquire+release cycles
// per second with 2 leases and 16 clients on a private server: ours, a Go
// rendering of Curator's algorithm on the same client (internal lock held
// while a lease node waits, two writes per hand-off), and the raw floor
// (create, getChildren, delete of one lease node per cycle, no waiting).
func BenchmarkSemaphore_TwoLeases16Clients(b *testing.B) {
	const clients, max = 16, 2
	cluster := zktest.Start(b)
	var cs []*framework.Client
	for i := 0; i < clients; i++ {
		cs = append(cs, startClient(b, builder(b, cluster.ConnectString())))
	}
	srv := cluster.Servers()[0]
	packets := func() int64 {
		out, err := srv.FourLetter("mntr")
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "zk_packets_received" {
				n, _ := strconv.ParseInt(f[1], 10, 64)
				return n
			}
		}
		b.Fatalf("no zk_packets_received in mntr:\n%s", out)
		return 0
	}
	run := func(b *testing.B, cycle func(ctx context.Context, i int) error) {
		var next atomic.Int64
		var wg sync.WaitGroup
		before := packets()
		b.ResetTimer()
		start := time.Now()
		for i := 0; i < clients; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(b.N) {
					if err := cycle(context.Background(), i); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cycles/s")
		b.ReportMetric(float64(packets()-before)/float64(b.N), "requests/cycle")
	}
	b.Run("go-curator", func(b *testing.B) {
		path := "/bench/ours"
		var sems []*semaphorev2.Semaphore
		for _, c := range cs {
			sems = append(sems, newSem(b, c, path, max))
		}
		var g gauge
		run(b, func(ctx context.Context, i int) error {
			l, err := sems[i].Acquire(ctx)
			if err != nil {
				return err
			}
			g.in(1)
			g.out(1)
			return l.Close(ctx)
		})
		if g.peak.Load() > max {
			b.Fatalf("%d leases at once", g.peak.Load())
		}
	})
	b.Run("curator-algorithm", func(b *testing.B) {
		var sems []*curatorSem
		for _, c := range cs {
			sems = append(sems, newCuratorSem(b, c, "/bench/curator", max))
		}
		run(b, func(ctx context.Context, i int) error {
			node, err := sems[i].acquire(ctx)
			if err != nil {
				return err
			}
			return cs[i].Delete().ForPath(ctx, node)
		})
	})
	b.Run("raw-floor", func(b *testing.B) {
		run(b, func(ctx context.Context, i int) error {
			zc := cs[i].ZooKeeper()
			p, err := zc.Create("/bench/floor-lease-", nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
			if errors.Is(err, zk.ErrNoNode) {
				zc.Create("/bench", nil, 0, zk.WorldACL(zk.PermAll))
				p, err = zc.Create("/bench/floor-lease-", nil, zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
			}
			if err != nil {
				return err
			}
			if _, _, err := zc.Children("/bench"); err != nil {
				return err
			}
			return zc.Delete(p, -1)
		})
	})
}

// curatorSem is Curator's InterProcessSemaphoreV2 algorithm, for the
// benchmark only: take the internal lock, create the lease node, wait
// (watching leases/) until leases/ has at most max children, release the
// lock.
type curatorSem struct {
	c      *framework.Client
	lock   *lockcore.Core
	leases string
	max    int
}

func newCuratorSem(t testing.TB, c *framework.Client, path string, max int) *curatorSem {
	t.Helper()
	lock, err := lockcore.New(c, path+"/locks", "lock-", lockcore.MaxLeases(1))
	if err != nil {
		t.Fatal(err)
	}
	return &curatorSem{c: c, lock: lock, leases: path + "/leases", max: max}
}

func (s *curatorSem) acquire(ctx context.Context) (string, error) {
	h, err := s.lock.Acquire(ctx, nil, -1)
	if err != nil {
		return "", err
	}
	defer s.lock.Delete(ctx, h.Node())
	node, err := s.c.Create().CreatingParentContainersIfNeeded().WithProtection().
		WithMode(framework.EphemeralSequential).ForPath(ctx, s.leases+"/lease-", nil)
	if err != nil {
		return "", err
	}
	for {
		kids, ch, err := s.c.GetChildren().ForPathW(ctx, s.leases)
		if err != nil {
			return "", err
		}
		if len(kids) <= s.max {
			return node, nil
		}
		<-ch
	}
}

// BenchmarkSemaphore_Uncontended measures one client's acquire+release
// latency on a free semaphore: ours (fast path: 3 requests and a delete)
// and Curator's algorithm (5 requests and a delete).
func BenchmarkSemaphore_Uncontended(b *testing.B) {
	c := startClient(b, builder(b, zktest.Start(b).ConnectString()))
	ctx := context.Background()
	b.Run("go-curator", func(b *testing.B) {
		s := newSem(b, c, "/bench/ours", 2)
		for b.Loop() {
			l, err := s.Acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			l.Close(ctx)
		}
	})
	b.Run("curator-algorithm", func(b *testing.B) {
		s := newCuratorSem(b, c, "/bench/curator", 2)
		for b.Loop() {
			node, err := s.acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			c.Delete().ForPath(ctx, node)
		}
	})
}
