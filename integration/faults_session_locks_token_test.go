package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/multilock"
	"github.com/go-curator/curator/recipes/mutex"
)

// slLazyHold queues a mutex of client a behind a holder on another client
// and lets that holder go once a waits on its watch, so that a's hold is
// handed over by the delete and reads its fencing token on first use.
func slLazyHold(t *testing.T, a *framework.Client, base string) (*slHolder, slGrant) {
	t.Helper()
	c := newClient(t)
	lc, la := newMutex(t, c, base), newMutex(t, a, base)
	hc, err := lc.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ha := slHold(t, multilock.Of(la))
	slAwaitWatch(t, a, hc.Node(), "A waits behind C")
	if err := hc.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	g := ha.await(t, 10*time.Second)
	if g.err != nil {
		t.Fatalf("A's Acquire: %v", g.err)
	}
	return ha, g
}

// TestFaults_SessionLocks_FencingTokenReadIsRetried checks that a failed
// lazy token read reports its cause, not ErrNotOwner, and is not kept: the
// next call, once the connection is back on the same session, returns the
// token.
func TestFaults_SessionLocks_FencingTokenReadIsRetried(t *testing.T) {
	faultsNoLeaks(t)
	base := testPath(t)
	// A long session outlives the cut; no retry makes the read fail once
	// the connection timeout passes.
	a, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder {
		return b.SessionTimeout(30 * time.Second).RetryPolicy(fwNoRetry{})
	})
	obs := newClient(t)
	ha, g := slLazyHold(t, a, base)
	session := a.SessionID()

	proxy.Refuse(true)
	proxy.Reset()
	_, err := g.hold.FencingToken() // from this goroutine, not the holder's
	switch {
	case err == nil:
		t.Fatal("FencingToken with the connection cut returned no error")
	case errors.Is(err, mutex.ErrNotOwner):
		t.Errorf("FencingToken with the connection cut = %v; want the read's error, not ErrNotOwner", err)
	case !framework.IsRetryable(err) && !errors.Is(err, context.DeadlineExceeded):
		// The cause is a connection error (zk.ErrConnectionClosed, a raw
		// socket error, framework.ErrConnectionTimeout), matched as is.
		t.Errorf("FencingToken with the connection cut = %v; want an error matching its cause", err)
	}

	proxy.Refuse(false)
	if err := a.BlockUntilConnected(t.Context()); err != nil {
		t.Fatal(err)
	}
	if a.SessionID() != session {
		t.Fatalf("the session changed across the cut (0x%x to 0x%x); the test needs it to survive", session, a.SessionID())
	}
	_, stat, err := obs.GetChildren().ForPathStat(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := g.hold.FencingToken()
	if err != nil || tok != stat.Pzxid {
		t.Fatalf("FencingToken after the connection came back = %d, %v; want %d (the lock path's pzxid)", tok, err, stat.Pzxid)
	}
	if err := ha.releaseNow(t); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, obs, base); len(kids) != 0 {
		t.Fatalf("nodes left after the release: %v", kids)
	}
}

// TestFaults_SessionLocks_FencingTokenRefusedAfterSessionLoss checks that
// the lazy token read of a hold whose session the client has declared lost
// fails with ErrSessionLost, even though the server still keeps that
// session and lists the hold's node.
func TestFaults_SessionLocks_FencingTokenRefusedAfterSessionLoss(t *testing.T) {
	faultsNoLeaks(t)
	base := testPath(t)
	var log stateLog
	a, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b.Listener(log.listen) })
	obs := newClient(t)
	ha, g := slLazyHold(t, a, base)
	oldSession := a.SessionID()

	proxy.Pause()
	eventually(t, 3*testSessionTimeout, func() bool { return log.count(framework.Lost) > 0 },
		"A's client declares its session lost")
	proxy.Resume()
	eventually(t, 3*testSessionTimeout, func() bool {
		return a.State().IsConnected() && a.SessionID() != oldSession
	}, "A's client reconnects with a new session")
	if !isClosed(g.lost) {
		t.Error("the hold's Lost() is open after its session was lost")
	}
	tok, err := g.hold.FencingToken()
	if !errors.Is(err, mutex.ErrSessionLost) {
		t.Errorf("FencingToken after the session was lost = %d, %v; want ErrSessionLost", tok, err)
	}
	if err := ha.releaseNow(t); !releasedAfterLoss(err) {
		t.Fatal(err)
	}
	if kids := children(t, obs, base); len(kids) != 0 {
		t.Fatalf("nodes left after the release: %v", kids)
	}
}
