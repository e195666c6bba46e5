package integration

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/recipes/mutex"
)

// witness is shared by every holder in a test: a holder marks it right
// after its acquire returns and clears it right before it releases, so the
// marked spans lie inside the real holds and any overlap seen is real.
type witness struct {
	holder   atomic.Int32
	mu       sync.Mutex
	overlaps []string
}

func (w *witness) enter(id int32) {
	if !w.holder.CompareAndSwap(0, id) {
		w.mu.Lock()
		w.overlaps = append(w.overlaps, fmt.Sprintf("%d entered while %d held", id, w.holder.Load()))
		w.mu.Unlock()
	}
}

func (w *witness) leave(id int32) {
	if !w.holder.CompareAndSwap(id, 0) {
		w.mu.Lock()
		w.overlaps = append(w.overlaps, fmt.Sprintf("%d left while %d held", id, w.holder.Load()))
		w.mu.Unlock()
	}
}

func (w *witness) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.overlaps {
		t.Errorf("two holders at once: %s", o)
	}
}

// TestInterop_MutexGoAndJavaExclude runs two Go clients and two Curator
// processes on one lock path. No two of them ever hold it at once, every
// contender gets all its turns, and the path is empty at the end.
func TestInterop_MutexGoAndJavaExclude(t *testing.T) {
	const rounds = 8
	base := testPath(t)
	lockPath := base + "/lock"
	observer := newClient(t)
	t.Cleanup(func() { deleteTree(t, observer, base) })
	javas := []*interop.Helper{startJava(t), startJava(t)}
	gos := []*framework.Client{newClient(t), newClient(t)}

	var w witness
	var turns [4]atomic.Int32
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for i, c := range gos {
		id := int32(i + 1)
		m, err := mutex.New(c, lockPath)
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
				if err := h.Release(ctx); err != nil {
					errs <- fmt.Errorf("go %d release: %w", id, err)
					return
				}
			}
		}()
	}
	for i, j := range javas {
		id := int32(len(gos) + i + 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				held, err := j.Bool(ctx, "mutex.acquire", lockPath, "20000")
				if err != nil || !held {
					errs <- fmt.Errorf("java %d acquire = %v, %v", id, held, err)
					return
				}
				w.enter(id)
				turns[id-1].Add(1)
				time.Sleep(2 * time.Millisecond)
				w.leave(id)
				if _, err := j.Call(ctx, "mutex.release", lockPath); err != nil {
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
	if kids := children(t, observer, lockPath); len(kids) != 0 {
		t.Errorf("nodes left under %s: %q", lockPath, kids)
	}
}

// TestInterop_MutexQueueOrderAcrossLanguages queues Java, Go, Java, Go on
// one lock. Both libraries list the same participants in that order, and
// the lock passes down the queue in that order.
func TestInterop_MutexQueueOrderAcrossLanguages(t *testing.T) {
	base := testPath(t)
	lockPath := base + "/lock"
	observer := newClient(t)
	t.Cleanup(func() { deleteTree(t, observer, base) })
	javaA, javaB := startJava(t), startJava(t)
	goC, goD := newClient(t), newClient(t)
	// Session IDs now: a helper blocked in an acquire answers nothing else.
	sessions := map[int64]string{
		javaSession(t, javaA): "javaA", javaSession(t, javaB): "javaB",
		goC.ZooKeeper().SessionID(): "goC", goD.ZooKeeper().SessionID(): "goD",
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	var order []string
	var orderMu sync.Mutex
	record := func(who string) {
		orderMu.Lock()
		order = append(order, who)
		orderMu.Unlock()
	}
	waitQueue := func(n int) {
		t.Helper()
		eventually(t, 10*time.Second, func() bool { return len(children(t, observer, lockPath)) == n },
			fmt.Sprintf("%d contenders queued on %s", n, lockPath))
	}

	// A Java holder, then a Go waiter, a Java waiter, a Go waiter.
	if held, err := javaA.Bool(ctx, "mutex.acquire", lockPath, "10000"); err != nil || !held {
		t.Fatalf("java A acquire = %v, %v", held, err)
	}
	record("javaA")
	waitQueue(1)

	goWaiter := func(name string, c *framework.Client) (acquired <-chan struct{}, release chan<- struct{}, done <-chan error) {
		m, err := mutex.New(c, lockPath)
		if err != nil {
			t.Fatal(err)
		}
		acq, rel, fin := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			h, err := m.Acquire(ctx)
			if err != nil {
				fin <- err
				return
			}
			record(name)
			close(acq)
			<-rel
			fin <- h.Release(ctx)
		}()
		return acq, rel, fin
	}
	cAcquired, cRelease, cDone := goWaiter("goC", goC)
	waitQueue(2)
	bDone := make(chan error, 1)
	go func() {
		held, err := javaB.Bool(ctx, "mutex.acquire", lockPath, "20000")
		if err == nil && !held {
			err = fmt.Errorf("java B timed out")
		}
		if err == nil {
			record("javaB")
		}
		bDone <- err
	}()
	waitQueue(3)
	dAcquired, dRelease, dDone := goWaiter("goD", goD)
	waitQueue(4)

	// Both libraries list the same four nodes, in the order they queued.
	mObs, err := mutex.New(observer, lockPath)
	if err != nil {
		t.Fatal(err)
	}
	goList, err := mObs.Participants(ctx)
	if err != nil {
		t.Fatalf("Go participants: %v", err)
	}
	javaList, err := javaA.Fields(ctx, "mutex.participants", lockPath)
	if err != nil {
		t.Fatalf("Java participants: %v", err)
	}
	if fmt.Sprint(goList) != fmt.Sprint(javaList) {
		t.Errorf("participants differ:\nGo:   %q\nJava: %q", goList, javaList)
	}
	var owners []string
	for _, p := range goList {
		stat, err := observer.CheckExists().ForPath(ctx, p)
		if err != nil || stat == nil {
			t.Fatalf("stat %s: %v, %v", p, stat, err)
		}
		owners = append(owners, sessions[stat.EphemeralOwner])
	}
	if want := "[javaA goC javaB goD]"; fmt.Sprint(owners) != want {
		t.Errorf("participants' owners in order = %v, want %s", owners, want)
	}

	// The lock passes down the queue.
	if _, err := javaA.Call(ctx, "mutex.release", lockPath); err != nil {
		t.Fatalf("java A release: %v", err)
	}
	awaitHold(t, "go C", cAcquired, cDone)
	close(cRelease)
	if err := <-cDone; err != nil {
		t.Fatalf("go C: %v", err)
	}
	if err := <-bDone; err != nil {
		t.Fatalf("java B acquire: %v", err)
	}
	if _, err := javaB.Call(ctx, "mutex.release", lockPath); err != nil {
		t.Fatalf("java B release: %v", err)
	}
	awaitHold(t, "go D", dAcquired, dDone)
	close(dRelease)
	if err := <-dDone; err != nil {
		t.Fatalf("go D: %v", err)
	}
	if want := "[javaA goC javaB goD]"; fmt.Sprint(order) != want {
		t.Errorf("holders in order %v, want %s", order, want)
	}
	if kids := children(t, observer, lockPath); len(kids) != 0 {
		t.Errorf("nodes left under %s: %q", lockPath, kids)
	}
}

// javaSession returns the helper's ZooKeeper session ID.
func javaSession(t testing.TB, j *interop.Helper) int64 {
	t.Helper()
	s, err := j.Call(javaCtx(t, 10*time.Second), "session")
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	id, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		t.Fatalf("session %q: %v", s, err)
	}
	return int64(id)
}

// awaitHold waits until a Go waiter holds the lock, failing if it ended
// first.
func awaitHold(t testing.TB, who string, acquired <-chan struct{}, done <-chan error) {
	t.Helper()
	select {
	case <-acquired:
	case err := <-done:
		t.Fatalf("%s ended before it held the lock: %v", who, err)
	case <-time.After(15 * time.Second):
		t.Fatalf("%s never held the lock", who)
	}
}
