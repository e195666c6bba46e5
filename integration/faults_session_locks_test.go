package integration

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/multilock"
	"github.com/go-curator/curator/recipes/rwlock"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// The session-lock tests check the fault model's first rule for the locks:
// the session is the owner. After the client declares its session lost
// (here its simulated expiry, while the server still keeps the session
// alive until its own timeout) and opens a new one, a waiter that finds
// its old node in the children list must not take that as holding the
// lock: the node dies with the old session, and then another client gets
// the lock while this one believes it holds it.

// slLock is one side of a lock the tests queue on: a mutex.Mutex or a
// side of an rwlock.Lock, as a multilock.Locker, whose holds are
// multilock.Members.
type slLock = multilock.Locker

// slKind makes a lock of one kind on path through c.
type slKind struct {
	name string
	make func(t *testing.T, c *framework.Client, path string) slLock
}

var slKinds = []slKind{
	{"mutex", func(t *testing.T, c *framework.Client, path string) slLock { return multilock.Of(newMutex(t, c, path)) }},
	{"rwlock_write", func(t *testing.T, c *framework.Client, path string) slLock {
		return multilock.Of(newRWLock(t, c, path).WriteLock())
	}},
}

// slGrant is what a holder goroutine saw when its Acquire returned.
type slGrant struct {
	hold multilock.Member
	node string
	lost <-chan struct{}
	err  error
}

// slHolder acquires a lock on its own goroutine, runs what it is given
// there while it holds (a downgrade is granted to the goroutine that holds
// the write lock), and releases it when told to.
type slHolder struct {
	got     chan slGrant
	run     chan func()
	release chan struct{}
	done    chan error
}

// slHold starts a goroutine that acquires l. The cleanup releases it (if
// it holds) and waits for the goroutine.
func slHold(t *testing.T, l slLock) *slHolder {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	h := &slHolder{got: make(chan slGrant, 1), run: make(chan func()), release: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		held, err := l.Acquire(ctx)
		if err != nil {
			h.got <- slGrant{err: err}
			h.done <- nil
			return
		}
		h.got <- slGrant{hold: held, node: held.Node(), lost: held.Lost()}
		for held := true; held; {
			select {
			case f := <-h.run:
				f()
			case <-h.release:
				held = false
			}
		}
		rctx, rcancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer rcancel()
		h.done <- held.Release(rctx)
	}()
	t.Cleanup(func() {
		cancel()
		h.releaseOnce()
		<-h.done
	})
	return h
}

func (h *slHolder) releaseOnce() {
	select {
	case <-h.release:
	default:
		close(h.release)
	}
}

// await returns the grant, failing the test if none comes within d.
func (h *slHolder) await(t *testing.T, d time.Duration) slGrant {
	t.Helper()
	select {
	case g := <-h.got:
		return g
	case <-time.After(d):
		t.Fatalf("no answer from Acquire within %v", d)
		return slGrant{}
	}
}

// on runs f on the holder's goroutine, while it holds, and waits for it.
func (h *slHolder) on(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	select {
	case h.run <- func() { defer close(done); f() }:
	case <-time.After(30 * time.Second):
		t.Fatal("the holder goroutine does not hold")
	}
	<-done
}

// releaseNow releases the hold and returns Release's error.
func (h *slHolder) releaseNow(t *testing.T) error {
	t.Helper()
	h.releaseOnce()
	select {
	case err := <-h.done:
		h.done <- nil // for the cleanup
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Release did not return")
		return nil
	}
}

// slWatches returns, by session ID, the paths the server at addr holds
// watches on for that session (the wchc four-letter word).
func slWatches(t *testing.T, addr string) map[int64][]string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(conn, "wchc"); err != nil {
		t.Fatal(err)
	}
	watches := map[int64][]string{}
	var session int64
	s := bufio.NewScanner(conn)
	for s.Scan() {
		line := s.Text()
		if p, ok := strings.CutPrefix(line, "\t"); ok {
			watches[session] = append(watches[session], p)
			continue
		}
		if id, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(line), "0x"), 16, 64); err == nil {
			session = id
		}
	}
	return watches
}

// slAwaitWatch waits until the client's current session watches path on
// the shared server: the waiter has set its watch and waits on it.
func slAwaitWatch(t *testing.T, c *framework.Client, path, what string) {
	t.Helper()
	addr := zktest.Shared(t).ConnectString()
	eventually(t, 10*time.Second, func() bool {
		for _, p := range slWatches(t, addr)[c.SessionID()] {
			if p == path {
				return true
			}
		}
		return false
	}, what)
}

// TestFaults_SessionLocks_OldNodeNeverGrants queues client A behind a
// holder C, cuts A off past its session timeout so that A's client declares
// the session lost and opens a new one while the server keeps the old
// session (and A's node) alive, and lets C release, either while A is cut
// off (A's first read on the new session finds its old node first) or
// after A waits again on the new session (the hand-off by C's delete). A
// may be granted the lock only with a node of its current session; once the
// old session ends on the server, a third client D must not get the lock
// while A's hold is still trusted (Lost() open).
func TestFaults_SessionLocks_OldNodeNeverGrants(t *testing.T) {
	for _, kind := range slKinds {
		for _, afterReconnect := range []bool{false, true} {
			name := kind.name + "/released_while_cut_off"
			if afterReconnect {
				name = kind.name + "/released_after_reconnect"
			}
			t.Run(name, func(t *testing.T) { slOldNodeNeverGrants(t, kind, afterReconnect) })
		}
	}
}

