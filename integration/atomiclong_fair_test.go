package integration

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/recipes/atomiclong"
)

// Eight clients, each with its own Long and a policy of few tries, make a
// fixed number of increments each on one counter (issue 24: a loser used
// to sleep in its backoff while the others won every race, and with few
// tries its increment failed). With the promoted lock every Long has by
// default, a loser queues for its turn: every increment succeeds at its
// first call, each exactly once (the post values are 1..N, each once, and
// porcupine finds the history linearizable), the counter ends at N in
// Curator's encoding, and the lock's queue is empty.
func TestAtomicLong_EveryClientFinishesUnderContention(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t)
	const clients, each = 8, 40
	longs := make([]*atomiclong.Long, clients)
	for i := range longs {
		// Four tries: too few for a loser that sleeps between them.
		longs[i] = newLong(t, newClient(t), path, nTimes(t, 3))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	h := &ctrHistory{start: time.Now(), errs: map[string]int{}}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		posts    []int64
		done     [clients]int
		promoted int
	)
	for i, l := range longs {
		wg.Go(func() {
			for range each {
				call := time.Now()
				r, err := l.Increment(ctx)
				ret := time.Now()
				if err != nil || !r.Succeeded {
					t.Errorf("client %d, increment %d: %+v, %v; want a success", i, done[i]+1, r, err)
					return
				}
				if r.PostValue != r.PreValue+1 {
					t.Errorf("client %d: %d -> %d", i, r.PreValue, r.PostValue)
				}
				h.add(ctrOp{client: i, counter: counterLong, pre: r.PreValue, call: call, ret: ret})
				mu.Lock()
				posts = append(posts, r.PostValue)
				done[i]++
				promoted += min(r.Stats.PromotedLockTries, 1)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for i, n := range done {
		if n != each {
			t.Errorf("client %d finished %d of its %d increments", i, n, each)
		}
	}
	if t.Failed() {
		return
	}
	const n = clients * each
	r, err := longs[0].Get(ctx)
	if err != nil || r.PreValue != n {
		t.Fatalf("final value = %+v, %v; want %d", r, err, n)
	}
	at := time.Now()
	h.add(ctrOp{client: clients, counter: counterLong, read: true, pre: r.PreValue, call: at, ret: at})
	slices.Sort(posts)
	for i, p := range posts {
		if p != int64(i+1) {
			t.Fatalf("post values are not exactly 1..%d, each once: position %d is %d", n, i, p)
		}
	}
	h.check(t)
	c := newClient(t)
	if got := nodeBytes(t, c, path); !bytes.Equal(got, curatorLong(n)) {
		t.Errorf("node holds %x; want Curator's 8-byte %d", got, n)
	}
	if kids := children(t, c, path+atomiclong.DefaultLockSuffix); len(kids) != 0 {
		t.Errorf("promoted lock nodes left: %v", kids)
	}
	t.Logf("%d of %d increments went through the promoted lock", promoted, n)
}

// A Long made WithoutPromotedLock writes no node but the counter's, as
// Curator's optimistic DistributedAtomicLong, even when it loses races.
func TestAtomicLong_WithoutPromotedLockWritesOnlyTheCounter(t *testing.T) {
	countersNoLeaks(t)
	dir := counterPath(t)
	path := dir + "/counter"
	const clients, each = 4, 25
	var wg sync.WaitGroup
	for i := range clients {
		l := newLong(t, newClient(t), path, nTimes(t, 1000), atomiclong.WithoutPromotedLock())
		wg.Go(func() {
			for range each {
				if r, err := l.Increment(t.Context()); err != nil || !r.Succeeded || r.Stats.PromotedLockTries != 0 {
					t.Errorf("client %d: Increment = %+v, %v; want a success without the lock", i, r, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if kids := children(t, newClient(t), dir); !slices.Equal(kids, []string{"counter"}) {
		t.Errorf("nodes under %s: %v; want the counter alone", dir, kids)
	}
	if got := readLong(t, newClient(t), path); got != clients*each {
		t.Errorf("final value %d; want %d", got, clients*each)
	}
}
