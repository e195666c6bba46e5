package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/atomiclong"
	"github.com/go-curator/curator/recipes/sharedcount"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
)

// The counters' chaos loop: clients behind fault proxies that lose a
// share of the replies to writes and reads the server applied, and reset
// connections now and then, increment an atomiclong and a sharedcount
// (read, then compare-and-set). Each increment is recorded as applied (a
// definite success, with the value it replaced), indeterminate (an error
// matching ErrIndeterminate, with the value it would have replaced), or
// not applied (a lost race, or any other error), and porcupine checks the
// history against a counter in which an indeterminate increment may or
// may not have happened, as Jepsen models an operation whose outcome is
// unknown: it never returns, so it may take effect at any time after its
// call. The final values, read once the run is over, are part of the
// history: each is the number of applied increments plus some of the
// indeterminate ones. A change applied twice (a lost reply read as a lost
// race, then tried again) makes the history illegal.

// Which counter an operation touched.
const (
	counterLong = iota
	counterCount
)

var counterNames = [...]string{"atomiclong", "sharedcount"}

// ctrOp is one recorded counter operation.
type ctrOp struct {
	client  int
	counter int
	read    bool  // a read of the value: pre is the value read
	maybe   bool  // indeterminate: may or may not have been applied
	pre     int64 // the value the increment replaced, or would have
	call    time.Time
	ret     time.Time // for an indeterminate op, unknown: see check
}

// ctrInput is what porcupine sees of an op.
type ctrInput struct {
	counter int
	read    bool
	maybe   bool
	pre     int64
}

// ctrHistory collects the operations of a run.
type ctrHistory struct {
	start time.Time
	mu    sync.Mutex
	ops   []ctrOp
	fails [2]int         // increments that were not applied (lost races)
	errs  map[string]int // other errors, by kind: nothing was applied
}

func (h *ctrHistory) add(op ctrOp) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

func (h *ctrHistory) fail(counter int) {
	h.mu.Lock()
	h.fails[counter]++
	h.mu.Unlock()
}

func (h *ctrHistory) err(counter int, err error) {
	h.mu.Lock()
	h.errs[counterNames[counter]+": "+errClass(err)]++
	h.mu.Unlock()
}

// counts returns the applied and indeterminate increments of counter.
func (h *ctrHistory) counts(counter int) (applied, maybe int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, op := range h.ops {
		switch {
		case op.counter != counter || op.read:
		case op.maybe:
			maybe++
		default:
			applied++
		}
	}
	return applied, maybe
}

// check runs porcupine over the history. Indeterminate operations return
// after everything else, at the end of time.
func (h *ctrHistory) check(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	ns := func(at time.Time) int64 { return at.Sub(h.start).Nanoseconds() }
	var end int64
	for _, op := range h.ops {
		end = max(end, ns(op.ret))
	}
	end += int64(time.Hour)
	ops := make([]porcupine.Operation, 0, len(h.ops))
	for _, op := range h.ops {
		ret := ns(op.ret)
		if op.maybe {
			ret = end
		}
		ops = append(ops, porcupine.Operation{
			ClientId: op.client,
			Input:    ctrInput{counter: op.counter, read: op.read, maybe: op.maybe, pre: op.pre},
			Call:     ns(op.call),
			Return:   ret,
		})
	}
	model := porcupine.NondeterministicModel{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			var parts [2][]porcupine.Operation
			for _, op := range history {
				c := op.Input.(ctrInput).counter
				parts[c] = append(parts[c], op)
			}
			return [][]porcupine.Operation{parts[0], parts[1]}
		},
		Init: func() []any { return []any{int64(0)} },
		Step: func(state, input, _ any) []any {
			s, in := state.(int64), input.(ctrInput)
			switch {
			case in.read:
				if s == in.pre {
					return []any{s}
				}
				return nil
			case s != in.pre:
				// A compare-and-set from another value fails: only an
				// increment that may not have happened fits here.
				if in.maybe {
					return []any{s}
				}
				return nil
			case in.maybe:
				return []any{s, s + 1}
			}
			return []any{s + 1}
		},
		Equal: func(a, b any) bool { return a == b },
		DescribeOperation: func(input, _ any) string {
			in := input.(ctrInput)
			switch {
			case in.read:
				return fmt.Sprintf("%s read %d", counterNames[in.counter], in.pre)
			case in.maybe:
				return fmt.Sprintf("%s %d -> %d indeterminate", counterNames[in.counter], in.pre, in.pre+1)
			}
			return fmt.Sprintf("%s %d -> %d", counterNames[in.counter], in.pre, in.pre+1)
		},
	}
	res := porcupine.CheckOperationsTimeout(model.ToModel(), ops, 2*time.Minute)
	if res == porcupine.Ok {
		return
	}
	sorted := append([]ctrOp(nil), h.ops...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].call.Before(sorted[j].call) })
	const maxLines = 500
	if len(sorted) > maxLines {
		t.Logf("the first %d of %d operations, by call time:", maxLines, len(sorted))
		sorted = sorted[:maxLines]
	}
	for _, op := range sorted {
		what := "applied"
		switch {
		case op.read:
			what = "read"
		case op.maybe:
			what = "indeterminate"
		}
		t.Logf("client %d %s %s pre %d: called %.3f s, returned %.3f s", op.client, counterNames[op.counter], what,
			op.pre, op.call.Sub(h.start).Seconds(), op.ret.Sub(h.start).Seconds())
	}
	t.Fatalf("porcupine: the history of %d counter operations is %v against a counter whose indeterminate increments may or may not have happened",
		len(ops), res)
}