func slOldNodeNeverGrants(t *testing.T, kind slKind, afterReconnect bool) {
	faultsNoLeaks(t)
	base := testPath(t)
	var log stateLog
	a, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b.Listener(log.listen) })
	c, d, obs := newClient(t), newClient(t), newClient(t)
	lc, la, ld := kind.make(t, c, base), kind.make(t, a, base), kind.make(t, d, base)
	ctx := t.Context()

	hc, err := lc.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cNode := hc.Node()
	oldConn, oldSession := a.ZooKeeper(), a.SessionID()
	ha := slHold(t, la)
	slAwaitWatch(t, a, cNode, "A waits behind C")

	proxy.Pause()
	if !afterReconnect {
		if err := hc.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 3*testSessionTimeout, func() bool { return log.count(framework.Lost) > 0 },
		"A's client declares its session lost")
	proxy.Resume()
	if afterReconnect {
		eventually(t, 3*testSessionTimeout, func() bool {
			return a.State().IsConnected() && a.SessionID() != oldSession
		}, "A's client reconnects with a new session")
		slAwaitWatch(t, a, cNode, "A waits behind C on its new session")
		if err := hc.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}

	g := ha.await(t, 3*testSessionTimeout)
	if g.err != nil {
		t.Fatalf("A's Acquire: %v", g.err)
	}
	stat, err := obs.CheckExists().ForPath(ctx, g.node)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case stat == nil:
		t.Errorf("A holds the lock with node %s, which is gone", g.node)
	case stat.EphemeralOwner != a.SessionID():
		t.Errorf("A holds the lock with node %s of session 0x%x; A's session is 0x%x (the old one was 0x%x)",
			g.node, stat.EphemeralOwner, a.SessionID(), oldSession)
	}

	// The server ends the old session (as its own timeout would), and D
	// tries the lock while A believes it holds it.
	if err := zktest.ExpireSession(ctx, zktest.Shared(t).ConnectString(), oldConn); err != nil &&
		!errors.Is(err, zk.ErrSessionExpired) {
		t.Fatalf("expire A's old session: %v", err)
	}
	hd, ok, err := ld.TryAcquire(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		if !isClosed(g.lost) {
			t.Errorf("two holders: D acquired the lock while A's hold (node %s) has Lost() open", g.node)
		}
		if err := hd.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}

	if err := ha.releaseNow(t); err != nil {
		t.Fatalf("A's Release: %v", err)
	}
	hd, ok, err = ld.TryAcquire(ctx, 10*time.Second)
	if !ok || err != nil {
		t.Fatalf("D's TryAcquire after A released = %v, %v", ok, err)
	}
	if err := hd.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, obs, base); len(kids) != 0 {
		t.Fatalf("nodes left after every hold was released: %v", kids)
	}
}

// TestFaults_SessionLocks_DowngradeRefusedAfterSessionLoss: a write holder
// whose client declared its session lost (the server still lists its write
// node) asks for the read lock. The downgrade (CURATOR-621) stands beside
// the write node, so it must be refused with ErrWriteLost and leave no read
// node, rather than granted on the strength of a node the lost session
// still has.
func TestFaults_SessionLocks_DowngradeRefusedAfterSessionLoss(t *testing.T) {
	faultsNoLeaks(t)
	base := testPath(t)
	var log stateLog
	a, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b.Listener(log.listen) })
	obs := newClient(t)
	rw := newRWLock(t, a, base)
	ha := slHold(t, multilock.Of(rw.WriteLock()))
	g := ha.await(t, 10*time.Second)
	if g.err != nil {
		t.Fatal(g.err)
	}
	oldSession := a.SessionID()

	proxy.Pause()
	eventually(t, 3*testSessionTimeout, func() bool { return log.count(framework.Lost) > 0 },
		"A's client declares its session lost")
	proxy.Resume()
	eventually(t, 3*testSessionTimeout, func() bool {
		return a.State().IsConnected() && a.SessionID() != oldSession
	}, "A's client reconnects with a new session")
	if stat, err := obs.CheckExists().ForPath(t.Context(), g.node); err != nil || stat == nil {
		t.Logf("the old write node is already gone (%v, %v): the server ended the old session early", stat, err)
	}

	var err error
	var readNode string
	ha.on(t, func() { // the downgrade is the write holder's goroutine's
		var r *rwlock.Hold
		r, err = rw.ReadLock().Acquire(t.Context())
		readNode = r.Node()
		if err == nil {
			_ = r.Release(t.Context())
		}
	})
	if !errors.Is(err, rwlock.ErrWriteLost) {
		t.Errorf("read Acquire by the write holder after its session was lost = %v (read node %q); want ErrWriteLost", err, readNode)
	}
	for _, k := range children(t, obs, base) {
		if strings.Contains(k, "__READ__") {
			t.Errorf("read node %s left after the refused downgrade", k)
		}
	}
	if err := ha.releaseNow(t); !releasedAfterLoss(err) {
		t.Fatalf("write Release: %v", err)
	}
	if kids := children(t, obs, base); len(kids) != 0 {
		t.Fatalf("nodes left after the release: %v", kids)
	}
}
