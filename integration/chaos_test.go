package integration

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/recipes/mutex"
)

// guardedWork writes to the fenced resource a few times while the hold is
// trusted, and stops at once when lost closes.
func (ch *chaos) guardedWork(token int64, lost <-chan struct{}) {
	ch.guardedWorkFor(token, lost, 5)
}

// guardedWorkFor writes to the fenced resource n times, 5 ms apart, and
// stops when lost closes.
func (ch *chaos) guardedWorkFor(token int64, lost <-chan struct{}, n int) {
	for i := 0; i < n; i++ {
		ch.fence.write(token)
		select {
		case <-lost:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// chaosLongHold is how long a long hold works: past a partition and past
// the servers' session timeout, so that a holder who learns of its loss
// too late overlaps the next holder.
const chaosLongHold = 5 * time.Second

func TestChaos_MutexUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Log("short mode: running the chaos loop for 10 s")
	}
	duration := chaosDuration(40 * time.Second)
	if testing.Short() {
		duration = 10 * time.Second
	}
	ch := newChaos(t, 8)
	path := testPath(t)
	ctx, cancel := context.WithTimeout(t.Context(), duration)
	defer cancel()

	locks := make([]*mutex.Mutex, len(ch.clients))
	for i, cc := range ch.clients {
		locks[i] = newMutex(t, cc.c, path)
	}
	var (
		wg   sync.WaitGroup
		emu  sync.Mutex
		errs = map[string]int{}
	)
	for i, cc := range ch.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(chaosSeed(), uint64(i)))
			m := locks[i]
			for ctx.Err() == nil {
				acqCall := time.Now()
				held, ok, err := m.TryAcquire(ctx, 3*time.Second)
				acqRet := time.Now()
				if err != nil || !ok {
					emu.Lock()
					switch {
					case err == nil:
						errs["timeout"]++
					case ctx.Err() != nil:
					default:
						errs[errClass(err)]++
					}
					emu.Unlock()
					continue
				}
				token, _ := held.FencingToken()
				lost := held.Lost()
				h, released := ch.record(cc, "write", token, acqCall, acqRet, lost)
				if rng.IntN(8) == 0 {
					// A long hold, which the faults (aimed at holders) hit.
					ch.guardedWorkFor(token, lost, int(chaosLongHold/(5*time.Millisecond)))
				} else {
					ch.guardedWork(token, lost)
				}
				h.relCall = time.Now()
				rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				if err := held.Release(rctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
					emu.Lock()
					errs["release: "+errClass(err)]++
					emu.Unlock()
				}
				rcancel()
				h.relRet = time.Now()
				released()
			}
		}()
	}
	ch.injectFaults(ctx, chaosSeed(), func(cc *chaosClient) bool { return locks[cc.id].IsAcquiredInThisProcess() })
	wg.Wait()

	lost := ch.checkHistory(0)
	ch.checkTokens()
	t.Log(ch.report(len(ch.holds), errs, lost))
	if len(ch.holds) < 20 {
		t.Fatalf("only %d acquisitions in %v: no progress", len(ch.holds), duration)
	}
	if ch.fence.rejected > 0 {
		t.Logf("the fenced resource rejected %d stale writes (holders whose sessions the suite expired)", ch.fence.rejected)
	}
}

// errClass names an error for the run's counts.
func errClass(err error) string {
	s := err.Error()
	if len(s) > 60 {
		s = s[len(s)-60:]
	}
	return s
}
