package integration

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/leaderlatch"
)

// newLatch makes a latch; the cleanup closes it.
func newLatch(t testing.TB, c *framework.Client, path string, opts ...leaderlatch.Option) *leaderlatch.Latch {
	t.Helper()
	l, err := leaderlatch.New(c, path, opts...)
	if err != nil {
		t.Fatalf("leaderlatch.New: %v", err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}

// startLatch makes and starts a latch.
func startLatch(t testing.TB, c *framework.Client, path string, opts ...leaderlatch.Option) *leaderlatch.Latch {
	t.Helper()
	l := newLatch(t, c, path, opts...)
	if err := l.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return l
}

// awaitLatch waits until l leads, failing the test after d.
func awaitLatch(t testing.TB, l *leaderlatch.Latch, d time.Duration) *leaderlatch.Leadership {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	ld, err := l.Await(ctx)
	if err != nil {
		t.Fatalf("Await (%s): %v", l.ID(), err)
	}
	return ld
}

// leaders returns the latches that report leading now.
func latchLeaders(ls []*leaderlatch.Latch) []*leaderlatch.Latch {
	var out []*leaderlatch.Latch
	for _, l := range ls {
		if l.HasLeadership() {
			out = append(out, l)
		}
	}
	return out
}

var latchNode = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-latch-\d{10}$`)

// TestLeaderLatch_LeadsInStartOrder is Curator's testBasic: candidates
// lead in the order they started, one at a time, and the leadership moves
// to the next when the leader closes; the old leader's Lost() has closed
// by the time the next one is elected.
func TestLeaderLatch_LeadsInStartOrder(t *testing.T) {
	path := testPath(t)
	obs := newClient(t)
	clients := []*framework.Client{newClient(t), newClient(t), newClient(t)}
	var latches []*leaderlatch.Latch
	for i := range 5 {
		latches = append(latches, startLatch(t, clients[i%3], path, leaderlatch.WithID(fmt.Sprintf("c%d", i))))
	}
	var prev *leaderlatch.Leadership
	var prevToken int64
	for i, l := range latches {
		ld := awaitLatch(t, l, 10*time.Second)
		if prev != nil && !isClosed(prev.Lost()) {
			t.Errorf("c%d was elected while c%d's Lost() was still open", i, i-1)
		}
		if got := latchLeaders(latches[i:]); len(got) != 1 || got[0] != l {
			t.Errorf("after c%d's election %d latches report leading", i, len(got))
		}
		tok, err := ld.FencingToken()
		if err != nil || tok <= prevToken {
			t.Errorf("c%d's fencing token = %d, %v; want more than %d", i, tok, err, prevToken)
		}
		_, name := framework.SplitPath(ld.Node())
		if !latchNode.MatchString(name) {
			t.Errorf("leader node %q does not have Curator's layout", name)
		}
		data, stat, err := obs.GetData().ForPath(t.Context(), ld.Node())
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != l.ID() || stat.EphemeralOwner != clients[i%3].SessionID() {
			t.Errorf("node data %q owner 0x%x; want %q of session 0x%x", data, stat.EphemeralOwner, l.ID(), clients[i%3].SessionID())
		}
		prev, prevToken = ld, tok
		if err := l.Close(t.Context()); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if l.HasLeadership() || !isClosed(ld.Lost()) {
			t.Errorf("c%d still reports leading after Close", i)
		}
	}
	eventually(t, 10*time.Second, func() bool {
		st, err := obs.CheckExists().ForPath(t.Context(), path)
		return err == nil && st == nil
	}, "the empty election's CONTAINER parent is reaped")
}
