package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/zktest"
)

// grantsDir is where exclusive locks keep their grants (lockcore.GrantsDir).
const grantsDir = "/go-curator-grants"

// lockSeq returns the sequence number of a lock node's name.
func lockSeq(name string) int64 {
	n, err := strconv.ParseInt(name[strings.LastIndex(name, "lock-")+len("lock-"):], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// lowest returns the lock node first in queue order under path, or "".
func lowest(t testing.TB, c *framework.Client, path string) string {
	t.Helper()
	kids := children(t, c, path)
	sort.Slice(kids, func(i, j int) bool { return lockSeq(kids[i]) < lockSeq(kids[j]) })
	if len(kids) == 0 {
		return ""
	}
	return kids[0]
}

// grantsOf returns the grants whose owner is one of sessions.
func grantsOf(t testing.TB, c *framework.Client, sessions ...int64) []string {
	t.Helper()
	var out []string
	for _, g := range children(t, c, grantsDir) {
		st, err := c.CheckExists().ForPath(t.Context(), grantsDir+"/"+g)
		if err != nil || st == nil {
			continue
		}
		for _, s := range sessions {
			if st.EphemeralOwner == s {
				out = append(out, g)
			}
		}
	}
	return out
}

// envInt returns the integer in the environment variable name, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// TestGrant_HandOffsReadNoChildren queues five waiters of one client behind
// another client's holder, in a short queue: each waiter, woken by its
// predecessor's grant, holds without reading the children again (before
// the grant, every waiter but the first read them at each hand-off), and
// the lock goes down the queue in order.
func TestGrant_HandOffsReadNoChildren(t *testing.T) {
	const n = 5
	path := testPath(t)
	holder := newClient(t)
	c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b })
	held, err := newMutex(t, holder, path).Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]*mutex.Mutex, n)
	for i := range ms {
		ms[i] = newMutex(t, c, path)
	}
	var holders atomic.Int32
	order, wg := queueWaiters(t, c, path, ms, &holders)
	// Each waiter reads once after its create; wait for the last one's.
	eventually(t, 10*time.Second, func() bool {
		return proxy.Requests(zktest.OpGetChildren, zktest.OpGetChildren2) >= n
	}, "every waiter read the queue once")
	// Each waiter watches its own node, then its predecessor's.
	eventually(t, 10*time.Second, func() bool { return proxy.Requests(zktest.OpGetData) >= 2*n },
		"every waiter watches its predecessor")
	reads := proxy.Requests(zktest.OpGetChildren, zktest.OpGetChildren2)
	if err := held.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantFIFO(t, order, wg, n)
	if got := proxy.Requests(zktest.OpGetChildren, zktest.OpGetChildren2) - reads; got != 0 {
		t.Fatalf("%d children reads during %d hand-offs; want none", got, n)
	}
	if kids := children(t, holder, path); len(kids) != 0 {
		t.Fatalf("nodes left: %q", kids)
	}
}

