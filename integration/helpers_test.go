package integration

import (
	"context"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
)

// Short timeouts keep fault tests fast; the harness's tickTime of 500 ms
// allows sessions from 1 s.
const (
	testSessionTimeout    = 4 * time.Second
	testConnectionTimeout = 3 * time.Second
)

// fastRetry retries quickly, for tests.
func fastRetry(t testing.TB) retry.Policy {
	t.Helper()
	p, err := retry.NewBoundedExponentialBackoff(20*time.Millisecond, 500*time.Millisecond, 10)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// builder returns a client builder for connect with test timeouts, under
// the library's default error policy (SessionErrorPolicy): every fault
// test checks Lost() before another holder under it. Tests of a Suspended
// ending holds set StandardErrorPolicy themselves.
func builder(t testing.TB, connect string) *framework.Builder {
	t.Helper()
	return framework.NewBuilder().
		ConnectString(connect).
		SessionTimeout(testSessionTimeout).
		ConnectionTimeout(testConnectionTimeout).
		RetryPolicy(fastRetry(t))
}

// startClient builds, starts and (at cleanup) closes a client.
func startClient(t testing.TB, b *framework.Builder) *framework.Client {
	t.Helper()
	c, err := b.Build()
	if err != nil {
		t.Fatalf("build client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// newClient starts a client on the shared server.
func newClient(t testing.TB) *framework.Client {
	t.Helper()
	return startClient(t, builder(t, zktest.Shared(t).ConnectString()))
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// testPath returns a path unique to the test, under /it.
func testPath(t testing.TB) string {
	t.Helper()
	return "/it/" + unsafeChars.ReplaceAllString(t.Name(), "_")
}

// children lists the children of p, sorted, or nil if p does not exist.
func children(t testing.TB, c *framework.Client, p string) []string {
	t.Helper()
	kids, err := c.GetChildren().ForPath(t.Context(), p)
	if err != nil {
		return nil
	}
	sort.Strings(kids)
	return kids
}

// eventually polls cond every 20 ms until it holds or d passes.
func eventually(t testing.TB, d time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
