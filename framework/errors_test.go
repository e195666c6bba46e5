package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A message carries one package prefix, even when the client wraps one of
// its own errors.
func TestErrors_OnePrefix(t *testing.T) {
	_, nsErr := NewBuilder().ConnectString("127.0.0.1:1").Namespace("a//b").Build()
	c, err := NewBuilder().ConnectString("127.0.0.1:1").Build()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, sessErr := c.CurrentSession(ctx) // not started
	for _, tc := range []struct {
		err  error
		want error
	}{
		{nsErr, ErrInvalidPath},
		{sessErr, ErrNotStarted},
	} {
		if tc.err == nil || !errors.Is(tc.err, tc.want) {
			t.Errorf("error %v, want one matching %v", tc.err, tc.want)
			continue
		}
		if n := strings.Count(tc.err.Error(), "framework: "); n != 1 {
			t.Errorf("%q carries %d prefixes, want 1", tc.err, n)
		}
	}
}

func TestSentinelsMatchTheServersAnswers(t *testing.T) {
	for fw, z := range zkSentinels {
		err := withSentinels(fmt.Errorf("framework: children /x: %w", z))
		if !errors.Is(err, fw) || !errors.Is(err, z) {
			t.Errorf("%v: matches %v: %v, %v: %v; want both", err, fw, errors.Is(err, fw), z, errors.Is(err, z))
		}
		for other := range zkSentinels {
			if other != fw && errors.Is(err, other) {
				t.Errorf("%v matches %v too", err, other)
			}
		}
		if got := withSentinels(err); got != err {
			t.Errorf("withSentinels wrapped twice")
		}
	}
	if err := withSentinels(ErrClosed); err != ErrClosed {
		t.Errorf("withSentinels(ErrClosed) = %#v, want it as it is", err)
	}
	if withSentinels(nil) != nil {
		t.Error("withSentinels(nil) != nil")
	}
}
