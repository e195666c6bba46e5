package interop_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/zktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// noLeaks starts the shared server, then checks at the very end of the test
// (after every other cleanup) that no goroutine started since is left.
func noLeaks(t *testing.T) *zktest.Cluster {
	t.Helper()
	zk := zktest.Shared(t)
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
	return zk
}

// TestHelper_Protocol checks the driver itself: replies, errors, bad
// arguments, and that Close ends the session and is idempotent.
func TestHelper_Protocol(t *testing.T) {
	zk := noLeaks(t)
	h := interop.Start(t, zk.ConnectString())
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()

	if out, err := h.Call(ctx, "ping"); err != nil || out != "pong" {
		t.Fatalf("ping = %q, %v", out, err)
	}
	v, err := h.CuratorVersion(ctx)
	if err != nil || !interop.VersionAtLeast(v, 5, 0) {
		t.Fatalf("version = %q, %v; want Curator 5 or later", v, err)
	}
	if _, err := h.Call(ctx, "no.such.command"); !errors.Is(err, interop.ErrJava) {
		t.Fatalf("unknown command: err = %v, want ErrJava", err)
	}
	if _, err := h.Call(ctx, "children", "/no/such/path"); !errors.Is(err, interop.ErrJava) {
		t.Fatalf("children of a missing path: err = %v, want ErrJava", err)
	}
	if _, err := h.Call(ctx, "isprotected", "two words"); !errors.Is(err, interop.ErrBadArg) {
		t.Fatalf("argument with a space: err = %v, want ErrBadArg", err)
	}
	if _, err := h.Call(ctx); !errors.Is(err, interop.ErrBadArg) {
		t.Fatalf("no command: err = %v, want ErrBadArg", err)
	}
	// The helper still answers after errors.
	if ok, err := h.Bool(ctx, "isprotected", "lock-0000000001"); err != nil || ok {
		t.Fatalf("isprotected of a plain name = %v, %v", ok, err)
	}

	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := h.Call(ctx, "ping"); !errors.Is(err, interop.ErrExited) {
		t.Fatalf("ping after Close: err = %v, want ErrExited", err)
	}
}

// TestHelper_TimedOutCallWedges: a call whose ctx ends before its reply
// abandons the helper, later calls say so at once, and Close still ends the
// process.
func TestHelper_TimedOutCallWedges(t *testing.T) {
	zk := noLeaks(t)
	holder := interop.Start(t, zk.ConnectString())
	waiter := interop.Start(t, zk.ConnectString())
	path := "/interop-driver/" + t.Name()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()

	if ok, err := holder.Bool(ctx, "mutex.acquire", path, "5000"); err != nil || !ok {
		t.Fatalf("holder acquire = %v, %v", ok, err)
	}
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := waiter.Call(short, "mutex.acquire", path, "10000")
	cancelShort()
	if !errors.Is(err, interop.ErrWedged) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire past its ctx: err = %v, want ErrWedged and DeadlineExceeded", err)
	}
	if _, err := waiter.Call(ctx, "ping"); !errors.Is(err, interop.ErrWedged) {
		t.Fatalf("ping after a wedge: err = %v, want ErrWedged", err)
	}
	if err := waiter.Close(); err != nil {
		t.Fatalf("Close of a wedged helper: %v", err)
	}
	if _, err := holder.Call(ctx, "mutex.release", path); err != nil {
		t.Fatalf("holder release: %v", err)
	}
}
