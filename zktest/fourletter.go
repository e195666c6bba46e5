package zktest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"
)

// fourLetterTimeout bounds one four-letter-word exchange.
const fourLetterTimeout = 3 * time.Second

// pollInterval is how often a starting server is asked whether it is ready.
const pollInterval = 25 * time.Millisecond

// pollTimeout bounds the first readiness poll. A server that is still
// starting can accept a connection and never answer it, so a poll must give
// up soon; each poll that times out doubles the bound, for slow machines.
const pollTimeout = 250 * time.Millisecond

// fourLetter sends cmd to the server at addr and returns the whole answer.
func fourLetter(ctx context.Context, addr, cmd string) (string, error) {
	if len(cmd) != 4 {
		return "", fmt.Errorf("zktest: four-letter word %q is not four letters", cmd)
	}
	ctx, cancel := context.WithTimeout(ctx, fourLetterTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("zktest: %s to %s: %w", cmd, addr, err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return "", fmt.Errorf("zktest: %s to %s: %w", cmd, addr, err)
	}
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", fmt.Errorf("zktest: %s to %s: %w", cmd, addr, err)
	}
	b, err := io.ReadAll(conn)
	if err != nil && len(b) == 0 {
		return "", fmt.Errorf("zktest: %s to %s: %w", cmd, addr, err)
	}
	return string(b), nil
}

// srvrMode returns the "Mode:" value of a srvr answer ("leader", "follower",
// "standalone", ...), or "" if the server is not serving.
func srvrMode(answer string) string {
	s := bufio.NewScanner(strings.NewReader(answer))
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "Mode:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// serving reports whether a srvr answer comes from a server that serves
// clients: a standalone server, or an ensemble member that has joined a quorum.
func serving(answer string) bool {
	switch srvrMode(answer) {
	case "standalone", "leader", "follower", "observer":
		return true
	}
	return false
}

// waitServing polls addr with srvr until it serves clients, ctx ends, or
// exited is closed (the process died). Its error includes the last answer.
func waitServing(ctx context.Context, addr string, exited <-chan struct{}) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	// A poll ends when the process does: another process may hold the
	// port and accept the poll without ever answering it.
	live, stop := context.WithCancel(ctx)
	defer stop()
	if exited != nil {
		go func() {
			select {
			case <-exited:
				stop()
			case <-live.Done():
			}
		}()
	}
	var last error
	timeout := pollTimeout
	for {
		pctx, cancel := context.WithTimeout(live, timeout)
		answer, err := fourLetter(pctx, addr, "srvr")
		cancel()
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
			timeout = min(2*timeout, fourLetterTimeout)
		}
		switch {
		case err != nil && live.Err() != nil && ctx.Err() == nil:
			// cut short because the process exited; keep the last answer
		case err != nil:
			last = err
		case serving(answer):
			return nil
		default:
			last = fmt.Errorf("srvr answered %q", strings.TrimSpace(answer))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("zktest: %s not serving: %w (last: %v)", addr, ctx.Err(), last)
		case <-exited:
			return fmt.Errorf("zktest: server process for %s exited during start (last: %v)", addr, last)
		case <-t.C:
		}
	}
}
