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

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// Issue 30, item 7: the fenced mutex workload while nothing but the lock's
// own queue should make a holder, and two foreign clients try to: an
// "operator" (the workers' identity, as an admin would be) deletes random
// lock nodes, waiters' and holders' alike, every 50-200 ms; and a client
// that may only read the lock (world:READ on the lock path; the grants
// directory is world-writable by default) lists the queue and creates
// <grants>/<name> for every node it sees, as fast as it can.
//
// Checked: no two holds get the same fencing token; the fenced store
// accepts only rising tokens (a hold may write again with its own token;
// rejections are counted); and no two holds overlap in real time unless
// the operator deleted the earlier holder's node (a forced revocation, which
// the fencing token covers). CHAOS_DURATION overrides the 12 s run.

// foreignHold is one hold of the workload.
type foreignHold struct {
	id       int
	worker   int
	node     string
	token    int64
	tokenErr error
	acqCall  time.Time
	acqRet   time.Time
	relCall  time.Time
}

// operatorDelete is one delete by the operator that found the node.
type operatorDelete struct {
	path       string
	start, end time.Time
}

// strictStore accepts a write whose token is above every token it has
// accepted, or equal to the last one from the same hold.
type strictStore struct {
	mu       sync.Mutex
	newest   int64
	lastHold int
	accepted int
	rejected int
	equal    int // rejected: the newest token, from another hold
}

func (s *strictStore) write(hold int, token int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case token > s.newest, token == s.newest && hold == s.lastHold:
		s.newest, s.lastHold = token, hold
		s.accepted++
		return true
	case token == s.newest:
		s.equal++
	}
	s.rejected++
	return false
}

