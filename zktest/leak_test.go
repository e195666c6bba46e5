//go:build unix

package zktest

import (
	"slices"
	"syscall"
	"testing"
	"time"
)

// alivePID returns s's pid and fails the test unless a process runs there.
func alivePID(t *testing.T, s *Server) int {
	t.Helper()
	pid := s.PID()
	if pid == 0 {
		t.Fatalf("%v: PID() = 0 while it serves", s)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("%v: PID() = %d, but kill(%d, 0): %v", s, pid, pid, err)
	}
	return pid
}

// checkStopped fails the test unless s reports no pid and the process that
// had pid is gone, reaped and all.
func checkStopped(t *testing.T, s *Server, pid int, after string) {
	t.Helper()
	if got := s.PID(); got != 0 {
		t.Errorf("%v after %s: PID() = %d, want 0", s, after, got)
	}
	checkGone(t, s.String()+" after "+after, []int{pid})
}

func TestServers_LeaveNoProcessBehind(t *testing.T) {
	started := recordStarts(t)
	ctx := testCtx(t)
	standalone, err := StartLocal(ctx, 1)
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(func() { standalone.Close() }) // if the test ends early
	ensemble, err := StartLocal(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ensemble.Close() })

	var pids []int
	servers := append(standalone.Servers(), ensemble.Servers()...)
	for _, s := range servers {
		pid := alivePID(t, s)
		if slices.Contains(pids, pid) {
			t.Fatalf("%v: PID() = %d, which another server has", s, pid)
		}
		pids = append(pids, pid)
	}

	// Kill, Stop, and a crash the harness learns of only from wait: each
	// leaves no process, and Start runs a new one.
	es := ensemble.Servers()
	crash := func(s *Server) error {
		pid := s.PID()
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return err
		}
		// The process is the server's child: until the harness reaps it,
		// it is a zombie and PID() still names it.
		deadline := time.Now().Add(10 * time.Second)
		for s.PID() != 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		return nil
	}
	for i, step := range []struct {
		name string
		down func(*Server) error
	}{
		{"Kill", (*Server).Kill},
		{"Stop", (*Server).Stop},
		{"SIGKILL from outside", crash},
	} {
		s := es[i]
		if _, err := ensemble.WaitLeader(ctx); err != nil {
			t.Fatal(err)
		}
		old := alivePID(t, s)
		if err := step.down(s); err != nil {
			t.Fatalf("%s of %v: %v", step.name, s, err)
		}
		checkStopped(t, s, old, step.name)
		if err := s.Start(); err != nil {
			t.Fatalf("Start of %v after %s: %v", s, step.name, err)
		}
		pid := alivePID(t, s)
		if pid == old {
			t.Errorf("%v: PID() = %d after %s and Start, as before", s, pid, step.name)
		}
		pids = append(pids, pid)
	}

	if err := standalone.Close(); err != nil {
		t.Error(err)
	}
	if err := ensemble.Close(); err != nil {
		t.Error(err)
	}
	for _, s := range servers {
		if pid := s.PID(); pid != 0 {
			t.Errorf("%v after Close: PID() = %d, want 0", s, pid)
		}
	}
	checkGone(t, "after Close", pids)

	// A server that t.Cleanup closes is gone when its test has returned.
	var fromCleanup int
	t.Run("StartWith", func(t *testing.T) {
		c := StartWith(t, Config{})
		fromCleanup = alivePID(t, c.Servers()[0])
	})
	if fromCleanup == 0 {
		t.Fatal("the StartWith subtest got no server")
	}
	checkGone(t, "after the StartWith subtest returned", []int{fromCleanup})

	// Every process the harness started during the test: the ones above,
	// and any it retried on fresh ports.
	all := started()
	if len(all) < len(pids)+1 {
		t.Errorf("the harness reported %d process starts, want at least %d", len(all), len(pids)+1)
	}
	checkGone(t, "at the end", all)
}
