package framework

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
)

func TestOutcomeOf(t *testing.T) {
	cases := []struct {
		ok   bool
		err  error
		want AcquireOutcome
	}{
		{true, nil, OutcomeAcquired},
		{false, nil, OutcomeTimeout},
		{false, context.DeadlineExceeded, OutcomeTimeout},
		{false, fmt.Errorf("mutex: acquire /x: %w", context.DeadlineExceeded), OutcomeTimeout},
		{false, context.Canceled, OutcomeCancelled},
		{false, fmt.Errorf("wrapped: %w", context.Canceled), OutcomeCancelled},
		{false, ErrClosed, OutcomeError},
		{false, zk.ErrNoAuth, OutcomeError},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%v/%v", tc.ok, tc.err), func(t *testing.T) {
			if got := OutcomeOf(tc.ok, tc.err); got != tc.want {
				t.Errorf("OutcomeOf(%v, %v) = %v, want %v", tc.ok, tc.err, got, tc.want)
			}
		})
	}
}

func TestAcquireOutcome_String(t *testing.T) {
	want := map[AcquireOutcome]string{
		OutcomeAcquired: "acquired", OutcomeTimeout: "timeout", OutcomeCancelled: "cancelled",
		OutcomeError: "error", -1: "unknown", 99: "unknown",
	}
	for o, s := range want {
		if got := o.String(); got != s {
			t.Errorf("AcquireOutcome(%d).String() = %q, want %q", int(o), got, s)
		}
	}
}

// TestMetrics_BuilderCopiesAndNilIsZero checks the hook's plumbing without a
// server: the Builder copies the funcs, Client.Metrics returns them, and a
// nil or unhooked client returns the zero Metrics.
func TestMetrics_BuilderCopiesAndNilIsZero(t *testing.T) {
	var nilClient *Client
	if m := nilClient.Metrics(); m.OpDone != nil || m.AcquireDone != nil {
		t.Fatal("a nil client has a metrics hook")
	}
	plain, err := NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if m := plain.Metrics(); m.OpDone != nil || m.Retrying != nil || m.StateChanged != nil ||
		m.WatchDelivered != nil || m.AcquireDone != nil || m.Released != nil {
		t.Fatal("a client built without Metrics has a hook")
	}

	called := ""
	m := Metrics{OpDone: func(i OpInfo) { called = i.Op }}
	b := NewBuilder().ConnectString("127.0.0.1:2181").Metrics(m)
	m.OpDone = nil // the builder kept its own copy
	c, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := c.Metrics()
	if got.OpDone == nil || got.Retrying != nil {
		t.Fatalf("Client.Metrics() = %+v, want OpDone alone", got)
	}
	got.OpDone(OpInfo{Op: OpNameGetData})
	if called != OpNameGetData {
		t.Fatalf("the client's OpDone is not the builder's")
	}
}

// TestMetrics_UnstartedClientReportsNothing checks that a call that fails
// before any attempt (the client is not started, or closed) is not
// reported as an operation.
func TestMetrics_UnstartedClientReportsNothing(t *testing.T) {
	var ops []OpInfo
	c, err := NewBuilder().ConnectString("127.0.0.1:2181").
		Metrics(Metrics{OpDone: func(i OpInfo) { ops = append(ops, i) }}).Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.GetData().ForPath(t.Context(), "/x"); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("GetData before Start: %v, want ErrNotStarted", err)
	}
	c.Close()
	if err := c.Retry(t.Context(), func() error { return nil }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Retry after Close: %v, want ErrClosed", err)
	}
	if len(ops) != 0 {
		t.Fatalf("OpDone called for calls that ran no attempt: %+v", ops)
	}
}

func TestOpInfo_Failed(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{zk.ErrNoNode, false},
		{zk.ErrNodeExists, false},
		{zk.ErrBadVersion, false},
		{zk.ErrNotEmpty, false},
		{ErrNoNode, false},
		{fmt.Errorf("framework: get /a: %w", withSentinels(zk.ErrNoNode)), false},
		{Indeterminate(zk.ErrNodeExists), false},
		{zk.ErrConnectionClosed, true},
		{zk.ErrSessionExpired, true},
		{zk.ErrNoAuth, true},
		{ErrNoAuth, true},
		{zk.ErrNoChildrenForEphemerals, true},
		{ErrConnectionTimeout, true},
		{ErrClosed, true},
		{context.Canceled, true},
		{context.DeadlineExceeded, true},
		{fmt.Errorf("%w (last error: %w)", context.Canceled, zk.ErrNoNode), true},
		{errors.New("the caller's own"), true},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprint(tc.err), func(t *testing.T) {
			if got := (OpInfo{Op: OpNameGetData, Err: tc.err}).Failed(); got != tc.want {
				t.Errorf("OpInfo{Err: %v}.Failed() = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
