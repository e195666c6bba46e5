package integration

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// Issue 30, items 3 and 4: nothing but the lock's own queue makes a
// holder. A waiter whose node another session deleted holds nothing, and a
// grant made by anyone but the predecessor's own session grants nothing.

// acquireAsync starts m.Acquire on a goroutine and returns where its result
// arrives.
func acquireAsync(ctx context.Context, m *mutex.Mutex) <-chan acquired {
	ch := make(chan acquired, 1)
	go func() {
		h, err := m.Acquire(ctx)
		ch <- acquired{h, err}
	}()
	return ch
}

type acquired struct {
	h   *mutex.Hold
	err error
}

// nodeOf returns the name of the lock node of session id under path, or "".
func nodeOf(t *testing.T, c *framework.Client, path string, id int64) string {
	t.Helper()
	for _, k := range children(t, c, path) {
		st, err := c.CheckExists().ForPath(t.Context(), path+"/"+k)
		if err == nil && st != nil && st.EphemeralOwner == id {
			return k
		}
	}
	return ""
}

// TestGrant_DeletedWaiterQueuesAgain: P holds, W waits behind P, X behind
// W. Another session (an operator) deletes W's node; X reads again and
// names P. When P releases (with a grant, or plainly, when P was granted by
// a read that listed nobody after it), only X holds: W finds its node gone
// and queues again, behind X, and holds after X with a token of its own.
// Before the fix both W and X held, with the same token after a grant.
func TestGrant_DeletedWaiterQueuesAgain(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grant bool // P releases with a grant
	}{{"grant", true}, {"plain release", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			path := testPath(t)
			pc, wc, xc, op := newClient(t), newClient(t), newClient(t), newClient(t)
			var p *mutex.Hold
			if tc.grant {
				p = handedOver(t, op, pc, path) // granted by a release: releases with a grant
			} else {
				var err error
				if p, err = newMutex(t, pc, path).Acquire(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if p == nil {
				t.FailNow()
			}
			_, pName := framework.SplitPath(p.Node())
			wRes := acquireAsync(ctx, newMutex(t, wc, path))
			eventually(t, 10*time.Second, func() bool { return watching(t, wc.SessionID(), pName) }, "W watches P")
			wName := nodeOf(t, op, path, wc.SessionID())
			xRes := acquireAsync(ctx, newMutex(t, xc, path))
			eventually(t, 10*time.Second, func() bool { return watching(t, xc.SessionID(), wName) }, "X watches W")

			if err := op.Delete().ForPath(ctx, path+"/"+wName); err != nil {
				t.Fatal(err)
			}
			eventually(t, 10*time.Second, func() bool { return watching(t, xc.SessionID(), pName) }, "X watches P")
			if err := p.Release(ctx); err != nil {
				t.Fatal(err)
			}
			x := <-xRes
			if x.err != nil {
				t.Fatal(x.err)
			}
			xTok, err := x.h.FencingToken()
			if err != nil {
				t.Fatal(err)
			}
			// W either held (the bug) or queues again behind X.
			var w acquired
			requeued := false
			eventually(t, 10*time.Second, func() bool {
				select {
				case w = <-wRes:
					return true
				default:
				}
				n := nodeOf(t, op, path, wc.SessionID())
				requeued = n != "" && n != wName
				return requeued
			}, "W holds or queues again")
			if !requeued {
				tok, terr := w.h.FencingToken()
				t.Fatalf("W, whose node another session deleted, holds beside X (W: err %v token %d (%v); X: token %d)", w.err, tok, terr, xTok)
			}
			select {
			case w = <-wRes:
				t.Fatalf("W's acquire returned while X holds: %v", w.err)
			default:
			}
			if err := x.h.Release(ctx); err != nil {
				t.Fatal(err)
			}
			w = <-wRes
			if w.err != nil {
				t.Fatal(w.err)
			}
			wTok, err := w.h.FencingToken()
			if err != nil {
				t.Fatal(err)
			}
			if wTok <= xTok {
				t.Fatalf("W's token %d after X's %d: tokens must rise", wTok, xTok)
			}
			if err := w.h.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if kids := children(t, op, path); len(kids) != 0 {
				t.Fatalf("nodes left: %q", kids)
			}
		})
	}
}