// TestGrant_PredecessorGivingUpGrantsNothing: H holds, P waits behind H, W
// behind P. P gives up: W must read, find H ahead, and wait for H's
// release; a contender that took P's leaving (or anything P's give-up
// wrote) for a grant would hold beside H.
func TestGrant_PredecessorGivingUpGrantsNothing(t *testing.T) {
	path := testPath(t)
	ch, cp := newClient(t), newClient(t)
	cw, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b })
	ctx := t.Context()
	h, err := newMutex(t, ch, path).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pctx, giveUp := context.WithCancel(ctx)
	pDone := make(chan error, 1)
	go func() {
		_, err := newMutex(t, cp, path).Acquire(pctx)
		pDone <- err
	}()
	eventually(t, 10*time.Second, func() bool { return len(children(t, ch, path)) == 2 }, "P queued")
	var wHeld atomic.Bool
	wDone := make(chan *mutex.Hold, 1)
	go func() {
		h, err := newMutex(t, cw, path).Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		wHeld.Store(true)
		wDone <- h
	}()
	eventually(t, 10*time.Second, func() bool {
		// its own node's data watch, P's, and P's grant's exists watch
		return proxy.Requests(zktest.OpGetData) == 2 && proxy.Requests(zktest.OpExists) == 1
	}, "W watches P and P's grant")
	reads := proxy.Requests(zktest.OpGetChildren, zktest.OpGetChildren2)
	// W gets what P's give-up makes it see in one burst, as a loaded
	// client would.
	proxy.HoldReplies()
	giveUp()
	if err := <-pDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("P's acquire = %v, want context.Canceled", err)
	}
	proxy.ReleaseReplies()
	// W reads again, and watches H's grant.
	eventually(t, 10*time.Second, func() bool {
		return proxy.Requests(zktest.OpGetChildren, zktest.OpGetChildren2) > reads &&
			proxy.Requests(zktest.OpGetData) >= 4
	}, "W reads the queue again after P left, and watches H")
	if wHeld.Load() {
		t.Fatal("W holds the lock while H holds it")
	}
	if got, want := lowest(t, ch, path), h.Node()[len(path)+1:]; got != want {
		t.Fatalf("lowest node %q, want H's %q", got, want)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	w := <-wDone
	if w == nil {
		t.FailNow()
	}
	if err := w.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, ch, path); len(kids) != 0 {
		t.Fatalf("nodes left: %q", kids)
	}
}

// TestGrant_ChurnExcludes runs holders and waiters that give up after 0-3
// ms on long-lived clients, and contenders on short-lived clients whose
// sessions close while they wait or hold. No two hold at once; each
// holder's node is the lowest on the server while it holds; at the end no
// lock node is left, each open client keeps at most one grant, and closed
// sessions keep none.
func TestGrant_ChurnExcludes(t *testing.T) {
	const (
		clients = 3
		workers = 3
		rounds  = 60
		churns  = 30
	)
	path := testPath(t)
	obs := newClient(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	var w witness
	var id atomic.Int32
	var holds atomic.Int32
	hold := func(m *mutex.Mutex, h *mutex.Hold) {
		me := id.Add(1)
		w.enter(me)
		holds.Add(1)
		if got, want := lowest(t, obs, path), h.Node()[len(path)+1:]; got != want {
			t.Errorf("holder's node %s is not the lowest (%s)", want, got)
		}
		w.leave(me)
	}
	cs := make([]*framework.Client, clients)
	var sessions []int64
	for i := range cs {
		cs[i] = newClient(t)
		sessions = append(sessions, cs[i].SessionID())
	}
	var wg sync.WaitGroup
	for i := range clients * workers {
		m := newMutex(t, cs[i%clients], path)
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				actx, acancel := ctx, context.CancelFunc(func() {})
				if rng.IntN(2) == 0 {
					actx, acancel = context.WithTimeout(ctx, time.Duration(rng.IntN(3000))*time.Microsecond)
				}
				h, err := m.Acquire(actx)
				acancel()
				if err != nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("acquire: %v", err)
					}
					continue
				}
				hold(m, h)
				if err := h.Release(ctx); err != nil {
					t.Errorf("release: %v", err)
				}
			}
		}()
	}
	// Short-lived clients: each closes its session while its contender
	// waits (after 0-3 ms), or right after it held (the node goes with the
	// session, without a grant).
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(99, 1))
		for k := range churns {
			c := newClient(t)
			m := newMutex(t, c, path)
			done := make(chan struct{})
			go func() {
				defer close(done)
				h, err := m.Acquire(ctx)
				if err == nil && k%2 == 1 {
					hold(m, h)
					c.Close()
				}
			}()
			if k%2 == 0 {
				time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
				c.Close()
			}
			<-done
			c.Close()
		}
	}()
	wg.Wait()
	w.check(t)
	if holds.Load() == 0 {
		t.Fatal("nobody held the lock")
	}
	if kids := children(t, obs, path); len(kids) != 0 {
		t.Errorf("lock nodes left: %q", kids)
	}
	for i, c := range cs {
		// At most one grant, plus one per release in flight (lockcore doc,
		// "Cleanup"): a waiter of the same client that holds on a grant's
		// event, and releases before the granting release has handled its
		// reply, leaves its own grant beside that one until the client's next
		// release.
		if g := grantsOf(t, obs, sessions[i]); len(g) > 2 {
			t.Errorf("client %d keeps %d grants: %q", i, len(g), g)
		}
		c.Close()
	}
	eventually(t, 10*time.Second, func() bool { return len(grantsOf(t, obs, sessions...)) == 0 },
		"closed sessions keep no grant")
	t.Logf("%d holds", holds.Load())
}

