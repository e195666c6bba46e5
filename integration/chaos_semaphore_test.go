package integration

import (
	"context"
	"errors"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/recipes/semaphorev2"
)

// peakTrusted returns the most holds of kind that were held at once while
// trusted (between acquire's return and the start of their end).
func (ch *chaos) peakTrusted(kind string) int {
	ch.hmu.Lock()
	defer ch.hmu.Unlock()
	type edge struct {
		at time.Time
		d  int
	}
	var edges []edge
	for _, h := range ch.holds {
		if h.kind != kind {
			continue
		}
		end, _, _ := h.ends()
		if end.After(h.acqRet) {
			edges = append(edges, edge{h.acqRet, 1}, edge{end, -1})
		}
	}
	// Ends sort before starts at the same instant: touching is not overlap.
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].d < edges[j].d
		}
		return edges[i].at.Before(edges[j].at)
	})
	n, peak := 0, 0
	for _, e := range edges {
		n += e.d
		peak = max(peak, n)
	}
	return peak
}

// TestChaos_SemaphoreUnderFaults runs 8 clients on one semaphore of 3
// leases, each taking one lease (client 0 sometimes two at once), under the seeded fault schedule. porcupine checks that no more than 3
// trusted leases were ever held at once; the run must reach all 3 and
// leave no lease node behind.
func TestChaos_SemaphoreUnderFaults(t *testing.T) {
	faultsNoLeaks(t)
	const maxLeases = 3
	duration := chaosDuration(20 * time.Second)
	ch := newChaos(t, 8)
	path := testPath(t)
	ctx, cancel := context.WithTimeout(t.Context(), duration)
	defer cancel()

	sems := make([]*semaphorev2.Semaphore, len(ch.clients))
	held := make([]atomic.Int32, len(ch.clients))
	for i, cc := range ch.clients {
		sems[i] = newSem(t, cc.c, path, maxLeases)
	}
	var (
		wg   sync.WaitGroup
		emu  sync.Mutex
		errs = map[string]int{}
	)
	note := func(key string) {
		emu.Lock()
		errs[key]++
		emu.Unlock()
	}
	seed := chaosSeed()
	for i, cc := range ch.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			for ctx.Err() == nil {
				// Callers that hold some leases while waiting for more can
				// deadlock one another (see AcquireN), so only client 0
				// takes two at once, half of the time.
				qty := 1
				if i == 0 && rng.IntN(2) == 0 {
					qty = 2
				}
				acqCall := time.Now()
				leases, ok, err := sems[i].TryAcquireN(ctx, qty, 3*time.Second)
				acqRet := time.Now()
				if err != nil || !ok {
					switch {
					case err == nil:
						note("timeout")
					case ctx.Err() != nil:
					default:
						note(errClass(err))
					}
					if len(leases) != 0 {
						t.Errorf("a failed TryAcquireN(%d) returned %d leases", qty, len(leases))
					}
					continue
				}
				if len(leases) != qty {
					t.Errorf("TryAcquireN(%d) granted %d leases", qty, len(leases))
				}
				held[i].Add(int32(len(leases)))
				holds := make([]*holdRecord, len(leases))
				stops := make([]func(), len(leases))
				lost := make([]<-chan struct{}, len(leases))
				for j, l := range leases {
					token, err := l.FencingToken()
					if err != nil {
						t.Errorf("FencingToken of a lease just granted: %v", err)
					}
					holds[j], stops[j] = ch.record(cc, "lease", token, acqCall, acqRet, l.Lost())
					lost[j] = l.Lost()
				}
				// Guarded work: stop at once when any lease is lost.
				for k := 0; k < 5; k++ {
					if anyClosed(lost) {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				relCall := time.Now()
				rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				for _, l := range leases {
					if err := l.Close(rctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
						note("close: " + errClass(err))
					}
				}
				rcancel()
				relRet := time.Now()
				held[i].Add(-int32(len(leases)))
				for j, h := range holds {
					h.relCall, h.relRet = relCall, relRet
					stops[j]()
				}
			}
		}()
	}
	ch.injectFaults(ctx, seed, func(cc *chaosClient) bool { return held[cc.id].Load() > 0 })
	wg.Wait()

	lost := ch.checkHistory(maxLeases)
	peak := ch.peakTrusted("lease")
	t.Logf("semaphore: max %d, peak trusted leases at once %d", maxLeases, peak)
	t.Log(ch.report(len(ch.holds), errs, lost))
	if len(ch.holds) < 20 {
		t.Fatalf("only %d leases in %v: no progress", len(ch.holds), duration)
	}
	if peak != maxLeases {
		t.Fatalf("at most %d trusted leases were held at once; want the semaphore to reach its %d", peak, maxLeases)
	}
	// Closed leases and those of expired sessions are all gone.
	obs := ch.clients[0].c
	eventually(t, 3*testSessionTimeout, func() bool { return len(children(t, obs, path+"/leases")) == 0 },
		"no lease node left after every lease was closed")
}

func anyClosed(chs []<-chan struct{}) bool {
	for _, ch := range chs {
		select {
		case <-ch:
			return true
		default:
		}
	}
	return false
}