func TestChaos_MutexForeignDeletesAndGrants(t *testing.T) {
	const (
		workers = 5
		cred    = "workers:s3cret"
	)
	duration := chaosDuration(12 * time.Second)
	srv := zktest.Shared(t)
	workerClient := func() *framework.Client {
		return startClient(t, builder(t, srv.ConnectString()).Authorization("digest", []byte(cred)))
	}
	// The lock path: the workers' identity may do everything, anyone may
	// read. A top-level path, so that no shared parent gets this ACL.
	path := "/" + unsafeChars.ReplaceAllString(t.Name(), "_")
	admin := workerClient()
	acl := append([]zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: digestID(cred)}}, zk.WorldACL(zk.PermRead)...)
	if _, err := admin.Create().WithACL(acl...).ForPath(t.Context(), path, nil); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("create %s: %v", path, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = admin.Delete().DeletingChildrenIfNeeded().ForPath(ctx, path)
	})
	reader := startClient(t, builder(t, srv.ConnectString()))
	if _, err := reader.Create().WithMode(framework.EphemeralSequential).ForPath(t.Context(), path+"/_c_x-lock-", nil); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("the read-only client creates in %s: %v; want zk.ErrNoAuth", path, err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), duration)
	defer cancel()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		holds   []*foreignHold
		deletes []operatorDelete
		errs    = map[string]int{}
		forged  int
		store   strictStore
	)
	count := func(what string) {
		mu.Lock()
		errs[what]++
		mu.Unlock()
	}
	for w := range workers {
		m := newMutex(t, workerClient(), path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				acqCall := time.Now()
				held, ok, err := m.TryAcquire(ctx, 2*time.Second)
				acqRet := time.Now()
				if err != nil || !ok {
					switch {
					case err == nil:
						count("acquire timeout")
					case ctx.Err() == nil:
						count("acquire: " + errClass(err))
					}
					continue
				}
				h := &foreignHold{worker: w, node: held.Node(), acqCall: acqCall, acqRet: acqRet}
				h.token, h.tokenErr = held.FencingToken()
				mu.Lock()
				h.id = len(holds)
				holds = append(holds, h)
				mu.Unlock()
				if h.tokenErr == nil {
					for range 3 {
						store.write(h.id, h.token)
						time.Sleep(2 * time.Millisecond)
					}
				} else {
					count("token: " + errClass(h.tokenErr))
				}
				h.relCall = time.Now()
				rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				if err := held.Release(rctx); err != nil {
					count("release: " + errClass(err))
				}
				rcancel()
			}
		}()
	}
	// The operator.
	operator := workerClient()
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(chaosSeed(), 0x0be7a70))
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(50+rng.IntN(150)) * time.Millisecond):
			}
			kids, err := operator.GetChildren().ForPath(ctx, path)
			if err != nil || len(kids) == 0 {
				continue
			}
			p := path + "/" + kids[rng.IntN(len(kids))]
			start := time.Now()
			if err := operator.Delete().ForPath(ctx, p); err == nil {
				mu.Lock()
				deletes = append(deletes, operatorDelete{p, start, time.Now()})
				mu.Unlock()
			}
		}
	}()
	// The read-only client.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			kids, err := reader.GetChildren().ForPath(ctx, path)
			if err != nil {
				continue
			}
			for _, k := range kids {
				_, err := reader.Create().WithMode(framework.Ephemeral).ForPath(ctx, lockcore.GrantsDir+"/"+k, nil)
				if err == nil {
					mu.Lock()
					forged++
					mu.Unlock()
				}
			}
			if len(kids) == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	deleted := map[string][]operatorDelete{}
	for _, d := range deletes {
		deleted[d.path] = append(deleted[d.path], d)
	}
	t0 := srv0(holds)
	ms := func(at time.Time) string { return fmt.Sprintf("%.1fms", float64(at.Sub(t0).Microseconds())/1000) }
	describe := func(h *foreignHold) string {
		s := fmt.Sprintf("hold %d (worker %d, token %d, %s, acquired [%s, %s], released at %s)",
			h.id, h.worker, h.token, h.node, ms(h.acqCall), ms(h.acqRet), ms(h.relCall))
		for _, d := range deleted[h.node] {
			s += fmt.Sprintf(", deleted by the operator in [%s, %s]", ms(d.start), ms(d.end))
		}
		return s
	}

	// Unique tokens.
	byToken := map[int64][]*foreignHold{}
	for _, h := range holds {
		if h.tokenErr == nil {
			byToken[h.token] = append(byToken[h.token], h)
		}
	}
	dups := 0
	for _, hs := range byToken {
		if len(hs) > 1 {
			dups++
			if dups <= 5 {
				for _, h := range hs {
					t.Logf("same token: %s", describe(h))
				}
			}
		}
	}
	// Overlaps, unless the operator deleted the earlier holder's node.
	sorted := append([]*foreignHold(nil), holds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].acqRet.Before(sorted[j].acqRet) })
	overlaps, revoked := 0, 0
	for i, a := range sorted {
		for _, b := range sorted[i+1:] {
			if !b.acqRet.Before(a.relCall) {
				break
			}
			if len(deleted[a.node]) > 0 {
				revoked++
				continue
			}
			overlaps++
			if overlaps <= 5 {
				t.Logf("overlap: %s\n         and %s", describe(a), describe(b))
			}
		}
	}
	t.Logf("%v: holds %d, operator deletes %d, forged grants %d, fenced writes accepted %d, rejected %d (%d with the newest token, from another hold), "+
		"overlaps after the operator deleted the earlier holder's node %d, errors %v",
		duration, len(holds), len(deletes), forged, store.accepted, store.rejected, store.equal, revoked, errs)
	if dups > 0 {
		t.Errorf("%d fencing tokens were each returned to more than one hold", dups)
	}
	if overlaps > 0 {
		t.Errorf("%d pairs of holds overlapped with no operator delete of the earlier holder's node", overlaps)
	}
	if len(holds) < 20 {
		t.Errorf("only %d holds in %v: no progress", len(holds), duration)
	}
}

// srv0 is the time the first hold's acquire was called: the origin of the
// times in the failure messages.
func srv0(holds []*foreignHold) time.Time {
	var t0 time.Time
	for _, h := range holds {
		if t0.IsZero() || h.acqCall.Before(t0) {
			t0 = h.acqCall
		}
	}
	return t0
}