// TestGrant_LostReleaseReplyIsOneRelease loses the reply to a holder's
// release multi (the server applied it): the release reports success, the
// node is gone, the waiter holds, and the grant left behind goes at the
// client's next release.
func TestGrant_LostReleaseReplyIsOneRelease(t *testing.T) {
	path := testPath(t)
	c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b })
	other := newClient(t)
	ctx := t.Context()
	// A hold whose read listed nobody after it releases without a grant:
	// make h hold by its predecessor's release instead.
	h := handedOver(t, other, c, path)
	_, name := framework.SplitPath(h.Node())
	wDone := make(chan *mutex.Hold, 1)
	go func() {
		w, err := newMutex(t, other, path).Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		wDone <- w
	}()
	eventually(t, 10*time.Second, func() bool { return len(children(t, other, path)) == 2 }, "the waiter queued")
	before := proxy.LostReplies()
	proxy.LoseNextReply(zktest.OpMulti)
	if err := h.Release(ctx); err != nil {
		t.Fatalf("release whose reply was lost = %v, want nil", err)
	}
	if got := proxy.LostReplies() - before; got != 1 {
		t.Fatalf("the proxy lost %d replies, want 1: the test did not test", got)
	}
	w := <-wDone
	if w == nil {
		t.FailNow()
	}
	if kids := children(t, other, path); len(kids) != 1 || kids[0] != w.Node()[len(path)+1:] {
		t.Fatalf("nodes %q, want only the waiter's", kids)
	}
	if err := w.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// The next release of c deletes the grant its first one left: an
	// uncontended one, a multi without a grant of its own. Its reply is
	// lost too: the release still reports success.
	h2, err := newMutex(t, c, path+"-2").Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before = proxy.LostReplies()
	proxy.LoseNextReply(zktest.OpMulti)
	if err := h2.Release(ctx); err != nil {
		t.Fatalf("plain release whose reply was lost = %v, want nil", err)
	}
	if got := proxy.LostReplies() - before; got != 1 {
		t.Fatalf("the proxy lost %d replies of the plain release, want 1: the test did not test", got)
	}
	if st, err := other.CheckExists().ForPath(ctx, grantsDir+"/"+name); err != nil || st != nil {
		t.Fatalf("the lost release's grant %s: stat %v, err %v; want gone", name, st, err)
	}
	// The grant the lost multi deleted is still on c's list: the next
	// release finds it gone, drops it, and goes on.
	h3, err := newMutex(t, c, path+"-3").Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := h3.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if g := grantsOf(t, other, c.SessionID()); len(g) != 0 {
		t.Fatalf("grants left by c: %q", g)
	}
	for _, p := range []string{path, path + "-2", path + "-3"} {
		if kids := children(t, other, p); len(kids) != 0 {
			t.Fatalf("nodes left under %s: %q", p, kids)
		}
	}
}

