package interop

import (
	"testing"
	"time"
)

// The leader helper is a second Java program, java/LeaderHelper.java, for
// Curator's LeaderLatch and LeaderSelector. It speaks the same protocol
// as CuratorHelper (java/LineProtocol.java) and is driven through the same
// Helper type.

// StartLeader starts a leader helper connected to connectString with
// DefaultSessionTimeout; t.Cleanup closes it (closing its latches and
// selectors, then its session). It skips or fails t when Java Curator is
// missing, as Start does.
func StartLeader(t testing.TB, connectString string) *Helper {
	t.Helper()
	return StartLeaderSession(t, connectString, DefaultSessionTimeout)
}

// StartLeaderSession is StartLeader with a given session timeout.
func StartLeaderSession(t testing.TB, connectString string, sessionTimeout time.Duration) *Helper {
	t.Helper()
	return StartLeaderWith(t, connectString, LeaderOptions{SessionTimeout: sessionTimeout})
}

// LeaderOptions configure a leader helper.
type LeaderOptions struct {
	// SessionTimeout is the Curator client's; 0 means DefaultSessionTimeout.
	SessionTimeout time.Duration
	// FullJIT runs the JVM with its default compilers, for measurements;
	// otherwise it stops at C1, which starts faster, as for every helper.
	FullJIT bool
}

// StartLeaderWith is StartLeader with options.
func StartLeaderWith(t testing.TB, connectString string, opts LeaderOptions) *Helper {
	t.Helper()
	sessionTimeout := opts.SessionTimeout
	if sessionTimeout <= 0 {
		sessionTimeout = DefaultSessionTimeout
	}
	return start(t, leaderProgram, connectString, sessionTimeout, opts.FullJIT)
}
