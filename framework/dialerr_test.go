package framework

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

// countingHandler counts slog records by level.
type countingHandler struct {
	mu     sync.Mutex
	counts map[slog.Level]int
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *countingHandler) WithGroup(string) slog.Handler            { return h }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[r.Level]++
	return nil
}

// TestDialLog_WarnsOncePerServerThenKeepsCount: a server that keeps
// refusing is logged at Warn at its first failure, not at each; another
// server gets its own line; a success clears the error, logs at Info, and
// the next failure is logged again at once.
func TestDialLog_WarnsOncePerServerThenKeepsCount(t *testing.T) {
	h := &countingHandler{counts: map[slog.Level]int{}}
	logger := slog.New(h)
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	fail := true
	d := newDialLog()
	dial := d.wrap(func(string, string, time.Duration) (net.Conn, error) {
		if fail {
			return nil, refused
		}
		c1, c2 := net.Pipe()
		c2.Close()
		return c1, nil
	}, logger)
	for range 5 {
		if _, err := dial("tcp", "a:2181", time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial = %v; want the dialer's error unchanged", err)
		}
	}
	dial("tcp", "b:2181", time.Second)
	if got := h.counts[slog.LevelWarn]; got != 2 {
		t.Errorf("%d Warn records after 5 failures on a and 1 on b; want 2, one per server", got)
	}
	if !errors.Is(d.last(), syscall.ECONNREFUSED) {
		t.Errorf("last() = %v; want the refusal", d.last())
	}
	fail = false
	c, err := dial("tcp", "a:2181", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if d.last() != nil || h.counts[slog.LevelInfo] != 1 {
		t.Errorf("after a success: last() = %v, %d Info records; want nil and 1", d.last(), h.counts[slog.LevelInfo])
	}
	fail = true
	dial("tcp", "a:2181", time.Second)
	if got := h.counts[slog.LevelWarn]; got != 3 {
		t.Errorf("%d Warn records after a's new failure; want 3", got)
	}
}
