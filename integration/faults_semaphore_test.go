package integration

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// TestFaults_SemaphoreLostHandOffReplyLeavesNoLease: on a one-lease
// semaphore, a waiter's hand-off multi (create its lease node, delete its
// lock node) commits, its reply is lost, and the waiter's ctx ends while
// the waiter cannot reach the server. The lease node it may have made
// lives on its session, which lives on; nobody holds it. Once the waiter's
// client reconnects, that node must go, and another client (Go, then Java
// Curator) must be able to take the lease.
func TestFaults_SemaphoreLostHandOffReplyLeavesNoLease(t *testing.T) {
	faultsNoLeaks(t)
	base := counterPath(t) // deleted before and after the test
	path := base + "/sem"
	obs := newClient(t)
	// The waiter's session outlives the outage; its retries give up fast,
	// so that a cleanup done in the caller's time fails during the outage.
	fast, err := retry.NewNTimes(3, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	wc, p := proxiedClient(t, func(b *framework.Builder) *framework.Builder {
		return b.SessionTimeout(20 * time.Second).ConnectionTimeout(500 * time.Millisecond).RetryPolicy(fast)
	})
	holder := newSem(t, obs, path, 1)
	waiter := newSem(t, wc, path, 1)

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	lease, err := holder.Acquire(ctx)
	if err != nil {
		t.Fatalf("holder Acquire: %v", err)
	}

	// The next multi's reply is lost, and the waiter cannot reconnect.
	p.LoseNextReply(zktest.OpMulti)
	p.Refuse(true)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	acquired := make(chan error, 1)
	go func() {
		l, err := waiter.Acquire(wctx)
		if err == nil {
			err = errors.New("granted a lease at " + l.Path())
		}
		acquired <- err
	}()
	eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path+"/locks")) == 1 },
		"the waiter queues on the internal lock")
	if err := lease.Close(ctx); err != nil {
		t.Fatalf("holder Close: %v", err)
	}
	eventually(t, 10*time.Second, func() bool { return p.LostReplies() == 1 }, "the hand-off multi's reply is lost")
	if kids := children(t, obs, path+"/leases"); len(kids) != 1 {
		t.Fatalf("after the lost reply, leases/ holds %q: want the waiter's lease node (the multi committed)", kids)
	}

	wcancel() // the caller gives up during the outage
	select {
	case err := <-acquired:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("waiter Acquire = %v, want a cancellation", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled waiter's Acquire did not return during the outage")
	}
	p.Refuse(false) // the waiter's client reconnects, on the same session

	eventually(t, 15*time.Second, func() bool {
		return len(children(t, obs, path+"/leases")) == 0 && len(children(t, obs, path+"/locks")) == 0
	}, "the waiter's lease node (and lock node) are deleted after it reconnects")
	if st := wc.State(); !st.IsConnected() {
		t.Fatalf("waiter's client is %v: want it connected, so that its session lives on", st)
	}

	other := newSem(t, newClient(t), path, 1)
	l, ok, err := other.TryAcquire(ctx, 5*time.Second)
	if err != nil || !ok {
		t.Fatalf("another client's TryAcquire = %v, %v: the semaphore is dead", ok, err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	t.Run("Curator", func(t *testing.T) {
		j := startJava(t)
		ok, err := j.Bool(javaCtx(t, 20*time.Second), "sem.acquire", path, "1", "1", strconv.Itoa(5000))
		if err != nil || !ok {
			t.Fatalf("Curator acquire = %v, %v: the semaphore is dead for Java", ok, err)
		}
		if _, err := j.Call(javaCtx(t, 10*time.Second), "sem.returnall", path); err != nil {
			t.Fatalf("Curator returnAll: %v", err)
		}
	})
}

// TestFaults_SemaphoreSessionLossWhileQueued queues client A on a
// one-lease semaphore held by C, cuts A off until its client declares the
// session lost and opens a new one (the server still keeps the old session
// and A's lock node for a while), and lets C return the lease either while
// A is cut off or once A is back. A's lease must stand on a node of its
// current session, and once the old session ends on the server, a third
// client D must not get a lease while A's is still trusted (Lost() open).
func TestFaults_SemaphoreSessionLossWhileQueued(t *testing.T) {
	for _, afterReconnect := range []bool{false, true} {
		name := "returned_while_cut_off"
		if afterReconnect {
			name = "returned_after_reconnect"
		}
		t.Run(name, func(t *testing.T) { semSessionLossWhileQueued(t, afterReconnect) })
	}
}

func semSessionLossWhileQueued(t *testing.T, afterReconnect bool) {
	faultsNoLeaks(t)
	path := counterPath(t) + "/sem"
	var log stateLog
	a, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b.Listener(log.listen) })
	c, d, obs := newClient(t), newClient(t), newClient(t)
	sc, sa, sd := newSem(t, c, path, 1), newSem(t, a, path, 1), newSem(t, d, path, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	held, err := sc.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oldConn, oldSession := a.ZooKeeper(), a.SessionID()
	type grant struct {
		lease *semaphorev2.Lease
		err   error
	}
	got := make(chan grant, 1)
	go func() {
		l, err := sa.Acquire(ctx)
		got <- grant{l, err}
	}()
	eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path+"/locks")) == 1 },
		"A queues on the internal lock")
	// A holds the internal lock and reads leases/ to wait for room; a
	// release before that read is fine too (A then finds room at once).
	time.Sleep(200 * time.Millisecond)

	proxy.Pause()
	if !afterReconnect {
		if err := held.Close(ctx); err != nil {
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
		if err := held.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}

	var g grant
	select {
	case g = <-got:
	case <-time.After(6 * testSessionTimeout):
		t.Fatal("A's Acquire did not return")
	}
	if g.err != nil {
		t.Fatalf("A's Acquire: %v", g.err)
	}
	stat, err := obs.CheckExists().ForPath(ctx, g.lease.Path())
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case stat == nil:
		t.Errorf("A holds a lease with node %s, which is gone", g.lease.Path())
	case stat.EphemeralOwner != a.SessionID():
		t.Errorf("A holds a lease with node %s of session 0x%x; A's session is 0x%x (the old one was 0x%x)",
			g.lease.Path(), stat.EphemeralOwner, a.SessionID(), oldSession)
	}

	// The server ends the old session (as its own timeout would), and D
	// tries for a lease while A believes it holds one.
	if err := zktest.ExpireSession(ctx, zktest.Shared(t).ConnectString(), oldConn); err != nil &&
		!errors.Is(err, zk.ErrSessionExpired) {
		t.Fatalf("expire A's old session: %v", err)
	}
	if l, ok, err := sd.TryAcquire(ctx, 0); err != nil {
		t.Fatal(err)
	} else if ok {
		if !isClosed(g.lease.Lost()) {
			t.Errorf("two leases of one: D got %s while A's lease %s has Lost() open", l.Path(), g.lease.Path())
		}
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.lease.Close(ctx); err != nil {
		t.Fatalf("A's Close: %v", err)
	}
	l, ok, err := sd.TryAcquire(ctx, 10*time.Second)
	if err != nil || !ok {
		t.Fatalf("D's TryAcquire after A returned its lease = %v, %v", ok, err)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{path + "/leases", path + "/locks"} {
		if kids := children(t, obs, dir); len(kids) != 0 {
			t.Errorf("nodes left under %s after every lease was returned: %q", dir, kids)
		}
	}
}