func TestChaos_CountersLostReplies(t *testing.T) {
	faultsNoLeaks(t)
	const nClients = 4
	duration := chaosDuration(25 * time.Second)
	seed := chaosSeed()
	rng := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	base := counterPath(t)
	longPath, countPath := base+"/long", base+"/count"

	type worker struct {
		p     *zktest.Proxy
		long  *atomiclong.Long
		count *sharedcount.Count
	}
	// A server of its own that grants less than the clients ask for
	// (chaosMaxSession against testSessionTimeout), as the other chaos
	// loops' ensemble does: the clients must time their sessions by the
	// negotiated timeout.
	server := zktest.StartWith(t, zktest.Config{MaxSessionTimeout: chaosMaxSession})
	obs := startClient(t, builder(t, server.ConnectString()))
	workers := make([]worker, nClients)
	for i := range workers {
		// One route to the server: after a reset go-zookeeper waits a
		// second before it connects again, so a run makes about a hundred
		// reconnections, not thousands.
		p, err := zktest.NewProxy(server.ConnectString())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		b := builder(t, p.Addr())
		if i%2 == 1 {
			b = b.ConnectionStateErrorPolicy(framework.SessionErrorPolicy)
		}
		c := startClient(t, b)
		if got := c.NegotiatedSessionTimeout(); got != chaosMaxSession {
			t.Fatalf("client %d: negotiated session timeout %v, want the server's maximum %v", i, got, chaosMaxSession)
		}
		policy, err := retry.NewNTimes(20, 0)
		if err != nil {
			t.Fatal(err)
		}
		l, err := atomiclong.New(c, longPath, policy)
		if err != nil {
			t.Fatal(err)
		}
		workers[i] = worker{p: p, long: l, count: startSharedCount(t, c, countPath, 0)}
	}
	// From now on each proxy loses replies at its own rate (10 to 20%),
	// with its own seeded source (SetReplyLoss draws under that proxy's
	// lock).
	for i, w := range workers {
		w.p.SetReplyLoss(0.1+0.1*rng.Float64(), rand.New(rand.NewPCG(seed, uint64(i)+1)),
			zktest.OpSetData, zktest.OpCreate, zktest.OpCreate2, zktest.OpGetData)
	}

	h := &ctrHistory{start: time.Now(), errs: map[string]int{}}
	ctx, cancel := context.WithTimeout(t.Context(), duration)
	defer cancel()
	var wg sync.WaitGroup
	for i, w := range workers {
		wrng := rand.New(rand.NewPCG(seed, uint64(100+i)))
		wg.Go(func() {
			for ctx.Err() == nil {
				if wrng.IntN(2) == 0 {
					call := time.Now()
					res, err := w.long.Increment(ctx)
					op := ctrOp{client: i, counter: counterLong, pre: res.PreValue, call: call, ret: time.Now()}
					switch {
					case errors.Is(err, atomiclong.ErrIndeterminate):
						op.maybe = true
						fallthrough
					case err == nil && res.Succeeded:
						if res.PostValue != res.PreValue+1 {
							t.Errorf("client %d: Increment result %d -> %d (err %v)", i, res.PreValue, res.PostValue, err)
						}
						h.add(op)
					case err == nil:
						h.fail(counterLong)
					case ctx.Err() == nil:
						h.err(counterLong, err)
					}
					continue
				}
				call := time.Now()
				prev := w.count.VersionedValue()
				ok, err := w.count.TrySetCount(ctx, prev, prev.Value+1)
				op := ctrOp{client: i, counter: counterCount, pre: int64(prev.Value), call: call, ret: time.Now()}
				switch {
				case errors.Is(err, sharedcount.ErrIndeterminate):
					op.maybe = true
					fallthrough
				case ok:
					h.add(op)
				case err == nil:
					h.fail(counterCount)
				case ctx.Err() == nil:
					h.err(counterCount, err)
				}
			}
		})
	}

	// Now and then, reset one client's connection.
	wait := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	resets := 0
	for wait(time.Duration(300+rng.IntN(700)) * time.Millisecond) {
		workers[rng.IntN(nClients)].p.Reset()
		resets++
	}
	wg.Wait()
	lost := 0
	for _, w := range workers {
		w.p.SetReplyLoss(0, nil)
		lost += w.p.LostReplies()
	}

	// The final values, read after every operation returned.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer rcancel()
	for counter, path := range []string{longPath, countPath} {
		call := time.Now()
		if err := obs.Sync().ForPath(rctx, path); err != nil {
			t.Fatalf("sync %s: %v", path, err)
		}
		var v int64
		if counter == counterLong {
			v = readLong(t, obs, path)
		} else {
			v = int64(readCount(t, obs, path))
		}
		h.add(ctrOp{client: nClients, counter: counter, read: true, pre: v, call: call, ret: time.Now()})
		applied, maybe := h.counts(counter)
		t.Logf("%s: final value %d; increments applied %d, indeterminate %d, not applied %d",
			counterNames[counter], v, applied, maybe, h.fails[counter])
		if v < int64(applied) || v > int64(applied+maybe) {
			t.Errorf("%s: final value %d, but %d increments were applied and %d indeterminate: want a value in [%d, %d]",
				counterNames[counter], v, applied, maybe, applied, applied+maybe)
		}
		if applied < 20 {
			t.Errorf("%s: only %d increments applied in %v: no progress", counterNames[counter], applied, duration)
		}
	}
	t.Logf("seed %d: %d replies lost, %d resets, other errors %v", seed, lost, resets, h.errs)
	if lost < 10 {
		t.Errorf("only %d replies lost: the faults did not strike", lost)
	}
	h.check(t)
}
