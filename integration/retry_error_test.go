package integration

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// classifyingPolicy is a retry.Policy and retry.Classifier that counts
// what the retry loop asks it. Its sleeps and its retry count are inner's;
// classify (nil: inner's decision, retry.Retryable) says which errors are
// retried.
type classifyingPolicy struct {
	inner    retry.Policy
	classify func(error) bool

	mu      sync.Mutex
	seen    []error // the errors RetryableError was asked about
	allowed int     // calls of AllowRetry
}

func (p *classifyingPolicy) AllowRetry(n int, elapsed time.Duration) (time.Duration, bool) {
	p.mu.Lock()
	p.allowed++
	p.mu.Unlock()
	return p.inner.AllowRetry(n, elapsed)
}

func (p *classifyingPolicy) RetryableError(err error) bool {
	p.mu.Lock()
	p.seen = append(p.seen, err)
	p.mu.Unlock()
	if p.classify != nil {
		return p.classify(err)
	}
	return retry.Retryable(p.inner, err)
}

// counts returns the errors RetryableError saw and the AllowRetry calls.
func (p *classifyingPolicy) counts() ([]error, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]error(nil), p.seen...), p.allowed
}

func nTimesPolicy(t *testing.T, n int, sleep time.Duration) *retry.NTimes {
	t.Helper()
	p, err := retry.NewNTimes(n, sleep)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRetryError_PolicyDecidesByTheError(t *testing.T) {
	t.Parallel()
	t.Run("NoNodeIsNotRetried", func(t *testing.T) {
		t.Parallel()
		p := &classifyingPolicy{inner: nTimesPolicy(t, 5, 10*time.Millisecond)}
		var retries int
		c := startClient(t, builder(t, fwShared(t)).RetryPolicy(p).
			Metrics(framework.Metrics{Retrying: func(framework.RetryInfo) { retries++ }}))
		_, _, err := c.GetData().ForPath(t.Context(), testPath(t)+"/missing")
		if !errors.Is(err, zk.ErrNoNode) || !errors.Is(err, framework.ErrNoNode) {
			t.Fatalf("GetData of a missing node = %v, want ErrNoNode", err)
		}
		seen, allowed := p.counts()
		if len(seen) != 1 || !errors.Is(seen[0], zk.ErrNoNode) || allowed != 0 || retries != 0 {
			t.Fatalf("policy asked about %v, AllowRetry called %d times, %d retries; want [no node], 0, 0",
				seen, allowed, retries)
		}
	})
	t.Run("AClassifierCanRetryNoNode", func(t *testing.T) {
		t.Parallel()
		p := &classifyingPolicy{inner: nTimesPolicy(t, 3, 0),
			classify: func(err error) bool { return retry.IsRetryable(err) || errors.Is(err, zk.ErrNoNode) }}
		var mu sync.Mutex
		var retried []error
		c := startClient(t, builder(t, fwShared(t)).RetryPolicy(p).
			Metrics(framework.Metrics{Retrying: func(i framework.RetryInfo) {
				mu.Lock()
				retried = append(retried, i.Err)
				mu.Unlock()
			}}))
		_, _, err := c.GetData().ForPath(t.Context(), testPath(t)+"/missing")
		if !errors.Is(err, zk.ErrNoNode) {
			t.Fatalf("GetData of a missing node = %v, want ErrNoNode after the retries", err)
		}
		seen, allowed := p.counts()
		mu.Lock()
		defer mu.Unlock()
		// Four attempts: the policy is asked about each failure, and
		// allows three retries of the four it is asked for.
		if len(seen) != 4 || allowed != 4 || len(retried) != 3 || !errors.Is(retried[2], zk.ErrNoNode) {
			t.Fatalf("policy asked about %d errors, AllowRetry called %d times, %d retries (%v); want 4, 4, 3",
				len(seen), allowed, len(retried), retried)
		}
	})
	t.Run("AConnectionTimeoutIsAConnectionLoss", func(t *testing.T) {
		t.Parallel()
		proxy := fwProxy(t, fwShared(t))
		p := &classifyingPolicy{inner: nTimesPolicy(t, 0, 0)}
		var states stateLog
		c := startClient(t, builder(t, proxy.Addr()).RetryPolicy(p).
			ConnectionTimeout(300*time.Millisecond).Listener(states.listen))
		proxy.Refuse(true)
		proxy.Reset()
		eventually(t, 10*time.Second, func() bool { return states.count(framework.Suspended) == 1 }, "Suspended after the reset")
		_, _, err := c.GetData().ForPath(t.Context(), "/")
		seen, allowed := p.counts()
		if !errors.Is(err, framework.ErrConnectionTimeout) || !errors.Is(err, zk.ErrConnectionClosed) ||
			len(seen) != 1 || !errors.Is(seen[0], zk.ErrConnectionClosed) || allowed != 1 {
			t.Fatalf("GetData while disconnected = %v; policy asked about %v, AllowRetry called %d times; "+
				"want ErrConnectionTimeout matching zk.ErrConnectionClosed, asked once, called once", err, seen, allowed)
		}
		proxy.Refuse(false)
	})
}

// TestRetryError_SessionFailedStopsAtSessionExpiry expires the session
// under an operation that is being retried: under SessionFailed the
// operation stops at once with zk.ErrSessionExpired; under the policy it
// wraps it goes on, on the new session.
func TestRetryError_SessionFailedStopsAtSessionExpiry(t *testing.T) {
	t.Parallel()
	for _, sessionFailed := range []bool{true, false} {
		name := "SessionFailed"
		if !sessionFailed {
			name = "PlainPolicy"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			inner := nTimesPolicy(t, 20, 20*time.Millisecond)
			var policy retry.Policy = inner
			if sessionFailed {
				sf, err := retry.NewSessionFailed(inner)
				if err != nil {
					t.Fatal(err)
				}
				policy = sf
			}
			counter := &classifyingPolicy{inner: policy}
			var states stateLog
			c := startClient(t, builder(t, fwShared(t)).RetryPolicy(counter).Listener(states.listen))
			path := testPath(t)
			if _, err := c.Create().CreatingParentContainersIfNeeded().ForPath(t.Context(), path, []byte("v")); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { // t.Context() has ended by now
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := c.Delete().Quietly().ForPath(ctx, path); err != nil {
					t.Errorf("delete %s: %v", path, err)
				}
			})

			attempts := 0
			err := c.Retry(t.Context(), func() error {
				attempts++
				conn := c.ZooKeeper()
				if attempts == 1 {
					// The server ends the session this attempt runs on.
					if err := zktest.ExpireSession(t.Context(), fwShared(t), conn); err != nil {
						t.Error(err)
						return err
					}
				}
				_, _, err := conn.Get(path)
				return err
			})
			seen, _ := counter.counts()
			if sessionFailed {
				if !errors.Is(err, zk.ErrSessionExpired) || attempts != 1 {
					t.Fatalf("operation across a session expiry under SessionFailed = %v after %d attempts; "+
						"want zk.ErrSessionExpired after 1 (policy asked about %v)", err, attempts, seen)
				}
			} else if err != nil || attempts < 2 {
				t.Fatalf("operation across a session expiry = %v after %d attempts; want success on the new session "+
					"(policy asked about %v)", err, attempts, seen)
			}
			expired := false
			for _, e := range seen {
				expired = expired || errors.Is(e, zk.ErrSessionExpired)
			}
			if !expired {
				t.Fatalf("the policy was never asked about a session expiry, only %v", seen)
			}
			// The client goes on, on a new session, for the next
			// operation.
			eventually(t, 10*time.Second, func() bool { return states.count(framework.Lost) == 1 }, "Lost after the expiry")
			if data, _, err := c.GetData().ForPath(t.Context(), path); err != nil || string(data) != "v" {
				t.Fatalf("GetData after the expiry = %q, %v", data, err)
			}
		})
	}
}

