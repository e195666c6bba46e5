package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
)

// errLost reports that the lock held for a command was lost.
var errLost = errors.New("lock lost")

// lostCleanupBound is how long curatorctl waits, once a lost hold's
// command has ended, for the release and the close of the client: long
// enough for a connection that came back, short beside a session timeout.
// A server that does not answer (the usual cause of the loss) is not waited
// for: it deletes the lock node when the session expires.
const lostCleanupBound = 2 * time.Second

// cmdLock takes the mutex at PATH, runs CMD while holding it, and
// releases it when CMD ends: the etcdctl lock of ZooKeeper. CMD gets the
// hold's fencing token in CURATOR_FENCING_TOKEN and its node in
// CURATOR_LOCK_NODE. If the hold is lost (its session, or the connection
// under the client's error policy), CMD gets SIGTERM, then SIGKILL after
// --grace (with the processes it started: see prepareGroup), and
// curatorctl exits with exitLost once CMD has ended, waiting at most
// lostCleanupBound for the release. A signal to curatorctl goes to
// CMD the same way; curatorctl then releases (for at most --timeout) and
// exits with CMD's status.
func cmdLock(ctx context.Context, g *global, args []string, stdout, stderr io.Writer) error {
	if len(args) < 3 || args[1] != "--" {
		return fmt.Errorf("%w: lock: want \"lock PATH -- CMD [ARGS...]\" or \"lock holders PATH\"", errUsage)
	}
	p, argv := args[0], args[2:]
	// A command that cannot run is found out before the lock is taken,
	// with the shell's status: nothing waits in line for it.
	if _, err := exec.LookPath(argv[0]); err != nil {
		return cannotRun(argv[0], err)
	}
	c, err := open(ctx, g, p)
	if err != nil {
		return err
	}
	m, err := mutex.New(c, p)
	if err != nil {
		c.Close()
		return err
	}
	h, err := m.Acquire(ctx)
	if err != nil {
		cleanup(c, nil, g.timeout, stderr)
		return fmt.Errorf("lock %s: %w", p, err)
	}
	token, err := h.FencingToken()
	if err != nil {
		cleanup(c, h, g.timeout, stderr)
		return fmt.Errorf("lock %s: fencing token: %w", p, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, authEnv+"=") }),
		"CURATOR_FENCING_TOKEN="+strconv.FormatInt(token, 10),
		"CURATOR_LOCK_NODE="+h.Node())
	group := prepareGroup(cmd)
	if err := cmd.Start(); err != nil {
		cleanup(c, h, g.timeout, stderr)
		return cannotRun(argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var runErr error
	select {
	case runErr = <-done:
	case <-h.Lost():
		stopCommand(cmd, group, done, g.grace)
		cleanup(c, h, lostCleanupBound, stderr)
		return fmt.Errorf("%w: %s (its session ended, or the connection under the error policy); the command was stopped", errLost, p)
	case <-ctx.Done():
		runErr = stopCommand(cmd, group, done, g.grace)
	}
	cleanup(c, h, g.timeout, stderr)
	var exit *exec.ExitError
	if errors.As(runErr, &exit) {
		if code := exit.ExitCode(); code >= 0 {
			return exitCode(code)
		}
		return exitCode(128 + int(exit.Sys().(syscall.WaitStatus).Signal()))
	}
	return runErr
}

// cannotRun is the error of a command that could not start: exit status
// 127 if it is not found, and 126 if it is found but cannot run (not
// executable, a directory, not a program), as the shells and timeout(1)
// give them.
func cannotRun(name string, err error) error {
	code := exitCannotRun
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		code = exitNotFound
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is named once, below
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		err = ee.Err
	}
	return &statusError{code: code, err: fmt.Errorf("lock: cannot run %s: %w", name, err)}
}

// cleanup releases h (if not nil) and closes c, waiting for both at most
// bound: a server that does not answer must not keep curatorctl from
// exiting, and the process's exit closes the connection anyway. A lost
// hold is released only if the client is connected again: otherwise the
// delete cannot reach the server, which deletes the node when the
// session expires.
func cleanup(c *framework.Client, h *mutex.Hold, bound time.Duration, stderr io.Writer) {
	lost := h != nil && isClosed(h.Lost())
	if lost && !c.State().IsConnected() {
		h = nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if h != nil {
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			err := h.Release(ctx)
			cancel()
			if err != nil && !lost {
				fmt.Fprintf(stderr, "curatorctl: release %s: %v\n", h.Node(), err)
			}
		}
		c.Close()
	}()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		if h != nil && !lost {
			fmt.Fprintf(stderr, "curatorctl: release of %s unfinished after %v; the server deletes it when the session expires\n", h.Node(), bound)
		}
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// stopCommand sends SIGTERM, then SIGKILL after grace, and returns the
// command's end. If the command leads a process group (prepareGroup), the
// signals go to the whole group, and what is left of it when grace ends,
// after the command itself ended, gets SIGKILL too: nothing it started
// runs on without the lock.
func stopCommand(cmd *exec.Cmd, group bool, done <-chan error, grace time.Duration) error {
	deadline := time.Now().Add(grace)
	signal := func(sig syscall.Signal) {
		if !group || !signalGroup(cmd.Process.Pid, sig) {
			cmd.Process.Signal(sig)
		}
	}
	signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	var err error
	select {
	case err = <-done:
	case <-t.C:
		signal(syscall.SIGKILL)
		err = <-done
	}
	if group && !awaitGroup(cmd.Process.Pid, deadline) {
		signalGroup(cmd.Process.Pid, syscall.SIGKILL)
	}
	return err
}
