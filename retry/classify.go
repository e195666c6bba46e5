package retry

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
)

// Classifier is the optional interface of a [Policy] that decides by the
// error whether an operation is retried at all, as Curator 5's
// RetryPolicy.allowRetry(Throwable) does.
//
// The framework's retry loop asks RetryableError first, with the error of
// the attempt that failed; only if it reports true does the loop ask
// AllowRetry how long to sleep. A policy that does not implement
// Classifier retries the errors [IsRetryable] reports, which is what every
// policy of this package does, except [SessionFailed].
//
// RetryableError sees every error of every operation the policy serves,
// including the steps that recipes run in the retry loop, but never the
// end of the caller's ctx or the client's Close: those end the loop
// whatever a Classifier says. It must be safe for concurrent use, fast,
// and must not block. Return true only for an error that another attempt
// can cure; [IsRetryable] is the default to fall back on.
type Classifier interface {
	RetryableError(err error) bool
}

// IsRetryable reports whether err is one that Curator 5 retries by
// default: ZooKeeper's connection loss (go-zookeeper's
// zk.ErrConnectionClosed, zk.ErrNoServer, zk.ErrClosing, or a failed socket
// write, a *net.OpError), an operation timeout, zk.ErrSessionMoved,
// zk.ErrSessionExpired, and a reconfiguration without a quorum
// (NEWCONFIGNOQUORUM). The framework's own errors for a lost connection
// match one of these (its timed-out wait for a connection matches
// zk.ErrConnectionClosed, as Curator's CuratorConnectionLossException is
// a ConnectionLossException). Any other error, nil included, is not
// retried.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	var opErr *net.OpError // go-zookeeper returns a failed socket write as is
	return errors.As(err, &opErr) ||
		errors.Is(err, zk.ErrConnectionClosed) ||
		errors.Is(err, zk.ErrClosing) ||
		errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) ||
		errors.Is(err, zk.ErrSessionExpired) ||
		hasUnknownCode(err, codeOperationTimeout, codeNewConfigNoQuorum)
}

// Retryable reports whether an operation that failed with err may be
// retried under p: p's own RetryableError if p is a [Classifier],
// otherwise [IsRetryable]. A nil err, or a nil p, is never retried.
func Retryable(p Policy, err error) bool {
	if err == nil || p == nil {
		return false
	}
	if c, ok := p.(Classifier); ok {
		return c.RetryableError(err)
	}
	return IsRetryable(err)
}

// SessionFailed wraps a policy and refuses to retry once an operation
// fails because its session expired (an error matching
// zk.ErrSessionExpired); every other decision is the wrapped policy's. It
// is Curator's SessionFailedRetryPolicy.
//
// Use it where work done on one session must not silently continue on the
// next: an operation that fails with it returns at once, and the caller
// re-reads what the lost session's ephemeral nodes and watches meant. The
// framework's retry loop reports a session expiry both when ZooKeeper
// answers with one and when the client declared the session Lost (the
// server expired it, or the client's lease ran out) between the
// operation's start and its next attempt.
//
// A SessionFailed is immutable and safe for concurrent use if the wrapped
// policy is. Build one with [NewSessionFailed]; the zero value never
// retries.
type SessionFailed struct {
	p Policy
}

// Compile-time checks of the optional interface.
var _ Classifier = (*SessionFailed)(nil)

// NewSessionFailed returns a policy that retries as p does, except after a
// session expiry. A nil p is an error wrapping ErrInvalidArgument.
func NewSessionFailed(p Policy) (*SessionFailed, error) {
	if p == nil {
		return nil, invalid("policy is nil")
	}
	return &SessionFailed{p: p}, nil
}

// AllowRetry is the wrapped policy's.
func (s *SessionFailed) AllowRetry(retryCount int, elapsed time.Duration) (time.Duration, bool) {
	if s.p == nil {
		return 0, false
	}
	return s.p.AllowRetry(retryCount, elapsed)
}

// RetryableError reports false for a session expiry, and otherwise what
// the wrapped policy decides ([Retryable]).
func (s *SessionFailed) RetryableError(err error) bool {
	if s.p == nil || errors.Is(err, zk.ErrSessionExpired) {
		return false
	}
	return Retryable(s.p, err)
}

// ZooKeeper error codes that go-zookeeper v1.0.4 has no sentinel for: it
// reports them as fmt.Errorf("unknown error: %v", code).
const (
	codeOperationTimeout  = -7
	codeNewConfigNoQuorum = -13
)

// hasUnknownCode reports whether err's chain holds go-zookeeper's error for
// one of the codes it does not name.
func hasUnknownCode(err error, codes ...int) bool {
	if err == nil {
		return false
	}
	for _, code := range codes {
		if err.Error() == fmt.Sprintf("unknown error: %d", code) {
			return true
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return hasUnknownCode(u.Unwrap(), codes...)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if hasUnknownCode(e, codes...) {
				return true
			}
		}
	}
	return false
}
