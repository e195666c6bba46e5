package framework

import (
	"errors"
	"fmt"
	"net"

	"github.com/go-zookeeper/zk"
)

// Errors returned by the client. Match them with errors.Is.
var (
	ErrClosed            = errors.New("framework: client is closed")
	ErrNotStarted        = errors.New("framework: client is not started")
	ErrAlreadyStarted    = errors.New("framework: client is already started")
	ErrNilClient         = errors.New("framework: nil client")
	ErrInvalidPath       = errors.New("framework: invalid path")
	ErrInvalidArgument   = errors.New("framework: invalid argument")
	ErrConnectionTimeout = errors.New("framework: timed out waiting for a connection")
	// ErrSessionLost reports a hold, lease or leadership lost with its
	// connection or session, or a node not trusted because the session that
	// made it is no longer the client's. Every recipe's own ErrSessionLost
	// matches it.
	ErrSessionLost = errors.New("framework: the session is lost")
	// ErrIndeterminate reports a write whose outcome the client cannot know:
	// a request was sent, the connection was lost before its reply came,
	// and the server may or may not have applied it. The error also wraps
	// the last error seen (a connection loss, or the definite error of a
	// retry that may have met the effect of the first attempt, such as
	// zk.ErrNodeExists, zk.ErrNoNode or zk.ErrBadVersion). Read before
	// repeating anything that is not idempotent.
	ErrIndeterminate = errors.New("framework: outcome unknown: the request may or may not have been applied")
)

// IsRetryable reports whether err is one that Curator 5 retries: connection
// loss, operation timeout, no server, session moved, session expired, a
// reconfiguration without quorum, or a timed-out wait for a connection. It also covers zk.ErrClosing, which a request gets when the
// client replaces its connection after a simulated session expiry (once the
// client itself is closed, the retry loop stops with ErrClosed).
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	var opErr *net.OpError // go-zookeeper returns a failed socket write as is
	return errors.As(err, &opErr) || hasUnknownCode(err, codeOperationTimeout, codeNewConfigNoQuorum) || errors.Is(err, zk.ErrConnectionClosed) ||
		errors.Is(err, zk.ErrClosing) ||
		errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) ||
		errors.Is(err, zk.ErrSessionExpired) ||
		errors.Is(err, ErrConnectionTimeout)
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
