package integration

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/atomiclong"
	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

func newLong(t testing.TB, c *framework.Client, path string, p retry.Policy, opts ...atomiclong.Option) *atomiclong.Long {
	t.Helper()
	l, err := atomiclong.New(c, path, p, opts...)
	if err != nil {
		t.Fatalf("atomiclong.New: %v", err)
	}
	return l
}

func nTimes(t testing.TB, n int) retry.Policy {
	t.Helper()
	p, err := retry.NewNTimes(n, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// nodeLong reads the raw node as Curator would: 8 bytes, big-endian.
func nodeBytes(t *testing.T, c *framework.Client, path string) []byte {
	t.Helper()
	data, _, err := c.GetData().ForPath(t.Context(), path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return data
}

func curatorLong(n int64) []byte {
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = byte(n)
		n >>= 8
	}
	return b
}

func TestAtomicLong_CorruptData(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t)
	c := newClient(t)
	ctx := t.Context()
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, path, []byte("foo")); err != nil {
		t.Fatal(err)
	}
	l := newLong(t, c, path, nTimes(t, 3))
	checks := map[string]func() error{
		"Get":           func() error { _, err := l.Get(ctx); return err },
		"Increment":     func() error { _, err := l.Increment(ctx); return err },
		"TrySet":        func() error { _, err := l.TrySet(ctx, 3); return err },
		"CompareAndSet": func() error { _, err := l.CompareAndSet(ctx, 0, 3); return err },
	}
	for name, op := range checks {
		err := op()
		if !errors.Is(err, atomiclong.ErrCorrupt) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s on \"foo\" = %v; want ErrCorrupt naming %s", name, err, path)
		}
	}
	if got := nodeBytes(t, c, path); string(got) != "foo" {
		t.Fatalf("a failed operation changed the node to %q", got)
	}
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 9} {
		if _, err := c.SetData().ForPath(ctx, path, bytes.Repeat([]byte{1}, n)); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Get(ctx); !errors.Is(err, atomiclong.ErrCorrupt) {
			t.Errorf("Get on %d bytes = %v; want ErrCorrupt", n, err)
		}
	}
	// Empty data reads as 0; ForceSet repairs anything.
	if _, err := c.SetData().ForPath(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	if r, err := l.Get(ctx); err != nil || r.PreValue != 0 || !r.Succeeded {
		t.Errorf("Get on empty data = %+v, %v; want 0", r, err)
	}
	if err := l.ForceSet(ctx, 9); err != nil {
		t.Fatal(err)
	}
	if r, err := l.Increment(ctx); err != nil || !r.Succeeded || r.PreValue != 9 || r.PostValue != 10 {
		t.Errorf("Increment after ForceSet = %+v, %v; want 9 -> 10", r, err)
	}
}

func TestAtomicLong_CompareAndSetNeedsInitialize(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t) + "/parent/counter"
	c := newClient(t)
	ctx := t.Context()
	l := newLong(t, c, path, nTimes(t, 3))
	r, err := l.CompareAndSet(ctx, 0, 5)
	if err != nil || r.Succeeded {
		t.Fatalf("CompareAndSet on a fresh path = %+v, %v; want false", r, err)
	}
	if stat, err := c.CheckExists().ForPath(ctx, path); err != nil || stat != nil {
		t.Fatalf("a failed CompareAndSet created the node (stat %v, err %v)", stat, err)
	}
	if ok, err := l.Initialize(ctx, 0); err != nil || !ok {
		t.Fatalf("Initialize = %v, %v; want true", ok, err)
	}
	if ok, err := l.Initialize(ctx, 7); err != nil || ok {
		t.Fatalf("second Initialize = %v, %v; want false", ok, err)
	}
	r, err = l.CompareAndSet(ctx, 0, 5)
	if err != nil || !r.Succeeded || r.PreValue != 0 || r.PostValue != 5 {
		t.Fatalf("CompareAndSet after Initialize = %+v, %v; want 0 -> 5", r, err)
	}
	if got := nodeBytes(t, c, path); !bytes.Equal(got, curatorLong(5)) {
		t.Errorf("node holds %x; want Curator's 8-byte 5", got)
	}
}