// TestGrant_NoHoldOnASuspendedSignal cuts a waiter's connection and keeps
// it out while its predecessor releases by grant; when it comes back on
// the same session, the grant's event (sent again by the server) arrives
// after the loss signal it waited with closed. The waiter must not hold on
// that signal: it reads again and holds with a live one, as the lowest.
func TestGrant_NoHoldOnASuspendedSignal(t *testing.T) {
	path := testPath(t)
	holder := newClient(t)
	c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b })
	var states stateLog
	c.AddListener(states.listen)
	ctx := t.Context()
	h, err := newMutex(t, holder, path).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wDone := make(chan *mutex.Hold, 1)
	go func() {
		w, err := newMutex(t, c, path).Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		wDone <- w
	}()
	eventually(t, 10*time.Second, func() bool { return proxy.Requests(zktest.OpGetData) == 2 },
		"the waiter watches the holder") // and its own node
	proxy.Refuse(true)
	proxy.Reset()
	eventually(t, 10*time.Second, func() bool { return states.count(framework.Suspended) == 1 }, "suspended")
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	proxy.Refuse(false)
	w := <-wDone
	if w == nil {
		t.FailNow()
	}
	if c.State() == framework.Reconnected || c.State() == framework.Connected {
		select {
		case <-w.Lost():
			t.Fatal("the hold's loss signal is closed while connected")
		default:
		}
	}
	if got, want := lowest(t, holder, path), w.Node()[len(path)+1:]; got != want {
		t.Fatalf("lowest %q, want the waiter's %q", got, want)
	}
	if err := w.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// wchc returns the paths the server watches for session id.
func wchc(t testing.TB, id int64) []string {
	t.Helper()
	out, err := zktest.Shared(t).Servers()[0].FourLetter("wchc")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	in := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "0x"):
			s, err := strconv.ParseUint(strings.TrimSpace(line[2:]), 16, 64)
			in = err == nil && int64(s) == id
		case in && strings.TrimSpace(line) != "":
			paths = append(paths, strings.TrimSpace(line))
		}
	}
	return paths
}

// TestGrant_CancelledAcquiresLeaveNoWatches: a client's contenders queue
// behind a new predecessor each time, and both give up. Each contender
// watched its predecessor's grant, which is never made; the server must
// not keep those watches (go-zookeeper cannot remove them), so the watch
// count of the client's session stays flat whatever the number of
// cancelled acquires. GRANT_CANCELLED sets the number (default 300).
func TestGrant_CancelledAcquiresLeaveNoWatches(t *testing.T) {
	n := envInt("GRANT_CANCELLED", 300)
	path := testPath(t)
	a := newClient(t)
	b, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b })
	ctx := t.Context()
	h, err := newMutex(t, a, path).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ma, mb := newMutex(t, a, path), newMutex(t, b, path)
	for range n {
		// A contender of a queues behind the holder, one of b behind it;
		// b's gives up once it watches a's grant, then a's gives up.
		actx, acancel := context.WithCancel(ctx)
		aDone := make(chan struct{})
		go func() {
			defer close(aDone)
			if _, err := ma.Acquire(actx); !errors.Is(err, context.Canceled) {
				t.Errorf("a's acquire = %v", err)
			}
		}()
		eventually(t, 10*time.Second, func() bool { return len(children(t, a, path)) == 2 }, "a's contender queued")
		watches := proxy.Requests(zktest.OpGetData)
		bctx, bcancel := context.WithCancel(ctx)
		bDone := make(chan struct{})
		go func() {
			defer close(bDone)
			if _, err := mb.Acquire(bctx); !errors.Is(err, context.Canceled) {
				t.Errorf("b's acquire = %v", err)
			}
		}()
		eventually(t, 10*time.Second, func() bool { return proxy.Requests(zktest.OpGetData) > watches },
			"b's contender watches a's")
		bcancel()
		<-bDone
		acancel()
		<-aDone
	}
	watched := wchc(t, b.SessionID())
	t.Logf("%d cancelled acquires: the server keeps %d watches for b's session", n, len(watched))
	if len(watched) > 4 {
		t.Fatalf("%d cancelled acquires left %d watches on b's session, such as %q", n, len(watched), watched[:5])
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, a, path); len(kids) != 0 {
		t.Fatalf("nodes left: %q", kids)
	}
}

