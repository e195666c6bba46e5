package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

// retryAll is a policy whose Classifier retries every error.
type retryAll struct{}

func (retryAll) AllowRetry(int, time.Duration) (time.Duration, bool) { return 0, true }
func (retryAll) RetryableError(error) bool                           { return true }

// The loop's default (IsRetryable) and a Classifier's fallback
// (retry.IsRetryable) must agree on every error the loop meets, so that a
// policy that wraps another decides as the loop would without it.
func TestRetryable_DefaultsAgree(t *testing.T) {
	errs := []error{
		zk.ErrConnectionClosed, zk.ErrNoServer, zk.ErrClosing, zk.ErrSessionMoved, zk.ErrSessionExpired,
		&net.OpError{Op: "write", Err: errors.New("broken pipe")},
		fmt.Errorf("unknown error: %d", codeOperationTimeout), fmt.Errorf("unknown error: %d", codeNewConfigNoQuorum),
		connTimeoutError{time.Second}, sessionExpired(nil), sessionExpired(zk.ErrConnectionClosed),
		zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion, zk.ErrNotEmpty, zk.ErrNoAuth,
		withSentinels(fmt.Errorf("op: %w", zk.ErrNoNode)),
		ErrClosed, ErrNotStarted, context.Canceled, context.DeadlineExceeded,
	}
	for _, err := range errs {
		if got, want := retry.IsRetryable(err), IsRetryable(err); got != want {
			t.Errorf("%v: retry.IsRetryable = %v, framework.IsRetryable = %v", err, got, want)
		}
	}
	if !errors.Is(connTimeoutError{time.Second}, ErrConnectionTimeout) {
		t.Error("the connection timeout does not match ErrConnectionTimeout")
	}
	if got := (connTimeoutError{3 * time.Second}).Error(); got != "framework: timed out waiting for a connection after 3s" {
		t.Errorf("connection timeout text %q", got)
	}
}

// The end of ctx and a closed or unstarted client end the loop whatever
// a Classifier says.
func TestRetryable_LifecycleEndsTheLoop(t *testing.T) {
	for _, err := range []error{
		context.Canceled, context.DeadlineExceeded, ErrClosed, ErrNotStarted,
		fmt.Errorf("%w (last error: %w)", context.Canceled, zk.ErrConnectionClosed), nil,
	} {
		if retryable(retryAll{}, err) {
			t.Errorf("%v: retried under a policy that retries everything", err)
		}
	}
	if !retryable(retryAll{}, zk.ErrNoNode) {
		t.Error("the Classifier was not asked about zk.ErrNoNode")
	}
	if !errors.Is(sessionExpired(zk.ErrConnectionClosed), zk.ErrConnectionClosed) ||
		!errors.Is(sessionExpired(zk.ErrConnectionClosed), zk.ErrSessionExpired) ||
		!errors.Is(sessionExpired(nil), zk.ErrSessionExpired) {
		t.Error("a lost session's error does not match both its cause and zk.ErrSessionExpired")
	}
}