func TestAtomicLong_ForceSetThenCompareAndSet(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t)
	c := newClient(t)
	ctx := t.Context()
	l := newLong(t, c, path, nTimes(t, 3))
	if err := l.ForceSet(ctx, 1); err != nil {
		t.Fatal(err)
	}
	r, err := l.CompareAndSet(ctx, 1, 5)
	if err != nil || !r.Succeeded || r.PreValue != 1 || r.PostValue != 5 {
		t.Fatalf("CompareAndSet(1, 5) = %+v, %v; want 1 -> 5", r, err)
	}
	r, err = l.CompareAndSet(ctx, 1, 5)
	if err != nil || r.Succeeded || r.PreValue != 5 {
		t.Fatalf("repeated CompareAndSet(1, 5) = %+v, %v; want false, seeing 5", r, err)
	}
	if err := l.ForceSet(ctx, -3); err != nil {
		t.Fatal(err)
	}
	if got := nodeBytes(t, c, path); !bytes.Equal(got, curatorLong(-3)) {
		t.Errorf("node holds %x; want Curator's 8-byte -3", got)
	}
}

func TestAtomicLong_Arithmetic(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t)
	c := newClient(t)
	ctx := t.Context()
	l := newLong(t, c, path, nTimes(t, 3))
	steps := []struct {
		name      string
		op        func() (atomiclong.Result, error)
		pre, post int64
	}{
		{"Increment", func() (atomiclong.Result, error) { return l.Increment(ctx) }, 0, 1},
		{"Decrement", func() (atomiclong.Result, error) { return l.Decrement(ctx) }, 1, 0},
		{"Add(10)", func() (atomiclong.Result, error) { return l.Add(ctx, 10) }, 0, 10},
		{"Subtract(5)", func() (atomiclong.Result, error) { return l.Subtract(ctx, 5) }, 10, 5},
		{"TrySet(-7)", func() (atomiclong.Result, error) { return l.TrySet(ctx, -7) }, 5, -7},
		{"Get", func() (atomiclong.Result, error) { return l.Get(ctx) }, -7, -7},
	}
	for _, s := range steps {
		r, err := s.op()
		if err != nil || !r.Succeeded || r.PreValue != s.pre || r.PostValue != s.post {
			t.Fatalf("%s = %+v, %v; want %d -> %d", s.name, r, err, s.pre, s.post)
		}
		if s.name != "Get" && (r.Stats.OptimisticTries != 1 || r.Stats.PromotedLockTries != 0) {
			t.Errorf("%s alone took stats %+v; want one optimistic try", s.name, r.Stats)
		}
	}
	if got := nodeBytes(t, c, path); !bytes.Equal(got, curatorLong(-7)) {
		t.Errorf("node holds %x; want Curator's 8-byte -7", got)
	}
}

func TestAtomicLong_ConcurrentIncrementsWithPromotedLock(t *testing.T) {
	countersNoLeaks(t)
	dir := counterPath(t)
	path, lockPath := dir+"/counter", dir+"/lock"
	const goroutines, each = 20, 50
	clients := make([]*framework.Client, 4)
	longs := make([]*atomiclong.Long, len(clients))
	for i := range clients {
		clients[i] = newClient(t)
		// One optimistic try, so lost races are promoted to the lock.
		longs[i] = newLong(t, clients[i], path, nTimes(t, 0),
			atomiclong.WithPromotedLock(lockPath, 30*time.Second, nTimes(t, 10)))
	}
	ctx := t.Context()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		posts    []int64
		promoted int
		failed   int
		errs     []error
	)
	for g := range goroutines {
		wg.Go(func() {
			l := longs[g%len(longs)]
			last := int64(0)
			for done := 0; done < each; {
				r, err := l.Increment(ctx)
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				mu.Lock()
				promoted += r.Stats.PromotedLockTries
				if !r.Succeeded {
					failed++
					mu.Unlock()
					continue
				}
				posts = append(posts, r.PostValue)
				mu.Unlock()
				if r.PostValue <= last || r.PreValue != r.PostValue-1 {
					t.Errorf("goroutine %d: %d -> %d after %d", g, r.PreValue, r.PostValue, last)
				}
				last = r.PostValue
				done++
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("increments failed: %v", errs)
	}
	r, err := longs[0].Get(ctx)
	if err != nil || r.PreValue != goroutines*each {
		t.Fatalf("final value = %+v, %v; want %d", r, err, goroutines*each)
	}
	sort.Slice(posts, func(i, j int) bool { return posts[i] < posts[j] })
	want := make([]int64, goroutines*each)
	for i := range want {
		want[i] = int64(i + 1)
	}
	if !slices.Equal(posts, want) {
		t.Fatalf("post values are not exactly 1..%d, each once", goroutines*each)
	}
	if promoted == 0 {
		t.Errorf("no increment went through the promoted lock")
	}
	t.Logf("%d tries under the promoted lock, %d increments failed and were repeated", promoted, failed)
	if kids := children(t, clients[0], lockPath); len(kids) != 0 {
		t.Errorf("lock nodes left: %v", kids)
	}
}

func TestAtomicLong_ConcurrentIncrementsOptimistic(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t)
	const goroutines, each = 16, 25
	longs := make([]*atomiclong.Long, 4)
	for i := range longs {
		longs[i] = newLong(t, newClient(t), path, nTimes(t, 1000))
	}
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			l := longs[g%len(longs)]
			for range each {
				r, err := l.Increment(ctx)
				if err == nil && !r.Succeeded {
					err = fmt.Errorf("increment failed after %d tries", r.Stats.OptimisticTries)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if r, err := longs[0].Get(ctx); err != nil || r.PreValue != goroutines*each {
		t.Fatalf("final value = %+v, %v; want %d", r, err, goroutines*each)
	}
}

func TestAtomicLong_ClosedClient(t *testing.T) {
	countersNoLeaks(t)
	c, err := builder(t, "127.0.0.1:1").Build()
	if err != nil {
		t.Fatal(err)
	}
	l := newLong(t, c, testPath(t), nTimes(t, 1))
	if _, err := l.Increment(t.Context()); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Increment before the client starts = %v, want framework.ErrNotStarted", err)
	}
	c2 := newClient(t)
	l2 := newLong(t, c2, testPath(t), nTimes(t, 1)) // never reaches the server
	c2.Close()
	if _, err := l2.Increment(t.Context()); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("Increment after the client closed = %v, want framework.ErrClosed", err)
	}
	if err := l2.ForceSet(t.Context(), 1); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("ForceSet after the client closed = %v, want framework.ErrClosed", err)
	}
}

