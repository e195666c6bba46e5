package integration

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/recipes/atomiclong"
	"github.com/go-curator/curator/zktest"
)

// A Long writes at the version of its own last write without reading
// while that write is fresh. Every other writer's change in between must
// still be seen: the write fails on the version and the Long reads.
func TestAtomicLong_WriteOnOwnLastWriteSeesOthers(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t)
	c1, c2 := newClient(t), newClient(t)
	l1, l2 := newLong(t, c1, path, nTimes(t, 10)), newLong(t, c2, path, nTimes(t, 10))
	ctx := t.Context()
	inc := func(l *atomiclong.Long, pre int64) {
		t.Helper()
		r, err := l.Increment(ctx)
		if err != nil || !r.Succeeded || r.PreValue != pre || r.PostValue != pre+1 {
			t.Fatalf("Increment = %+v, %v; want %d -> %d", r, err, pre, pre+1)
		}
	}
	for i := range int64(3) {
		inc(l1, i) // the first creates the node; the next write on their own
	}
	if r, err := l2.Add(ctx, 100); err != nil || !r.Succeeded || r.PostValue != 103 {
		t.Fatalf("other client's Add = %+v, %v; want 3 -> 103", r, err)
	}
	inc(l1, 103)
	if err := l2.ForceSet(ctx, 500); err != nil {
		t.Fatal(err)
	}
	inc(l1, 500)
	r, err := l2.CompareAndSet(ctx, 501, 7)
	if err != nil || !r.Succeeded {
		t.Fatalf("other client's CompareAndSet = %+v, %v", r, err)
	}
	inc(l1, 7)
	// Deleted and made again at version 0: the Long's last version does
	// not match it.
	if err := c2.Delete().ForPath(ctx, path); err != nil {
		t.Fatal(err)
	}
	if ok, err := l2.Initialize(ctx, 40); err != nil || !ok {
		t.Fatalf("Initialize = %v, %v", ok, err)
	}
	inc(l1, 40)
	if r, err := l2.Get(ctx); err != nil || r.PreValue != 41 {
		t.Fatalf("Get = %+v, %v; want 41", r, err)
	}
}

// Clients that each increment their own Long, as separate processes do,
// take turns (the winner writes on its last write and yields when it sees
// another writer's request; losers sleep): every increment happens exactly
// once, and the post values are exactly 1..N.
func TestAtomicLong_TurnsUnderContention(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t)
	const clients, each = 16, 30
	longs := make([]*atomiclong.Long, clients)
	for i := range longs {
		longs[i] = newLong(t, newClient(t), path, nTimes(t, 1000))
	}
	ctx := t.Context()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		posts []int64
		tries int
	)
	for i, l := range longs {
		wg.Go(func() {
			last := int64(0)
			for range each {
				r, err := l.Increment(ctx)
				if err != nil || !r.Succeeded {
					t.Errorf("client %d: Increment = %+v, %v", i, r, err)
					return
				}
				if r.PostValue != r.PreValue+1 || r.PostValue <= last {
					t.Errorf("client %d: %d -> %d after %d", i, r.PreValue, r.PostValue, last)
				}
				last = r.PostValue
				mu.Lock()
				posts = append(posts, r.PostValue)
				tries += r.Stats.OptimisticTries
				mu.Unlock()
			}
		})
	}
	// Goroutines sharing one Long share its last write too.
	shared := newLong(t, newClient(t), path, nTimes(t, 1000))
	for g := range 4 {
		wg.Go(func() {
			for range each {
				r, err := shared.Increment(ctx)
				if err != nil || !r.Succeeded || r.PostValue != r.PreValue+1 {
					t.Errorf("shared goroutine %d: Increment = %+v, %v", g, r, err)
					return
				}
				mu.Lock()
				posts = append(posts, r.PostValue)
				tries += r.Stats.OptimisticTries
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	const n = (clients + 4) * each
	if r, err := longs[0].Get(ctx); err != nil || r.PreValue != n {
		t.Fatalf("final value = %+v, %v; want %d", r, err, n)
	}
	slices.Sort(posts)
	for i, p := range posts {
		if p != int64(i+1) {
			t.Fatalf("post values are not exactly 1..%d, each once: position %d is %d", n, i, p)
		}
	}
	t.Logf("%d increments in %d tries", n, tries)
}

// The write on a Long's own last write (no read) whose reply is lost
// after the server applied it: the client's retry meets BadVersion, which
// must not read as a lost race (the next try would add again).
func TestAtomicLong_LostReplyOfWriteOnOwnLastWrite(t *testing.T) {
	faultsNoLeaks(t)
	c, p, obs := lostReplyClient(t)
	path := counterPath(t) + "/orders"
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	l := newLong(t, c, path, nTimes(t, 10))
	for i := range int64(2) {
		if r, err := l.Increment(ctx); err != nil || !r.Succeeded || r.PostValue != i+1 {
			t.Fatalf("Increment %d = %+v, %v", i, r, err)
		}
	}
	p.LoseNextReply(zktest.OpSetData)
	res, err := l.Increment(ctx) // within 10 ms of the last: no read
	struck(t, p, 1)
	now := readLong(t, obs, path)
	switch {
	case err == nil:
		if !res.Succeeded || res.PreValue != 2 || res.PostValue != 3 || now != 3 {
			t.Fatalf("Increment = %+v, counter %d: want 2 -> 3 and the counter at 3", res, now)
		}
	case errors.Is(err, atomiclong.ErrIndeterminate):
		if res.Succeeded || res.PreValue != 2 || res.PostValue != 3 || (now != 2 && now != 3) {
			t.Fatalf("indeterminate Increment = %+v, counter %d: want not succeeded, 2 -> 3, the counter at 2 or 3", res, now)
		}
		t.Logf("indeterminate (%v); the counter is %d", err, now)
	default:
		t.Fatalf("Increment with a lost reply: %v", err)
	}
	// The Long goes on from what is there, with a read.
	r, err := l.Increment(ctx)
	if err != nil || !r.Succeeded || r.PreValue != now || r.PostValue != now+1 {
		t.Fatalf("next Increment = %+v, %v; want %d -> %d", r, err, now, now+1)
	}
}
