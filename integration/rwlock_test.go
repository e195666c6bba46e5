package integration

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/recipes/rwlock"
	"github.com/go-curator/curator/zktest"
)

func newRWLock(t testing.TB, c *framework.Client, path string, opts ...rwlock.Option) *rwlock.Lock {
	t.Helper()
	l, err := rwlock.New(c, path, opts...)
	if err != nil {
		t.Fatalf("rwlock.New: %v", err)
	}
	return l
}

// nodeSeq returns the sequence of a read or write node.
func nodeSeq(t testing.TB, node string) int64 {
	t.Helper()
	seq, ok := lockcore.Sequence(node, "__READ__", "__WRIT__")
	if !ok {
		t.Fatalf("node %q has no sequence", node)
	}
	return seq
}

// participants returns the read and write participants of l.
func participants(t testing.TB, l *rwlock.Lock) (read, write []string) {
	t.Helper()
	read, err := l.ReadLock().Participants(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	write, err = l.WriteLock().Participants(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return read, write
}

func TestRWLock_ReadersHoldWhileWritersWait(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	ctx := t.Context()
	const readers, writers = 20, 8

	var readersIn sync.WaitGroup
	readersIn.Add(readers)
	releaseReaders := make(chan struct{})
	var inside atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < readers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := newRWLock(t, c, path).ReadLock().Acquire(ctx)
			if err != nil {
				t.Error(err)
				readersIn.Done()
				return
			}
			inside.Add(1)
			readersIn.Done()
			<-releaseReaders
			inside.Add(-1)
			if err := h.Release(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	readersIn.Wait()
	if inside.Load() != readers {
		t.Fatalf("%d readers hold the lock together, want %d", inside.Load(), readers)
	}

	var writersDone, overlaps atomic.Int32
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := newRWLock(t, c, path).WriteLock().Acquire(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			if inside.Add(1) != 1 {
				overlaps.Add(1)
			}
			writersDone.Add(1)
			inside.Add(-1)
			if err := h.Release(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	l := newRWLock(t, c, path)
	eventually(t, 10*time.Second, func() bool {
		_, w := participants(t, l)
		return len(w) == writers
	}, "8 writers queued")
	read, write := participants(t, l)
	if len(read) != readers || len(write) != writers {
		t.Fatalf("participants: %d read, %d write; want %d and %d", len(read), len(write), readers, writers)
	}
	for _, p := range read {
		if !strings.Contains(p, "__READ__") {
			t.Fatalf("read participant %q", p)
		}
	}
	if n := writersDone.Load(); n != 0 {
		t.Fatalf("%d writers got in while 20 readers held the lock", n)
	}
	close(releaseReaders)
	wg.Wait()
	if writersDone.Load() != writers || overlaps.Load() != 0 {
		t.Fatalf("%d writers done with %d overlaps; want %d and 0", writersDone.Load(), overlaps.Load(), writers)
	}
	if kids := children(t, c, path); len(kids) != 0 {
		t.Fatalf("nodes left: %v", kids)
	}
}

func TestRWLock_QueuedWriterBlocksLaterReaders(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	ctx := t.Context()
	first, err := newRWLock(t, c, path).ReadLock().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := newRWLock(t, newClient(t), path).WriteLock()
	got := make(chan error, 1)
	go func() {
		h, err := w.Acquire(ctx)
		if err == nil {
			err = h.Release(ctx)
		}
		got <- err
	}()
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == 2 }, "writer queued")
	late := newRWLock(t, newClient(t), path).ReadLock()
	if _, ok, err := late.TryAcquire(ctx, 300*time.Millisecond); ok || err != nil {
		t.Fatalf("reader behind a queued writer TryAcquire = %v, %v; want false, nil", ok, err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("writer: %v", err)
	}
	h, ok, err := late.TryAcquire(ctx, 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("reader after the writer = %v, %v", ok, err)
	}
	h.Release(ctx)
}

func TestRWLock_UpgradeIsNotAllowed(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	l := newRWLock(t, c, path)
	ctx := t.Context()
	var read *rwlock.Hold
	for i := 0; i < 2; i++ {
		h, err := l.ReadLock().Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if read != nil && h != read {
			t.Fatal("the nested read acquire returned another hold")
		}
		read = h
	}
	if kids := children(t, c, path); len(kids) != 1 {
		t.Fatalf("reentrant read made %v", kids)
	}
	if _, ok, err := l.WriteLock().TryAcquire(ctx, 300*time.Millisecond); ok || err != nil {
		t.Fatalf("write TryAcquire while reading = %v, %v; want false, nil", ok, err)
	}
	if l.WriteLock().IsAcquiredInThisProcess() {
		t.Fatal("the failed upgrade left a write hold")
	}
	if kids := children(t, c, path); len(kids) != 1 || !strings.Contains(kids[0], "__READ__") {
		t.Fatalf("after the failed upgrade the path holds %v; want only the read node", kids)
	}
	if err := read.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.ReadLock().Release(ctx); err != nil { // the goroutine's hold, as Curator's release()
		t.Fatal(err)
	}
	wh, ok, err := l.WriteLock().TryAcquire(ctx, 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("write after releasing the read = %v, %v", ok, err)
	}
	if err := wh.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRWLock_DowngradeWorks(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	l := newRWLock(t, c, path)
	ctx := t.Context()
	wl, rl := l.WriteLock(), l.ReadLock()
	w, err := wl.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, ok, err := rl.TryAcquire(ctx, 0)
	if !ok || err != nil {
		t.Fatalf("read TryAcquire(0) by the write holder = %v, %v; want granted at once", ok, err)
	}
	// Curator 5.5: the read node is a plain ephemeral with the write's sequence.
	if nodeSeq(t, r.Node()) != nodeSeq(t, w.Node()) {
		t.Fatalf("downgraded read node %s does not carry the write node's sequence (%s)", r.Node(), w.Node())
	}
	_, stat, err := c.GetData().ForPath(ctx, r.Node())
	if err != nil || stat.EphemeralOwner != c.SessionID() {
		t.Fatalf("read node stat %+v, err %v; want an ephemeral of our session", stat, err)
	}
	if err := w.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if !rl.IsOwnedByCurrentGoroutine() || wl.IsAcquiredInThisProcess() {
		t.Fatal("after releasing the write lock the goroutine should hold only the read lock")
	}
	if _, err := r.FencingToken(); err != nil {
		t.Fatal(err)
	}
	other := newRWLock(t, newClient(t), path)
	oh, ok, err := other.ReadLock().TryAcquire(ctx, 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("another reader beside the downgraded one = %v, %v", ok, err)
	}
	if err := oh.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := other.WriteLock().TryAcquire(ctx, 300*time.Millisecond); ok || err != nil {
		t.Fatalf("another writer while downgraded = %v, %v; want false, nil", ok, err)
	}
	if err := r.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, c, path); len(kids) != 0 {
		t.Fatalf("nodes left: %v", kids)
	}
}

func TestRWLock_DowngradeRespectsGoroutines(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	l := newRWLock(t, c, path)
	ctx := t.Context()
	w, err := l.WriteLock().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		ok  bool
		err error
	}
	got := make(chan result)
	go func() {
		h, ok, err := l.ReadLock().TryAcquire(ctx, 300*time.Millisecond)
		if ok {
			h.Release(ctx)
		}
		got <- result{ok, err}
	}()
	if res := <-got; res.ok || res.err != nil {
		t.Fatalf("another goroutine's read while this one writes = %v, %v; want false, nil", res.ok, res.err)
	}
	if l.ReadLock().IsAcquiredInThisProcess() {
		t.Fatal("the other goroutine's timed-out read left a hold")
	}
	r, ok, err := l.ReadLock().TryAcquire(ctx, 0)
	if !ok || err != nil {
		t.Fatalf("the writer's own read = %v, %v", ok, err)
	}
	if kids := children(t, c, path); len(kids) != 2 {
		t.Fatalf("want the write node and the writer's read node, got %v", kids)
	}
	r.Release(ctx)
	w.Release(ctx)
}

func TestRWLock_QueuedWriterStaysBlockedAfterDowngrade(t *testing.T) {
	path := testPath(t)
	ca := newClient(t)
	a := newRWLock(t, ca, path)
	b := newRWLock(t, newClient(t), path)
	ctx := t.Context()
	aw, err := a.WriteLock().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeNode := aw.Node()
	got := make(chan error, 1)
	go func() {
		h, err := b.WriteLock().Acquire(ctx)
		got <- err
		if err == nil {
			h.Release(ctx)
		}
	}()
	eventually(t, 10*time.Second, func() bool {
		_, w := participants(t, a)
		return len(w) == 2
	}, "writer b queued")
	ar, err := a.ReadLock().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := aw.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// The downgraded read node took the write node's place, ahead of b.
	read, write := participants(t, a)
	if len(read) != 1 || len(write) != 1 || nodeSeq(t, read[0]) != nodeSeq(t, writeNode) ||
		nodeSeq(t, write[0]) <= nodeSeq(t, read[0]) {
		t.Fatalf("after the downgrade: read %v, write %v (old write node %s)", read, write, writeNode)
	}
	select {
	case err := <-got:
		t.Fatalf("the queued writer got in while the downgraded reader held the lock (err %v)", err)
	case <-time.After(500 * time.Millisecond):
	}
	if _, ok, err := newRWLock(t, newClient(t), path).ReadLock().TryAcquire(ctx, 0); ok || err != nil {
		t.Fatalf("a new reader behind the queued writer = %v, %v; want false, nil", ok, err)
	}
	if err := ar.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("queued writer after the read release: %v", err)
	}
}

func TestRWLock_ReadersAndWritersUnderLoad(t *testing.T) {
	path := testPath(t)
	ctx := t.Context()
	const clients, iterations = 8, 100
	var readers, writers, maxReaders, bad, reads, writes atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		l := newRWLock(t, newClient(t), path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			for j := 0; j < iterations; j++ {
				if rng.IntN(10) == 0 {
					w, err := l.WriteLock().Acquire(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					if writers.Add(1) != 1 || readers.Load() != 0 {
						bad.Add(1)
					}
					writes.Add(1)
					time.Sleep(time.Millisecond)
					writers.Add(-1)
					if err := w.Release(ctx); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				r, err := l.ReadLock().Acquire(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				n := readers.Add(1)
				if writers.Load() != 0 {
					bad.Add(1)
				}
				for m := maxReaders.Load(); n > m && !maxReaders.CompareAndSwap(m, n); m = maxReaders.Load() {
				}
				reads.Add(1)
				time.Sleep(time.Duration(1+rng.IntN(3)) * time.Millisecond)
				readers.Add(-1)
				if err := r.Release(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d times a writer shared the lock", bad.Load())
	}
	if reads.Load()+writes.Load() != clients*iterations || writes.Load() == 0 {
		t.Fatalf("%d reads and %d writes; want %d in all, some writes", reads.Load(), writes.Load(), clients*iterations)
	}
	if maxReaders.Load() < 2 {
		t.Fatalf("at most %d readers held the lock together; want readers to share", maxReaders.Load())
	}
}

func TestRWLock_LockDataAndLayout(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	ctx := t.Context()
	l := newRWLock(t, c, path, rwlock.WithData([]byte("worker-7")))
	plain := newRWLock(t, c, path)
	lr, err := l.ReadLock().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := plain.ReadLock().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := newRWLock(t, newClient(t), path, rwlock.WithData([]byte("writer-3"))).WriteLock()
	got := make(chan error, 1)
	go func() {
		h, err := w.Acquire(ctx)
		if err == nil {
			err = h.Release(ctx)
		}
		got <- err
	}()
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == 3 }, "writer queued")
	want := map[string]string{
		lr.Node(): "worker-7",
		pr.Node(): string(c.DefaultData()),
	}
	for _, k := range children(t, c, path) {
		name := framework.StripProtected(k)
		if !framework.IsProtected(k) || len(name) != len("__READ__")+10 ||
			!(strings.HasPrefix(name, "__READ__") || strings.HasPrefix(name, "__WRIT__")) {
			t.Fatalf("node %q is not _c_<uuid>-__READ__<seq10> or _c_<uuid>-__WRIT__<seq10>", k)
		}
		if strings.HasPrefix(name, "__WRIT__") {
			want[path+"/"+k] = "writer-3"
		}
	}
	for node, data := range want {
		got, _, err := c.GetData().ForPath(ctx, node)
		if err != nil || string(got) != data {
			t.Fatalf("%s holds %q (err %v), want %q", node, got, err, data)
		}
	}
	lr.Release(ctx)
	pr.Release(ctx)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

func TestRWLock_ExpiredWriterLetsReaderIn(t *testing.T) {
	path := testPath(t)
	cluster := zktest.Shared(t)
	ca := newClient(t)
	a := newRWLock(t, ca, path).WriteLock()
	r := newRWLock(t, newClient(t), path).ReadLock()
	ctx := t.Context()
	aw, err := a.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lost := aw.Lost()
	got, release, released := make(chan error, 1), make(chan struct{}), make(chan error, 1)
	go func() {
		h, err := r.Acquire(ctx)
		got <- err
		if err == nil {
			<-release
			released <- h.Release(ctx)
		}
	}()
	eventually(t, 10*time.Second, func() bool { return len(children(t, ca, path)) == 2 }, "reader queued")
	if err := zktest.ExpireSession(ctx, cluster.ConnectString(), ca.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("reader after the writer's session expired: %v", err)
	}
	select {
	case <-lost:
	case <-time.After(3 * testSessionTimeout):
		t.Fatal("the expired writer's Lost() did not close")
	}
	if err := aw.Release(ctx); !releasedAfterLoss(err) {
		t.Fatalf("release by the expired writer: %v", err)
	}
	if a.IsAcquiredInThisProcess() {
		t.Fatal("release after loss kept the hold")
	}
	close(release)
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	aw, ok, err := a.TryAcquire(ctx, 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("the old writer re-acquires = %v, %v", ok, err)
	}
	if err := aw.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRWLock_DowngradeAfterExpiredWriteIsRefused(t *testing.T) {
	path := testPath(t)
	cluster := zktest.Shared(t)
	ca := newClient(t)
	l := newRWLock(t, ca, path)
	ctx := t.Context()
	w, err := l.WriteLock().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lost := w.Lost()
	if err := zktest.ExpireSession(ctx, cluster.ConnectString(), ca.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	<-lost
	// Another writer takes the lock the expired session held.
	other, ok, err := newRWLock(t, newClient(t), path).WriteLock().TryAcquire(ctx, 10*time.Second)
	if !ok || err != nil {
		t.Fatalf("other writer after the expiry = %v, %v", ok, err)
	}
	// The old writer's downgrade must not slip a reader in beside it.
	if h, err := l.ReadLock().Acquire(ctx); !errors.Is(err, rwlock.ErrWriteLost) || h != nil {
		t.Fatalf("downgrade after the write node expired = %v, %v; want nil, ErrWriteLost", h, err)
	}
	if l.ReadLock().IsAcquiredInThisProcess() {
		t.Fatal("the refused downgrade left a read hold")
	}
	if kids := children(t, ca, path); len(kids) != 1 || path+"/"+kids[0] != other.Node() {
		t.Fatalf("after the refused downgrade the path holds %v; want only the other writer's node", kids)
	}
	if err := w.Release(ctx); !releasedAfterLoss(err) {
		t.Fatalf("release of the expired write: %v", err)
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r, ok, err := l.ReadLock().TryAcquire(ctx, 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("read after releasing the lost write = %v, %v", ok, err)
	}
	r.Release(ctx)
}

func TestRWLock_BadInput(t *testing.T) {
	c := newClient(t)
	unstarted, err := builder(t, zktest.Shared(t).ConnectString()).Build()
	if err != nil {
		t.Fatal(err)
	}
	closedClient := startClient(t, builder(t, zktest.Shared(t).ConnectString()))
	closedClient.Close()
	for _, p := range []string{"", "rel", "/a/", "//a", "/a/../b", "/a\x00b"} {
		if _, err := rwlock.New(c, p); !errors.Is(err, framework.ErrInvalidPath) || !errors.Is(err, rwlock.ErrInvalidArgument) {
			t.Errorf("New(%q) = %v, want ErrInvalidPath and ErrInvalidArgument", p, err)
		}
	}
	if _, err := rwlock.New(nil, "/x"); !errors.Is(err, framework.ErrNilClient) || !errors.Is(err, rwlock.ErrInvalidArgument) {
		t.Errorf("New(nil client) = %v, want ErrNilClient and ErrInvalidArgument", err)
	}
	if _, err := rwlock.New(c, "/x", nil); !errors.Is(err, rwlock.ErrInvalidArgument) {
		t.Errorf("New(nil option) = %v, want ErrInvalidArgument", err)
	}
	for _, side := range []func(*rwlock.Lock) *rwlock.Mutex{(*rwlock.Lock).ReadLock, (*rwlock.Lock).WriteLock} {
		m := side(newRWLock(t, unstarted, testPath(t)))
		if _, err := m.Acquire(t.Context()); !errors.Is(err, framework.ErrNotStarted) {
			t.Errorf("Acquire on unstarted client = %v, want ErrNotStarted", err)
		}
		m = side(newRWLock(t, closedClient, testPath(t)))
		if _, err := m.Acquire(t.Context()); !errors.Is(err, framework.ErrClosed) {
			t.Errorf("Acquire on closed client = %v, want ErrClosed", err)
		}
		if _, err := m.Participants(t.Context()); !errors.Is(err, framework.ErrClosed) {
			t.Errorf("Participants on closed client = %v, want ErrClosed", err)
		}
		m = side(newRWLock(t, c, testPath(t)))
		if err := m.Release(t.Context()); !errors.Is(err, rwlock.ErrNotOwner) {
			t.Errorf("Release without Acquire = %v, want ErrNotOwner", err)
		}
		if _, _, err := m.TryAcquire(t.Context(), -time.Second); !errors.Is(err, rwlock.ErrInvalidArgument) || !errors.Is(err, framework.ErrInvalidArgument) {
			t.Errorf("TryAcquire(-1s) = %v, want ErrInvalidArgument", err)
		}
	}
	if _, err := (*rwlock.Hold)(nil).FencingToken(); !errors.Is(err, rwlock.ErrNotOwner) {
		t.Errorf("FencingToken without a hold = %v, want ErrNotOwner", err)
	}
	select {
	case <-(*rwlock.Hold)(nil).Lost():
	default:
		t.Error("Lost() without a hold is not closed")
	}
	var nilLock *rwlock.Lock
	if _, err := nilLock.ReadLock().Acquire(t.Context()); !errors.Is(err, rwlock.ErrInvalidArgument) {
		t.Errorf("Acquire on a nil lock = %v, want ErrInvalidArgument", err)
	}
	if kids := children(t, c, testPath(t)); len(kids) != 0 {
		t.Errorf("bad input left nodes: %v", kids)
	}
}
