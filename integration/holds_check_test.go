package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/zktest"
)

// Issue 30, items 5 and 6: a hold's synchronous Check, Release after the
// loss, and the default error policy.

// checkClient starts a client through a fault proxy to the shared server,
// with session timeout T and the builder's default error policy unless
// policy is set.
func checkClient(t *testing.T, T time.Duration, log *stateLog, policy *framework.ErrorPolicy) (*framework.Client, *zktest.Proxy) {
	t.Helper()
	p, err := zktest.NewProxy(zktest.Shared(t).ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	b := framework.NewBuilder().ConnectString(p.Addr()).SessionTimeout(T).
		ConnectionTimeout(testConnectionTimeout).RetryPolicy(fastRetry(t)).Listener(log.listen)
	if policy != nil {
		b = b.ConnectionStateErrorPolicy(*policy)
	}
	return startClient(t, b), p
}

func closedNow(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestHoldsCheck_ErrsOncePastTheLease: a holder whose server falls silent
// asks Check over and over. Every call made once T has passed since the
// silence began (the lease ends no later: it runs from a request sent
// before the silence) must return the loss error, matching the mutex's
// and the framework's sentinels, whatever Lost() says at that moment. The
// lease's exact end is the transport's; this bounds it from outside.
func TestHoldsCheck_ErrsOncePastTheLease(t *testing.T) {
	faultsNoLeaks(t)
	path := testPath(t)
	var log stateLog
	c, proxy := checkClient(t, testSessionTimeout, &log, nil)
	obs := newClient(t)
	t.Cleanup(func() { deleteTree(t, obs, path) })
	h, err := newMutex(t, c, path).Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Check(); err != nil {
		t.Fatalf("Check of a fresh hold = %v, want nil", err)
	}
	T := c.NegotiatedSessionTimeout()
	proxy.Pause()
	silent := time.Now()
	defer proxy.Resume()
	calls, erred, openAtErr := 0, 0, false
	for {
		before := time.Now()
		lostBefore := closedNow(h.Lost())
		err := h.Check()
		calls++
		if err != nil {
			if !errors.Is(err, mutex.ErrSessionLost) || !errors.Is(err, framework.ErrSessionLost) {
				t.Fatalf("Check = %v, want a match of mutex.ErrSessionLost and framework.ErrSessionLost", err)
			}
			if erred == 0 && !lostBefore {
				openAtErr = true
			}
			erred++
		} else if before.Sub(silent) > T {
			t.Fatalf("Check = nil %v after the server fell silent, past the session timeout %v", before.Sub(silent), T)
		}
		if before.Sub(silent) > T+T/2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if erred == 0 {
		t.Fatal("Check never refused")
	}
	t.Logf("%d calls, %d refused; Lost() still open at the first refusal: %v", calls, erred, openAtErr)
	proxy.Resume()
	if err := h.Release(t.Context()); !errors.Is(err, mutex.ErrSessionLost) {
		t.Fatalf("Release of the lost hold = %v, want mutex.ErrSessionLost", err)
	}
	eventually(t, 3*T, func() bool { return len(children(t, obs, path)) == 0 }, "no node is left")
}

// TestHoldsCheck_ReleaseAfterLostReturnsTheLoss: the connection is cut until
// the hold's session is lost; Release, with a 500 ms ctx, returns the loss
// error (there is nothing to delete: the server deletes the node with the
// session), and no node is left once the server is reachable again. On
// ca3e38e the release waited for a connection on a detached 10 s ctx and
// returned "context deadline exceeded".
func TestHoldsCheck_ReleaseAfterLostReturnsTheLoss(t *testing.T) {
	for _, kind := range []string{"mutex", "semaphorev2"} {
		t.Run(kind, func(t *testing.T) {
			faultsNoLeaks(t)
			path := testPath(t)
			var log stateLog
			c, proxy := checkClient(t, testSessionTimeout, &log, nil)
			obs := newClient(t)
			t.Cleanup(func() { deleteTree(t, obs, path) })
			var lost <-chan struct{}
			var release func(context.Context) error
			var sentinel error
			switch kind {
			case "mutex":
				h, err := newMutex(t, c, path).Acquire(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				lost, release, sentinel = h.Lost(), h.Release, mutex.ErrSessionLost
			default:
				s, err := semaphorev2.New(c, path, 1)
				if err != nil {
					t.Fatal(err)
				}
				l, err := s.Acquire(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				lost, release, sentinel = l.Lost(), l.Release, semaphorev2.ErrSessionLost
			}
			proxy.Pause()
			select {
			case <-lost:
			case <-time.After(6 * testSessionTimeout):
				t.Fatal("Lost() did not close with the server silent")
			}
			eventually(t, 2*testSessionTimeout, func() bool { return log.count(framework.Lost) > 0 }, "the session is lost")
			ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- release(ctx) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("Release did not return")
			}
			if !errors.Is(err, sentinel) || !errors.Is(err, framework.ErrSessionLost) {
				t.Fatalf("Release = %v, want a match of %v and framework.ErrSessionLost", err, sentinel)
			}
			proxy.Resume()
			eventually(t, 3*c.NegotiatedSessionTimeout()+10*time.Second, func() bool {
				return len(children(t, obs, path)) == 0 && len(children(t, obs, path+"/leases")) == 0
			}, "no node is left once the server answers")
		})
	}
}

// TestHoldsCheck_BlipUnderDefaultPolicy: at T = 10 s a 1 s outage (the
// connection reset, new ones refused for a second) ends no hold under the
// default policy: Lost() stays open, Check passes, and the same hold
// releases cleanly, leaving no node. Under StandardErrorPolicy the same
// blip ends the hold.
func TestHoldsCheck_BlipUnderDefaultPolicy(t *testing.T) {
	standard := framework.StandardErrorPolicy
	for _, tc := range []struct {
		name   string
		policy *framework.ErrorPolicy
		lost   bool
	}{
		{"default", nil, false},
		{"standard", &standard, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			faultsNoLeaks(t)
			path := testPath(t)
			var log stateLog
			c, proxy := checkClient(t, 10*time.Second, &log, tc.policy)
			if tc.policy == nil && c.ErrorPolicy() != framework.SessionErrorPolicy {
				t.Fatalf("default error policy %v, want SessionErrorPolicy", c.ErrorPolicy())
			}
			obs := newClient(t)
			t.Cleanup(func() { deleteTree(t, obs, path) })
			h, err := newMutex(t, c, path).Acquire(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			session := c.SessionID()
			proxy.Refuse(true)
			proxy.Reset()
			eventually(t, 5*time.Second, func() bool { return log.count(framework.Suspended) > 0 }, "the client is suspended")
			time.Sleep(time.Second)
			proxy.Refuse(false)
			eventually(t, 10*time.Second, func() bool { return log.count(framework.Reconnected) > 0 }, "the client reconnects")
			if c.SessionID() != session || log.count(framework.Lost) > 0 {
				t.Fatalf("the blip cost the session: states %v", log.states)
			}
			if got := closedNow(h.Lost()); got != tc.lost {
				t.Fatalf("after the blip Lost() closed = %v, want %v", got, tc.lost)
			}
			err = h.Check()
			if tc.lost && !errors.Is(err, mutex.ErrSessionLost) {
				t.Fatalf("Check after the blip = %v, want mutex.ErrSessionLost", err)
			}
			if !tc.lost && err != nil {
				t.Fatalf("Check after the blip = %v, want nil", err)
			}
			if err := h.Release(t.Context()); err != nil {
				t.Fatalf("Release after the blip = %v", err)
			}
			eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path)) == 0 }, "no node is left")
		})
	}
}

// releasedAfterLoss reports whether err is what Release of a lost hold
// returns: nil when its session lived on (its node was deleted), or an
// error matching framework.ErrSessionLost when the session is gone (there
// is nothing to delete: the server deletes the node with the session).
func releasedAfterLoss(err error) bool {
	return err == nil || errors.Is(err, framework.ErrSessionLost)
}
