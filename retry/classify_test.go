package retry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// classifierFunc is a Policy that retries n times and classifies errors
// with f.
type classifierFunc struct {
	*NTimes
	f func(error) bool
}

func (c classifierFunc) RetryableError(err error) bool { return c.f(err) }

func TestIsRetryable_CuratorDefaults(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection loss", zk.ErrConnectionClosed, true},
		{"no server", zk.ErrNoServer, true},
		{"closing", zk.ErrClosing, true},
		{"socket write", &net.OpError{Op: "write", Err: errors.New("broken pipe")}, true},
		{"session moved", zk.ErrSessionMoved, true},
		{"session expired", zk.ErrSessionExpired, true},
		{"operation timeout", fmt.Errorf("unknown error: %d", -7), true},
		{"new config no quorum", fmt.Errorf("unknown error: %d", -13), true},
		{"wrapped connection loss", fmt.Errorf("op: %w", zk.ErrConnectionClosed), true},
		{"joined session expired", errors.Join(errors.New("x"), zk.ErrSessionExpired), true},
		{"wrapped operation timeout", fmt.Errorf("op: %w", fmt.Errorf("unknown error: %d", -7)), true},
		{"no node", zk.ErrNoNode, false},
		{"node exists", zk.ErrNodeExists, false},
		{"bad version", zk.ErrBadVersion, false},
		{"not empty", zk.ErrNotEmpty, false},
		{"no auth", zk.ErrNoAuth, false},
		{"auth failed", zk.ErrAuthFailed, false},
		{"other unknown code", fmt.Errorf("unknown error: %d", -8), false},
		{"ctx canceled", context.Canceled, false},
		{"ctx deadline", context.DeadlineExceeded, false},
		{"plain", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsRetryable(tt.err); got != tt.want {
				t.Errorf("IsRetryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestRetryable_PolicyDecides(t *testing.T) {
	plain, err := NewNTimes(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	noNodeToo := classifierFunc{plain, func(err error) bool { return IsRetryable(err) || errors.Is(err, zk.ErrNoNode) }}
	never := classifierFunc{plain, func(error) bool { return false }}
	tests := []struct {
		name   string
		policy Policy
		err    error
		want   bool
	}{
		{"plain policy: connection loss", plain, zk.ErrConnectionClosed, true},
		{"plain policy: no node", plain, zk.ErrNoNode, false},
		{"classifier widens: no node", noNodeToo, zk.ErrNoNode, true},
		{"classifier widens: bad version", noNodeToo, zk.ErrBadVersion, false},
		{"classifier narrows: connection loss", never, zk.ErrConnectionClosed, false},
		{"nil error", noNodeToo, nil, false},
		{"nil policy", nil, zk.ErrConnectionClosed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Retryable(tt.policy, tt.err); got != tt.want {
				t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestSessionFailed_RefusesSessionExpiry(t *testing.T) {
	inner, err := NewNTimes(2, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSessionFailed(inner)
	if err != nil {
		t.Fatal(err)
	}
	noNodeToo := classifierFunc{inner, func(err error) bool { return IsRetryable(err) || errors.Is(err, zk.ErrNoNode) }}
	widened, err := NewSessionFailed(noNodeToo)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		policy *SessionFailed
		err    error
		want   bool
	}{
		{"session expired", s, zk.ErrSessionExpired, false},
		{"wrapped session expired", s, fmt.Errorf("x: %w (lost: %w)", zk.ErrConnectionClosed, zk.ErrSessionExpired), false},
		{"connection loss", s, zk.ErrConnectionClosed, true},
		{"session moved", s, zk.ErrSessionMoved, true},
		{"no node", s, zk.ErrNoNode, false},
		{"inner classifier: no node", widened, zk.ErrNoNode, true},
		{"inner classifier: session expired", widened, zk.ErrSessionExpired, false},
		{"zero value", &SessionFailed{}, zk.ErrConnectionClosed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Retryable(tt.policy, tt.err); got != tt.want {
				t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}

	// AllowRetry is the wrapped policy's.
	for n := range 3 {
		sleep, ok := s.AllowRetry(n, 0)
		if wantOK := n < 2; ok != wantOK || (ok && sleep != 5*time.Millisecond) {
			t.Errorf("AllowRetry(%d) = %v, %v; want %v, %v", n, sleep, ok, 5*time.Millisecond, wantOK)
		}
	}
	if _, ok := (&SessionFailed{}).AllowRetry(0, 0); ok {
		t.Error("the zero SessionFailed allows a retry")
	}
}

func TestNewSessionFailed_Nil(t *testing.T) {
	p, err := NewSessionFailed(nil)
	if !errors.Is(err, ErrInvalidArgument) || p != nil {
		t.Fatalf("NewSessionFailed(nil) = %v, %v; want nil, ErrInvalidArgument", p, err)
	}
}
