package atomiclong

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
)

func policy(t *testing.T) retry.Policy {
	t.Helper()
	p, err := retry.NewNTimes(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// unstarted returns a client that was built but never started.
func unstarted(t *testing.T) *framework.Client {
	t.Helper()
	c, err := framework.NewClient("127.0.0.1:1", policy(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestNew_BadInput(t *testing.T) {
	c, p := unstarted(t), policy(t)
	for _, tc := range []struct {
		name   string
		client *framework.Client
		path   string
		policy retry.Policy
		opts   []Option
		want   error
	}{
		{"nil client", nil, "/c", p, nil, framework.ErrNilClient},
		{"empty path", c, "", p, nil, framework.ErrInvalidPath},
		{"relative path", c, "c", p, nil, framework.ErrInvalidPath},
		{"trailing slash", c, "/c/", p, nil, framework.ErrInvalidPath},
		{"dot dot", c, "/a/..", p, nil, framework.ErrInvalidPath},
		{"control character", c, "/a\x01", p, nil, framework.ErrInvalidPath},
		{"root", c, "/", p, nil, framework.ErrInvalidPath},
		{"nil policy", c, "/c", nil, nil, ErrInvalidArgument},
		{"nil option", c, "/c", p, []Option{nil}, ErrInvalidArgument},
		{"bad lock path", c, "/c", p, []Option{WithPromotedLock("lock", time.Second, p)}, framework.ErrInvalidPath},
		{"lock on the counter", c, "/c", p, []Option{WithPromotedLock("/c", time.Second, p)}, ErrInvalidArgument},
		{"negative wait", c, "/c", p, []Option{WithPromotedLock("/l", -time.Second, p)}, ErrInvalidArgument},
		{"nil lock policy", c, "/c", p, []Option{WithPromotedLock("/l", time.Second, nil)}, ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(tc.client, tc.path, tc.policy, tc.opts...)
			if !errors.Is(err, tc.want) || l != nil {
				t.Errorf("New = %v, %v; want nil, %v", l, err, tc.want)
			}
		})
	}
	if _, err := New(c, "/c", p, WithPromotedLock("/l", 0, p)); err != nil {
		t.Errorf("valid promoted lock: %v", err)
	}
}

func TestLong_UnstartedAndNil(t *testing.T) {
	ctx := context.Background()
	l, err := New(unstarted(t), "/c", policy(t))
	if err != nil {
		t.Fatal(err)
	}
	var nl *Long
	for _, tc := range []struct {
		l    *Long
		want error
	}{{l, framework.ErrNotStarted}, {nl, ErrInvalidArgument}} {
		ops := map[string]func() error{
			"Get":           func() error { _, err := tc.l.Get(ctx); return err },
			"Increment":     func() error { _, err := tc.l.Increment(ctx); return err },
			"Decrement":     func() error { _, err := tc.l.Decrement(ctx); return err },
			"Add":           func() error { _, err := tc.l.Add(ctx, 2); return err },
			"Subtract":      func() error { _, err := tc.l.Subtract(ctx, 2); return err },
			"TrySet":        func() error { _, err := tc.l.TrySet(ctx, 2); return err },
			"CompareAndSet": func() error { _, err := tc.l.CompareAndSet(ctx, 0, 2); return err },
			"Initialize":    func() error { _, err := tc.l.Initialize(ctx, 2); return err },
			"ForceSet":      func() error { return tc.l.ForceSet(ctx, 2) },
		}
		for name, op := range ops {
			if err := op(); !errors.Is(err, tc.want) {
				t.Errorf("%s: err = %v, want %v", name, err, tc.want)
			}
		}
	}
}

func TestNew_PromotedLockChoice(t *testing.T) {
	c, p := unstarted(t), policy(t)
	for _, tc := range []struct {
		name     string
		opts     []Option
		lockPath string // "" for none
	}{
		{"default", nil, "/shop/orders" + DefaultLockSuffix},
		{"explicit", []Option{WithPromotedLock("/locks/orders", time.Second, p)}, "/locks/orders"},
		{"without", []Option{WithoutPromotedLock()}, ""},
		{"without, then explicit", []Option{WithoutPromotedLock(), WithPromotedLock("/l", 0, p)}, "/l"},
		{"explicit, then without", []Option{WithPromotedLock("/l", 0, p), WithoutPromotedLock()}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(c, "/shop/orders", p, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if got := l.c.LockPath(); got != tc.lockPath {
				t.Errorf("lock path %q, want %q", got, tc.lockPath)
			}
		})
	}
}