// contendedBench runs op from 16 clients at once, b.N times in all, and
// reports throughput and latency percentiles.
func contendedBench(b *testing.B, setup func(c *framework.Client) func() error) {
	const clients = 16
	ops := make([]func() error, clients)
	for i := range ops {
		ops[i] = setup(newClient(b))
	}
	var (
		mu   sync.Mutex
		lats []time.Duration
		next int
		wg   sync.WaitGroup
	)
	b.ResetTimer()
	start := time.Now()
	for i := range clients {
		wg.Go(func() {
			for {
				mu.Lock()
				if next >= b.N {
					mu.Unlock()
					return
				}
				next++
				mu.Unlock()
				t0 := time.Now()
				if err := ops[i](); err != nil {
					b.Error(err)
					return
				}
				d := time.Since(t0)
				mu.Lock()
				lats = append(lats, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lats)
	pct := func(p float64) float64 {
		return float64(lats[min(len(lats)-1, int(p*float64(len(lats))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(float64(len(lats))/elapsed.Seconds(), "ops/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
}

// BenchmarkAtomicLong_Increment16 is issue 5's speed check: 16 clients
// incrementing one counter, optimistic only (Curator: about 1,700/s, p99
// about 200 ms on this machine).
func BenchmarkAtomicLong_Increment16(b *testing.B) {
	path := testPath(b)
	contendedBench(b, func(c *framework.Client) func() error {
		l := newLong(b, c, path, nTimes(b, 1000))
		return func() error {
			r, err := l.Increment(b.Context())
			if err == nil && !r.Succeeded {
				err = errors.New("increment failed")
			}
			benchTries.Add(int64(r.Stats.OptimisticTries))
			return err
		}
	})
	b.ReportMetric(float64(benchTries.Swap(0))/float64(b.N), "tries/op")
}

// benchTries counts the tries of BenchmarkAtomicLong_Increment16.
var benchTries atomic.Int64

// BenchmarkAtomicLong_Increment16CuratorSleeps is the same load with
// Curator's algorithm as Curator runs it: read, versioned write, and the
// policy's sleep (100 ms) after a lost race. It is the baseline for
// BenchmarkAtomicLong_Increment16 in the same run.
func BenchmarkAtomicLong_Increment16CuratorSleeps(b *testing.B) {
	path := testPath(b)
	contendedBench(b, func(c *framework.Client) func() error {
		return func() error {
			ctx := b.Context()
			for {
				data, stat, err := c.GetData().ForPath(ctx, path)
				var v int64
				switch {
				case errors.Is(err, zk.ErrNoNode):
					_, err = c.Create().CreatingParentContainersIfNeeded().ForPath(ctx, path, curatorLong(1))
				case err != nil:
					return err
				default:
					for _, x := range data {
						v = v<<8 | int64(x)
					}
					_, err = c.SetData().WithVersion(stat.Version).ForPath(ctx, path, curatorLong(v+1))
				}
				if err == nil {
					return nil
				}
				if !errors.Is(err, zk.ErrBadVersion) && !errors.Is(err, zk.ErrNodeExists) {
					return err
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	})
}
