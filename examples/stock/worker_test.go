package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// chroot creates a node of the test's own and returns its path, to follow
// the shared server's address in a connect string: the demo's paths are
// fixed.
func chroot(t *testing.T) string {
	t.Helper()
	root := "/" + strings.ReplaceAll(t.Name(), "/", "_")
	c := startClient(t, zktest.Shared(t).ConnectString(), nil)
	if _, err := c.Create().ForPath(t.Context(), root, nil); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	return root
}

// startClient starts a client on connect, with a worker's session and
// error policy and policy's retries (the demo's when nil); t.Cleanup
// closes it.
func startClient(t *testing.T, connect string, policy retry.Policy) *framework.Client {
	t.Helper()
	b := framework.NewBuilder().ConnectString(connect).SessionTimeout(workerSession).
		ConnectionTimeout(5 * time.Second).ConnectionStateErrorPolicy(framework.SessionErrorPolicy)
	if policy != nil {
		b = b.RetryPolicy(policy)
	}
	c, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// hold sets the stock to units and returns a hold of the demo's lock and
// its fencing token; t.Cleanup releases it.
func hold(t *testing.T, c *framework.Client, units int) (*mutex.Hold, int64) {
	t.Helper()
	if err := setStock(t.Context(), c, units); err != nil {
		t.Fatal(err)
	}
	lock, err := mutex.New(c, lockPath)
	if err != nil {
		t.Fatal(err)
	}
	h, err := lock.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Release(context.WithoutCancel(t.Context())) })
	token, err := h.FencingToken()
	if err != nil {
		t.Fatal(err)
	}
	return h, token
}

// captureStdout makes the worker's events go to the returned buffer for
// the rest of the test.
func captureStdout(t *testing.T) *bytes.Buffer {
	t.Helper()
	var out bytes.Buffer
	old := stdout
	stdout = &out
	t.Cleanup(func() { stdout = old })
	return &out
}

// TestBuy_SaleWhoseRetriesRanOutIsSettledUnderTheLock loses the reply to
// every set, so the sale's write is applied and its retries run out with an
// error matching framework.ErrIndeterminate; the worker, still holding the
// lock, finds its own write in the stock node and reports one sale.
func TestBuy_SaleWhoseRetriesRanOutIsSettledUnderTheLock(t *testing.T) {
	root := chroot(t)
	p, err := zktest.NewProxy(zktest.Shared(t).ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	once, err := retry.NewNTimes(1, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c := startClient(t, p.Addr()+root, once)
	h, token := hold(t, c, 5)
	out := captureStdout(t)

	p.SetReplyLoss(1, nil, zktest.OpSetData)
	got, err := buy(t.Context(), c, token, false, h)
	p.SetReplyLoss(0, nil)
	if err != nil || got != sale {
		t.Fatalf("buy = %v, %v; want a sale (output %q)", got, err, out)
	}
	if want := fmt.Sprintf("RESOLVED sale written\nSALE 4 %d\n", token); out.String() != want {
		t.Errorf("the worker printed %q, want %q", out, want)
	}
	if n := p.LostReplies(); n < 2 {
		t.Errorf("the proxy lost %d replies, want the first attempt's and the retry's", n)
	}
	data, _, err := c.GetData().ForPath(t.Context(), stockPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := formatStock(4, token); !bytes.Equal(data, want) {
		t.Errorf("stock node holds %q, want %q", data, want)
	}
}

// TestSettle checks what a worker concludes from the stock it reads again
// after a sale whose write's outcome is unknown.
func TestSettle(t *testing.T) {
	c := startClient(t, zktest.Shared(t).ConnectString()+chroot(t), nil)
	h, token := hold(t, c, 5)
	read, want := formatStock(5, token-1), formatStock(4, token)
	for _, tc := range []struct {
		name    string
		stock   []byte
		written bool
		err     string
	}{
		{"the sale's write", want, true, ""},
		{"what the worker read", read, false, ""},
		{"another write", formatStock(4, token+1), false, "neither the sale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := c.SetData().ForPath(t.Context(), stockPath, tc.stock); err != nil {
				t.Fatal(err)
			}
			written, err := settle(t.Context(), c, h, read, want)
			if written != tc.written || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("settle = %v, %v; want %v and an error with %q", written, err, tc.written, tc.err)
			}
		})
	}
}

func TestTokensRise(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tokens  map[int]int64 // by stock left
		highest int64
		err     bool
	}{
		{"rising as the stock falls", map[int]int64{2: 10, 1: 11, 0: 15}, 15, false},
		{"an older token left less", map[int]int64{2: 10, 1: 16, 0: 15}, 16, true},
		{"two sales, one token", map[int]int64{1: 10, 0: 10}, 10, true},
		{"none", map[int]int64{}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			highest, err := tokensRise(tc.tokens)
			if highest != tc.highest || (err != nil) != tc.err {
				t.Errorf("tokensRise(%v) = %d, %v; want %d and an error: %v", tc.tokens, highest, err, tc.highest, tc.err)
			}
		})
	}
}
