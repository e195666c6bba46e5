package integration

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/recipes/semaphoremutex"
	"github.com/go-curator/curator/recipes/semaphorev2"
)

// leaseWitness counts the leases held at once, by Go and Curator holders
// alike; holders add after their acquire returns and subtract before they
// return, so the count never exceeds what was really held.
type leaseWitness struct {
	max, inUse, peak atomic.Int32
	mu               sync.Mutex
	over             []string
}

func (w *leaseWitness) take(who string, n int32) {
	now := w.inUse.Add(n)
	for {
		p := w.peak.Load()
		if now <= p || w.peak.CompareAndSwap(p, now) {
			break
		}
	}
	if now > w.max.Load() {
		w.mu.Lock()
		w.over = append(w.over, fmt.Sprintf("%s took %d: %d leases held, max %d", who, n, now, w.max.Load()))
		w.mu.Unlock()
	}
}

func (w *leaseWitness) give(n int32) { w.inUse.Add(-n) }

func (w *leaseWitness) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.over {
		t.Error(o)
	}
}

// TestInterop_SemaphoreMixedNeverExceedsMax runs three Go clients and two
// Curator processes (one taking two leases at a time) on a semaphore of 3.
// At no time are more than 3 leases held, every contender gets all its
// turns, and no lease node is left.
func TestInterop_SemaphoreMixedNeverExceedsMax(t *testing.T) {
	const maxLeases, rounds = 3, 8
	observer := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, observer, base) })
	path := base + "/sem"
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	var w leaseWitness
	w.max.Store(maxLeases)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	turns := map[string]*atomic.Int32{}
	for i := range 3 {
		who, mine := fmt.Sprintf("go%d", i+1), new(atomic.Int32)
		turns[who] = mine
		s, err := semaphorev2.New(newClient(t), path, maxLeases)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				lease, err := s.Acquire(ctx)
				if err != nil {
					errs <- fmt.Errorf("%s acquire: %w", who, err)
					return
				}
				w.take(who, 1)
				mine.Add(1)
				time.Sleep(3 * time.Millisecond)
				w.give(1)
				if err := s.ReturnLease(ctx, lease); err != nil {
					errs <- fmt.Errorf("%s return: %w", who, err)
					return
				}
			}
		}()
	}
	for i, qty := range []int32{1, 2} {
		who, mine := fmt.Sprintf("java%d", i+1), new(atomic.Int32)
		turns[who] = mine
		j := startJava(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				ok, err := j.Bool(ctx, "sem.acquire", path, strconv.Itoa(maxLeases), strconv.Itoa(int(qty)), "20000")
				if err != nil || !ok {
					errs <- fmt.Errorf("%s acquire %d = %v, %v", who, qty, ok, err)
					return
				}
				w.take(who, qty)
				mine.Add(1)
				time.Sleep(3 * time.Millisecond)
				w.give(qty)
				if _, err := j.Call(ctx, "sem.returnall", path); err != nil {
					errs <- fmt.Errorf("%s return: %w", who, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	w.check(t)
	t.Logf("peak leases held at once: %d of %d", w.peak.Load(), maxLeases)
	for who, n := range turns {
		if n.Load() != rounds {
			t.Errorf("%s held leases %d times, want %d", who, n.Load(), rounds)
		}
	}
	for _, dir := range []string{path + "/leases", path + "/locks"} {
		if kids := children(t, observer, dir); len(kids) != 0 {
			t.Errorf("nodes left under %s: %q", dir, kids)
		}
	}
}

// TestInterop_SemaphoreFullPoolBlocksBothSides fills a semaphore of 3 with
// two Curator leases and one Go lease. Neither side gets another; both list
// the same lease nodes; each side's return lets the other side in.
func TestInterop_SemaphoreFullPoolBlocksBothSides(t *testing.T) {
	const maxLeases = "3"
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j1, j2 := startJava(t), startJava(t)
	path := base + "/sem"
	ctx := t.Context()
	s, err := semaphorev2.New(c, path, 3)
	if err != nil {
		t.Fatal(err)
	}

	if ok, err := j1.Bool(javaCtx(t, 10*time.Second), "sem.acquire", path, maxLeases, "2", "5000"); err != nil || !ok {
		t.Fatalf("Curator acquire 2 of 3 = %v, %v", ok, err)
	}
	lease, ok, err := s.TryAcquire(ctx, 5*time.Second)
	if err != nil || !ok {
		t.Fatalf("Go TryAcquire of the third lease = %v, %v", ok, err)
	}
	if _, ok, err := s.TryAcquire(ctx, settle); err != nil || ok {
		t.Fatalf("Go TryAcquire of a fourth lease = %v, %v; want false", ok, err)
	}
	if ok, err := j2.Bool(javaCtx(t, 10*time.Second), "sem.acquire", path, maxLeases, "1", settleMs); err != nil || ok {
		t.Fatalf("Curator acquire of a fourth lease = %v, %v; want false", ok, err)
	}

	goList, err := s.Participants(ctx)
	if err != nil {
		t.Fatalf("Go Participants: %v", err)
	}
	javaList, err := j1.Fields(javaCtx(t, 10*time.Second), "sem.participants", path, maxLeases)
	if err != nil {
		t.Fatalf("Curator participants: %v", err)
	}
	if len(goList) != 3 || fmt.Sprint(slices.Sorted(slices.Values(goList))) != fmt.Sprint(slices.Sorted(slices.Values(javaList))) {
		t.Errorf("lease nodes: Go lists %q, Curator %q; want the same 3", goList, javaList)
	}
	if kids := children(t, c, path+"/leases"); len(kids) != 3 {
		t.Errorf("after both sides' failed tries, leases/ holds %q; want the 3 held", kids)
	}

	// Go's return lets a Curator waiter in; Curator's return lets Go in.
	javaIn := make(chan error, 1)
	go func() {
		ok, err := j2.Bool(javaCtx(t, 20*time.Second), "sem.acquire", path, maxLeases, "1", "15000")
		if err == nil && !ok {
			err = fmt.Errorf("timed out")
		}
		javaIn <- err
	}()
	select {
	case err := <-javaIn:
		t.Fatalf("Curator waiter returned (%v) while the pool was full", err)
	case <-time.After(settle):
	}
	if err := s.ReturnLease(ctx, lease); err != nil {
		t.Fatalf("Go ReturnLease: %v", err)
	}
	if err := <-javaIn; err != nil {
		t.Fatalf("Curator acquire after Go's return: %v", err)
	}
	if _, err := j1.Call(javaCtx(t, 10*time.Second), "sem.returnall", path); err != nil {
		t.Fatalf("Curator returnAll: %v", err)
	}
	leases, ok, err := s.TryAcquireN(ctx, 2, 5*time.Second)
	if err != nil || !ok {
		t.Fatalf("Go TryAcquireN(2) after Curator returned 2 = %v, %v", ok, err)
	}
	if err := s.ReturnAll(ctx, leases); err != nil {
		t.Fatalf("Go ReturnAll: %v", err)
	}
	if _, err := j2.Call(javaCtx(t, 10*time.Second), "sem.returnall", path); err != nil {
		t.Fatalf("Curator returnAll: %v", err)
	}
}

// TestInterop_SemaphoreMutexGoAndJavaExclude runs two Go and two Curator
// InterProcessSemaphoreMutex holders on one path: never two at once, all
// their turns, nothing left behind. The Go holders release from another
// goroutine than the one that acquired, which the semaphore mutex allows.
func TestInterop_SemaphoreMutexGoAndJavaExclude(t *testing.T) {
	const rounds = 6
	observer := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, observer, base) })
	path := base + "/semmutex"
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	var w witness
	var turns [4]atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 2 {
		id := int32(i + 1)
		m, err := semaphoremutex.New(newClient(t), path)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				h, err := m.Acquire(ctx)
				if err != nil {
					errs <- fmt.Errorf("go %d acquire: %w", id, err)
					return
				}
				w.enter(id)
				turns[id-1].Add(1)
				time.Sleep(2 * time.Millisecond)
				w.leave(id)
				released := make(chan error, 1)
				go func() { released <- h.Release(ctx) }() // the hold, from another goroutine
				if err := <-released; err != nil {
					errs <- fmt.Errorf("go %d release: %w", id, err)
					return
				}
			}
		}()
	}
	for i := range 2 {
		id := int32(i + 3)
		j := startJava(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				ok, err := j.Bool(ctx, "semmutex.acquire", path, "20000")
				if err != nil || !ok {
					errs <- fmt.Errorf("java %d acquire = %v, %v", id, ok, err)
					return
				}
				w.enter(id)
				turns[id-1].Add(1)
				time.Sleep(2 * time.Millisecond)
				w.leave(id)
				if _, err := j.Call(ctx, "semmutex.release", path); err != nil {
					errs <- fmt.Errorf("java %d release: %w", id, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	w.check(t)
	for i := range turns {
		if n := turns[i].Load(); n != rounds {
			t.Errorf("contender %d held the lock %d times, want %d", i+1, n, rounds)
		}
	}
	for _, dir := range []string{path + "/leases", path + "/locks"} {
		if kids := children(t, observer, dir); len(kids) != 0 {
			t.Errorf("nodes left under %s: %q", dir, kids)
		}
	}
}
