package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/go-curator/curator/recipes/mutex"
)

// errLost reports that the lock held for a command was lost.
var errLost = errors.New("lock lost")

// cmdLock takes the mutex at PATH, runs CMD while holding it, and
// releases it when CMD ends: the etcdctl lock of ZooKeeper. CMD gets the
// hold's fencing token in CURATOR_FENCING_TOKEN and its node in
// CURATOR_LOCK_NODE. If the hold is lost (its session, or the connection
// under the client's error policy), CMD gets SIGTERM, then SIGKILL after
// --grace, and curatorctl exits 3. A signal to curatorctl goes to CMD the
// same way; curatorctl then releases and exits with CMD's status.
func cmdLock(ctx context.Context, g *global, args []string, stdout, stderr io.Writer) error {
	if len(args) < 3 || args[1] != "--" {
		return fmt.Errorf("%w: lock: want \"lock PATH -- CMD [ARGS...]\" or \"lock holders PATH\"", errUsage)
	}
	p, argv := args[0], args[2:]
	if _, err := exec.LookPath(argv[0]); err != nil {
		return fmt.Errorf("%w: lock: %w", errUsage, err)
	}
	c, err := open(ctx, g, p)
	if err != nil {
		return err
	}
	defer c.Close()
	m, err := mutex.New(c, p)
	if err != nil {
		return err
	}
	h, err := m.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("lock %s: %w", p, err)
	}
	token, err := h.FencingToken()
	if err != nil {
		h.Release(context.WithoutCancel(ctx))
		return fmt.Errorf("lock %s: fencing token: %w", p, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = append(os.Environ(),
		"CURATOR_FENCING_TOKEN="+strconv.FormatInt(token, 10),
		"CURATOR_LOCK_NODE="+h.Node())
	if err := cmd.Start(); err != nil {
		h.Release(context.WithoutCancel(ctx))
		return fmt.Errorf("lock %s: %w", p, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var runErr error
	lost := false
	select {
	case runErr = <-done:
	case <-h.Lost():
		lost = true
		runErr = stopCommand(cmd, done, g.grace)
	case <-ctx.Done():
		runErr = stopCommand(cmd, done, g.grace)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.timeout)
	defer cancel()
	if rerr := h.Release(rctx); rerr != nil && !lost {
		fmt.Fprintf(stderr, "curatorctl: release %s: %v\n", p, rerr)
	}
	if lost {
		return fmt.Errorf("%w: %s (its session ended, or the connection under the error policy); the command was stopped", errLost, p)
	}
	var exit *exec.ExitError
	if errors.As(runErr, &exit) {
		if code := exit.ExitCode(); code >= 0 {
			return exitCode(code)
		}
		return exitCode(128 + int(exit.Sys().(syscall.WaitStatus).Signal()))
	}
	return runErr
}

// stopCommand sends SIGTERM, then SIGKILL after grace, and returns the
// command's end.
func stopCommand(cmd *exec.Cmd, done <-chan error, grace time.Duration) error {
	cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		cmd.Process.Kill()
		return <-done
	}
}
