package integration

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/recipes/rwlock"
)

// observe is a fenced read: the resource learns the reader's token, so a
// writer whose token is older (a writer that lost the lock and has not
// noticed yet) is refused afterwards. Readers' tokens are not ordered
// among themselves, so a read never fails.
func (r *fencedResource) observe(token int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.newest = max(r.newest, token)
}

// fencedWrites writes to the fenced resource a few times while the hold is
// trusted, stops at once when lost closes, and returns how many writes the
// resource refused.
func (ch *chaos) fencedWrites(token int64, lost <-chan struct{}) (refused int) {
	for i := 0; i < 5; i++ {
		if !ch.fence.write(token) {
			refused++
		}
		select {
		case <-lost:
			return refused
		case <-time.After(5 * time.Millisecond):
		}
	}
	return refused
}

// fencedReads reads the fenced resource a few times while the hold is
// trusted, and stops at once when lost closes.
func (ch *chaos) fencedReads(token int64, lost <-chan struct{}) {
	for i := 0; i < 5; i++ {
		ch.fence.observe(token)
		select {
		case <-lost:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// checkRefusals fails the test if the fenced resource refused a write of a
// hold that had neither seen Lost() nor had its session expired by the
// suite: only a holder that lost the lock may be behind a newer token.
func (ch *chaos) checkRefusals(refused map[*holdRecord]int) {
	ch.t.Helper()
	for h, n := range refused {
		_, _, lost := h.ends()
		if !lost && h.client.expiredDuring(h.acqRet, h.relRet).IsZero() {
			ch.t.Errorf("hold %d (client %d, %s, token %d) had %d writes refused by the fence without losing its lock",
				h.id, h.client.id, h.kind, h.token, n)
		}
	}
}

// sharedReads counts the pairs of read holds that overlapped while both
// were trusted: the read side must actually be shared.
func (ch *chaos) sharedReads() int {
	ch.hmu.Lock()
	defer ch.hmu.Unlock()
	n := 0
	for i, a := range ch.holds {
		for _, b := range ch.holds[i+1:] {
			if a.kind != "read" || b.kind != "read" {
				continue
			}
			aEnd, _, _ := a.ends()
			bEnd, _, _ := b.ends()
			if a.acqRet.Before(bEnd) && b.acqRet.Before(aEnd) {
				n++
			}
		}
	}
	return n
}

// TestChaos_RWLockUnderFaults runs 8 clients on one read/write lock, each
// taking the write lock a third of the time and the read lock otherwise,
// under the seeded fault schedule. porcupine checks that no trusted writer
// overlapped a trusted reader or another writer; the fence checks that
// writers' tokens only grow past what readers and writers have used, and
// that only holders that lost the lock were refused.
func TestChaos_RWLockUnderFaults(t *testing.T) {
	faultsNoLeaks(t)
	duration := chaosDuration(20 * time.Second)
	ch := newChaos(t, 8)
	path := testPath(t)
	ctx, cancel := context.WithTimeout(t.Context(), duration)
	defer cancel()

	locks := make([]*rwlock.Lock, len(ch.clients))
	for i, cc := range ch.clients {
		locks[i] = newRWLock(t, cc.c, path)
	}
	var (
		wg      sync.WaitGroup
		emu     sync.Mutex
		errs    = map[string]int{}
		refused = map[*holdRecord]int{}
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
				kind, m := "read", locks[i].ReadLock()
				if rng.IntN(3) == 0 {
					kind, m = "write", locks[i].WriteLock()
				}
				acqCall := time.Now()
				held, ok, err := m.TryAcquire(ctx, 3*time.Second)
				acqRet := time.Now()
				if err != nil || !ok {
					switch {
					case err == nil:
						note(kind + " timeout")
					case ctx.Err() != nil:
					default:
						note(kind + ": " + errClass(err))
					}
					continue
				}
				token, err := held.FencingToken()
				if err != nil {
					t.Errorf("FencingToken of a %s hold: %v", kind, err)
				}
				lost := held.Lost()
				h, released := ch.record(cc, kind, token, acqCall, acqRet, lost)
				if kind == "write" {
					if n := ch.fencedWrites(token, lost); n > 0 {
						emu.Lock()
						refused[h] = n
						emu.Unlock()
					}
				} else {
					ch.fencedReads(token, lost)
				}
				h.relCall = time.Now()
				rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				if err := held.Release(rctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
					note("release " + kind + ": " + errClass(err))
				}
				rcancel()
				h.relRet = time.Now()
				released()
				if m.IsOwnedByCurrentGoroutine() {
					t.Errorf("client %d still owns the %s lock after Release", i, kind)
				}
			}
		}()
	}
	ch.injectFaults(ctx, seed, func(cc *chaosClient) bool {
		return locks[cc.id].ReadLock().IsAcquiredInThisProcess() || locks[cc.id].WriteLock().IsAcquiredInThisProcess()
	})
	wg.Wait()

	lost := ch.checkHistory(0)
	ch.checkTokens()
	ch.checkRefusals(refused)
	reads, writes := 0, 0
	for _, h := range ch.holds {
		if h.kind == "read" {
			reads++
		} else {
			writes++
		}
	}
	shared := ch.sharedReads()
	t.Logf("rwlock: reads %d, writes %d, overlapping trusted reads %d", reads, writes, shared)
	t.Log(ch.report(len(ch.holds), errs, lost))
	if reads < 10 || writes < 5 {
		t.Fatalf("only %d reads and %d writes in %v: no progress", reads, writes, duration)
	}
	if shared == 0 {
		t.Fatalf("no two of %d read holds overlapped: the read lock was not shared", reads)
	}
}