// TestGrant_SingleUsePathsKeepOneGrant locks many paths once each from one
// client (sequentially, then 8 at a time): the client keeps at most one
// grant per release in flight, plus one, not one per path. GRANT_PATHS
// sets the number of paths (default 400).
func TestGrant_SingleUsePathsKeepOneGrant(t *testing.T) {
	n := envInt("GRANT_PATHS", 400)
	base := testPath(t)
	c, obs := newClient(t), newClient(t)
	ctx := t.Context()
	// Each path is handed over to c, so c's release leaves a grant (a
	// hold whose read listed nobody after it leaves none).
	lockOnce := func(p string) {
		h := handedOver(t, obs, c, p)
		if h == nil {
			return
		}
		if err := h.Release(ctx); err != nil {
			t.Error(err)
		}
	}
	for i := range n / 2 {
		lockOnce(fmt.Sprintf("%s/s%d", base, i))
	}
	if g := grantsOf(t, obs, c.SessionID()); len(g) > 1 {
		t.Fatalf("%d sequential single-use paths left %d grants", n/2, len(g))
	}
	const par = 8
	var wg sync.WaitGroup
	next := make(chan int)
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				lockOnce(fmt.Sprintf("%s/p%d", base, i))
			}
		}()
	}
	for i := range n - n/2 {
		next <- i
	}
	close(next)
	wg.Wait()
	g := grantsOf(t, obs, c.SessionID())
	t.Logf("%d single-use paths: the client keeps %d grants", n, len(g))
	if len(g) == 0 {
		t.Fatalf("no grant left at all: the releases did not grant, and the test did not test")
	}
	if len(g) > par+1 {
		t.Fatalf("%d single-use paths (%d at a time) left %d grants", n, par, len(g))
	}
}

// handedOver returns a hold of c on path that c got by its predecessor's
// release rather than by a read: from holds path while c queues, then
// releases. It reports errors with t.Error and returns nil then.
func handedOver(t *testing.T, from, c *framework.Client, path string) *mutex.Hold {
	t.Helper()
	ctx := t.Context()
	first, err := newMutex(t, from, path).Acquire(ctx)
	if err != nil {
		t.Error(err)
		return nil
	}
	type result struct {
		h   *mutex.Hold
		err error
	}
	done := make(chan result, 1)
	go func() {
		h, err := newMutex(t, c, path).Acquire(ctx)
		done <- result{h, err}
	}()
	// c waits once it watches first's node: its read listed first, so
	// it holds by first's release, not by a read of its own.
	deadline := time.Now().Add(10 * time.Second)
	for !watching(t, c.SessionID(), first.Node()) {
		if time.Now().After(deadline) {
			t.Errorf("%s: the contender does not watch %s after 10 s", path, first.Node())
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := first.Release(ctx); err != nil {
		t.Error(err)
	}
	r := <-done
	if r.err != nil {
		t.Error(r.err)
	}
	return r.h
}

// TestGrant_UncontendedReleaseIsOneDelete: a hold whose read listed no node
// after its own cannot have a waiter that needs its grant (every later
// contender reads it as the only node ahead, and holds on its delete), so
// its release is the plain delete Curator sends: no multi, no grant left.
// A contender that queues behind it afterwards still holds on that delete.
func TestGrant_UncontendedReleaseIsOneDelete(t *testing.T) {
	path := testPath(t)
	c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b })
	obs := newClient(t)
	ctx := t.Context()
	for range 3 {
		h, err := newMutex(t, c, path).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := proxy.Requests(zktest.OpMulti); n != 0 {
		t.Fatalf("%d multis for 3 uncontended releases, want plain deletes", n)
	}
	if g := grantsOf(t, obs, c.SessionID()); len(g) != 0 {
		t.Fatalf("uncontended releases left grants %q", g)
	}
	// Alone at its read, then a waiter queues: the waiter holds once the
	// plain delete comes, and nothing is left.
	h, err := newMutex(t, c, path).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		w, err := newMutex(t, obs, path).Acquire(ctx)
		if err == nil {
			err = w.Release(ctx)
		}
		got <- err
	}()
	eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path)) == 2 }, "the waiter queued")
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if kids := children(t, obs, path); len(kids) != 0 {
		t.Fatalf("nodes left: %q", kids)
	}
}

// watching reports whether session id watches a server path ending in
// path.
func watching(t *testing.T, id int64, path string) bool {
	for _, p := range wchc(t, id) {
		if strings.HasSuffix(p, path) {
			return true
		}
	}
	return false
}