// TestRetryError_SessionFailedStopsAtSimulatedExpiry partitions a client
// for longer than its session timeout while an operation is being
// retried: when the client declares the session Lost (its lease ended),
// the operation under SessionFailed returns zk.ErrSessionExpired at once,
// while the partition lasts, where the policy it wraps (RetryForever)
// would keep waiting for the servers.
func TestRetryError_SessionFailedStopsAtSimulatedExpiry(t *testing.T) {
	t.Parallel()
	forever, err := retry.NewForever(50 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := retry.NewSessionFailed(forever)
	if err != nil {
		t.Fatal(err)
	}
	proxy := fwProxy(t, fwShared(t))
	var states stateLog
	c := startClient(t, builder(t, proxy.Addr()).RetryPolicy(policy).Listener(states.listen))
	proxy.Pause()
	defer proxy.Resume()
	done := make(chan error, 1)
	go func() {
		_, _, err := c.GetData().ForPath(t.Context(), "/")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, zk.ErrSessionExpired) {
			t.Fatalf("GetData across a partition longer than the session = %v, want zk.ErrSessionExpired", err)
		}
		if st := c.State(); st != framework.Lost {
			t.Fatalf("GetData returned %v in state %v, want after Lost (states %v)", err, st, &states)
		}
	case <-time.After(3 * testSessionTimeout):
		t.Fatalf("GetData under SessionFailed still retrying %v into a partition (states %v)", 3*testSessionTimeout, &states)
	}
}
