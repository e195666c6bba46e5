package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
)

// refusingAddr returns a loopback address that refuses connections: a TCP
// socket bound to a free port and not listening, held until the test ends
// so that no other process can take the port meanwhile.
func refusingAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}

// refusalWarned reports whether the log has a Warn (or higher) record
// naming addr and the refusal.
func refusalWarned(logs *logCapture, addr string) bool {
	for _, r := range logs.records() {
		if r.level >= slog.LevelWarn && r.attrs["server"] == addr && strings.Contains(r.attrs["err"], "connection refused") {
			return true
		}
	}
	return false
}

// TestStart_RefusedAddressNamesTheRefusal: Start against an address that
// refuses connections, with a ctx that ends, returns an error that matches
// both the ctx's error and the refusal (syscall.ECONNREFUSED) and says
// "connection refused"; the client's logger got a warning naming the
// server. The ctx's deadline, longer than the connection timeout, is the
// one that ends the wait.
func TestStart_RefusedAddressNamesTheRefusal(t *testing.T) {
	addr := refusingAddr(t)
	logs := &logCapture{}
	c, err := builder(t, addr).ConnectionTimeout(500 * time.Millisecond).Logger(slog.New(logs)).Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	err = c.Start(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, syscall.ECONNREFUSED) ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Start against a refusing %s = %v; want the ctx's deadline and the refusal, both in the chain and the text", addr, err)
	}
	if errors.Is(err, framework.ErrConnectionTimeout) {
		t.Errorf("Start with a deadline = %v; want the deadline to bound the wait, not the connection timeout", err)
	}
	if !refusalWarned(logs, addr) {
		t.Errorf("no Warn record naming %s and the refusal; the log: %v", addr, logs.records())
	}
}

// TestStart_BackgroundGivesUpOnRefusedAddress: Start with a ctx that can
// never end, against an address that refuses connections, returns after
// the connection timeout with ErrConnectionTimeout wrapping the refusal,
// rather than waiting forever.
func TestStart_BackgroundGivesUpOnRefusedAddress(t *testing.T) {
	addr := refusingAddr(t)
	logs := &logCapture{}
	c, err := builder(t, addr).ConnectionTimeout(time.Second).Logger(slog.New(logs)).Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	done := make(chan error, 1)
	go func() { done <- c.Start(context.Background()) }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		c.Close() // ends Start with ErrClosed
		<-done
		t.Fatalf("Start(context.Background()) against a refusing %s still waits a minute later", addr)
	}
	if !errors.Is(err, framework.ErrConnectionTimeout) || !errors.Is(err, syscall.ECONNREFUSED) ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Start(context.Background()) against a refusing %s = %v; want ErrConnectionTimeout wrapping the refusal", addr, err)
	}
	if !refusalWarned(logs, addr) {
		t.Errorf("no Warn record naming %s and the refusal; the log: %v", addr, logs.records())
	}
}

// TestStart_CancellableCtxWaitsPastConnectionTimeout: with a ctx that can
// end but has no deadline (a signal's, t.Context()), Start against a
// refusing address keeps waiting past the connection timeout (the
// listener hears Suspended, then Lost) for a server that may still come
// up, and the cancel ends it with an error naming the refusal.
func TestStart_CancellableCtxWaitsPastConnectionTimeout(t *testing.T) {
	addr := refusingAddr(t)
	var rec fwRecorder
	c, err := builder(t, addr).ConnectionTimeout(200 * time.Millisecond).SessionTimeout(time.Second).
		Listener(rec.listen).Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	rec.expect(t, 30*time.Second, fwS, fwL)
	select {
	case err := <-done:
		t.Fatalf("Start with a cancellable ctx returned %v before the ctx ended", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Start after its ctx was cancelled = %v; want context.Canceled and the refusal", err)
	}
}