// TestGrant_ReadOnlyClientCannotForgeAGrant: the lock's parent gives the
// lock's users every right and everyone else READ. A client with READ only
// lists the queue and creates <grants>/<holder's node> (the grants
// directory is open by default), before the waiter queues or while it
// waits. The waiter must not hold until the holder releases; the holder's
// release (whose grant create meets the forged node) still hands it over.
func TestGrant_ReadOnlyClientCannotForgeAGrant(t *testing.T) {
	const cred = "locker:secret"
	for _, tc := range []struct {
		name   string
		before bool // the forged grant exists before the waiter queues
	}{{"while the waiter waits", false}, {"before the waiter queues", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			path := testPath(t)
			srv := zktest.Shared(t).ConnectString()
			acl := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: digestID(cred)}, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
			locker := func() *framework.Client {
				return startClient(t, builder(t, srv).Authorization("digest", []byte(cred)).ACL(acl...))
			}
			hc, wc := locker(), locker()
			forger := newClient(t) // no credentials: READ on the lock, nothing more
			// The grants directory as a client with the default (open) ACL made it.
			if _, err := forger.Create().ForPath(ctx, grantsDir, nil); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				t.Fatal(err)
			}
			if _, err := hc.Create().CreatingParentsIfNeeded().WithACL(acl...).ForPath(ctx, path, nil); err != nil {
				t.Fatal(err)
			}
			h := handedOver(t, hc, hc, path)
			if h == nil {
				t.FailNow()
			}
			_, hName := framework.SplitPath(h.Node())
			forge := func() {
				t.Helper()
				// The forger can read the queue...
				if kids := children(t, forger, path); len(kids) == 0 {
					t.Fatal("the read-only client cannot list the queue")
				}
				// ...and may not touch it...
				if err := forger.Delete().ForPath(ctx, h.Node()); !errors.Is(err, zk.ErrNoAuth) {
					t.Fatalf("the read-only client's delete of the holder's node = %v, want NoAuth", err)
				}
				// ...but can create in the grants directory.
				if _, err := forger.Create().CreatingParentsIfNeeded().WithMode(framework.Ephemeral).
					ForPath(ctx, grantsDir+"/"+hName, nil); err != nil {
					t.Fatalf("forging the grant: %v", err)
				}
			}
			if tc.before {
				forge()
			}
			wRes := acquireAsync(ctx, newMutex(t, wc, path))
			eventually(t, 10*time.Second, func() bool { return watching(t, wc.SessionID(), hName) }, "the waiter watches the holder")
			if !tc.before {
				forge()
			}
			// Give a forged grant time to act (it did within milliseconds before
			// the fix); the waiter must still be waiting.
			time.Sleep(500 * time.Millisecond)
			select {
			case w := <-wRes:
				t.Fatalf("the waiter holds beside the holder on a forged grant (err %v)", w.err)
			default:
			}
			hTok, err := h.FencingToken()
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Release(ctx); err != nil {
				t.Fatal(err)
			}
			w := <-wRes
			if w.err != nil {
				t.Fatal(w.err)
			}
			wTok, err := w.h.FencingToken()
			if err != nil {
				t.Fatal(err)
			}
			if wTok <= hTok {
				t.Fatalf("the waiter's token %d after the holder's %d", wTok, hTok)
			}
			if err := w.h.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if kids := children(t, hc, path); len(kids) != 0 {
				t.Fatalf("nodes left: %q", kids)
			}
		})
	}
}

// TestGrant_RefusedGrantsDirectoryLeavesNoWatches: another identity made
// the namespace's grants directory, with an ACL that refuses our creates.
// A waiter can clear its exists watch on a grant only by creating the grant,
// so on such a directory the client must not watch grants at all: twenty
// cancelled acquires leave no watch on the server, the client says so once
// in its log, and the lock still works (by reads, as Curator's does).
func TestGrant_RefusedGrantsDirectoryLeavesNoWatches(t *testing.T) {
	const cred = "owner:secret"
	ctx := t.Context()
	srv := zktest.Shared(t).ConnectString()
	ns := "it-refused-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	other := startClient(t, builder(t, srv).Namespace(ns).Authorization("digest", []byte(cred)))
	acl := []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: digestID(cred)}, {Perms: zk.PermRead, Scheme: "world", ID: "anyone"}}
	if _, err := other.Create().WithACL(acl...).ForPath(ctx, grantsDir, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Delete().ForPath(context.Background(), grantsDir) })
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a := startClient(t, builder(t, srv).Namespace(ns).Logger(logger))
	b := startClient(t, builder(t, srv).Namespace(ns).Logger(logger))
	path := "/lock"
	h, err := newMutex(t, a, path).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mb := newMutex(t, b, path)
	for range 20 {
		actx, cancel := context.WithCancel(ctx)
		res := acquireAsync(actx, mb)
		eventually(t, 10*time.Second, func() bool { return len(children(t, a, path)) == 2 }, "b's contender queued")
		eventually(t, 10*time.Second, func() bool { return watching(t, b.SessionID(), h.Node()) }, "b's contender watches the holder")
		cancel()
		if r := <-res; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("b's acquire = %v", r.err)
		}
	}
	for _, p := range wchc(t, b.SessionID()) {
		if strings.Contains(p, grantsDir) {
			t.Errorf("a watch on a grant stays on b's session: %s", p)
		}
	}
	if n := strings.Count(logs.String(), "grants disabled"); n != 1 {
		t.Errorf("%d log lines say grants are disabled, want 1:\n%s", n, logs.String())
	}
	// The lock still hands over.
	res := acquireAsync(ctx, mb)
	eventually(t, 10*time.Second, func() bool { return len(children(t, a, path)) == 2 }, "b's contender queued")
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	if err := r.h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, a, path); len(kids) != 0 {
		t.Fatalf("nodes left: %q", kids)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
