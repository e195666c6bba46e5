//go:build unix

package zktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// process is the backend of a local server: one JVM in its own process group.
type process struct {
	java    string
	args    []string // everything after the java binary
	dir     string   // working directory, holding the log
	logPath string

	addr      string // client address
	jarsFrom  string // where the jars come from, for messages
	fixedPort bool   // the client port came from Config.ExtraConfig

	cmd    *exec.Cmd
	logf   *os.File
	done   chan struct{} // closed when cmd.Wait returns
	paused bool          // SIGSTOP sent, SIGCONT not yet
}

func (p *process) start(ctx context.Context) (<-chan struct{}, error) {
	if p.cmd != nil {
		select {
		case <-p.done: // it died on its own: clean up and start again
			if err := p.stop(false); err != nil {
				return nil, err
			}
		default:
			return nil, errors.New("already running")
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logf, "=== zktest: starting %s at %s\n", p.java, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.java, p.args...)
	cmd.Dir = p.dir
	cmd.Stdin = nil
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	if hook := startHook.Load(); hook != nil {
		(*hook)(cmd.Process.Pid)
	}
	done := make(chan struct{})
	go wait(cmd, done)
	p.cmd, p.logf, p.done = cmd, logf, done
	return done, nil
}

// startHook, when set, is called with the pid of every server process the
// package starts, so that tests can check that none outlives its Cluster.
var startHook atomic.Pointer[func(pid int)]

// wait reaps the server's process and closes done. Its goroutine lives as
// long as the server runs; see ServerWaitFunction.
func wait(cmd *exec.Cmd, done chan<- struct{}) {
	_ = cmd.Wait() // the exit status of a killed JVM says nothing useful
	close(done)
}

func (p *process) stop(graceful bool) error {
	if p.cmd == nil {
		return nil
	}
	pid := p.cmd.Process.Pid
	var err error
	if p.paused {
		// A stopped JVM would hold SIGTERM until SIGCONT.
		err = signalGroup(pid, syscall.SIGCONT)
		p.paused = false
	}
	if graceful {
		err = signalGroup(pid, syscall.SIGTERM)
		t := time.NewTimer(stopTimeout)
		select {
		case <-p.done:
		case <-t.C:
			err = errors.Join(err, fmt.Errorf("zktest: pid %d ignored SIGTERM for %v; killed", pid, stopTimeout))
		}
		t.Stop()
	}
	// Kill the whole group in any case, so nothing the JVM started survives.
	err = errors.Join(err, signalGroup(pid, syscall.SIGKILL))
	<-p.done
	err = errors.Join(err, p.logf.Close())
	p.cmd, p.logf, p.done = nil, nil, nil
	return err
}

// signalGroup sends sig to the process group led by pid. A group that is
// already gone is not an error.
func signalGroup(pid int, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("zktest: signal %v to process group %d: %w", sig, pid, err)
	}
	return nil
}

func (p *process) pause(pause bool) error {
	if p.pid() == 0 {
		if pause {
			return errors.New("not running")
		}
		return nil
	}
	if pause == p.paused {
		return nil
	}
	sig := syscall.SIGSTOP
	if !pause {
		sig = syscall.SIGCONT
	}
	if err := signalGroup(p.cmd.Process.Pid, sig); err != nil {
		return err
	}
	p.paused = pause
	return nil
}

func (p *process) logTail() string {
	return tailFile(p.logPath, logTailBytes)
}

func (p *process) explain() error {
	return diagnose(p.logTail(), p.java, p.jarsFrom, p.addr, p.fixedPort)
}

func (p *process) pid() int {
	if p.cmd == nil {
		return 0
	}
	select {
	case <-p.done: // exited and reaped; stop has not run yet
		return 0
	default:
		return p.cmd.Process.Pid
	}
}

func (p *process) close() error {
	return p.stop(false)
}

// ownerFile, in a cluster's temporary directory, holds the pid of the Go
// process that made it.
const ownerFile = "owner.pid"

// sweepStale removes the temporary directories of clusters whose Go process
// has died without closing them (a test binary killed by its timeout, or a
// shared server without Main). On Linux their servers died with it.
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "zktest-*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not ours, or being created
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			os.RemoveAll(dir)
		}
	}
}
