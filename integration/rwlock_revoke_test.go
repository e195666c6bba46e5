package integration

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/rwlock"
)

// revokedHolds collects the holds a revocation listener was called with.
type revokedHolds chan *rwlock.Hold

func (r revokedHolds) listener(h *rwlock.Hold) { r <- h }

// next waits for the listener's next call.
func (r revokedHolds) next(t testing.TB, who string) *rwlock.Hold {
	t.Helper()
	select {
	case h := <-r:
		return h
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: the revocation listener was not called", who)
		return nil
	}
}

func newRevocableRW(t testing.TB, c *framework.Client, path string, opts ...rwlock.Option) *rwlock.Lock {
	t.Helper()
	l, err := rwlock.New(c, path, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestRWLock_RevokeWriteHolderReleasesInListener: a revocable write holder
// writes empty node data; a revoke from another client calls its listener
// with its hold, the listener releases that hold itself, and a writer
// waiting in another client gets the lock; no node is left.
func TestRWLock_RevokeWriteHolderReleasesInListener(t *testing.T) {
	t.Parallel()
	path := testPath(t)
	c, other := newClient(t), newClient(t)
	released := make(chan error, 1)
	var wh *rwlock.Hold
	holder := newRevocableRW(t, c, path, rwlock.WithWriteRevocation(func(h *rwlock.Hold) {
		if h != wh {
			released <- errors.New("the listener got another hold than the one revoked")
			return
		}
		released <- h.Release(context.Background())
	}))
	var err error
	if wh, err = holder.WriteLock().Acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	data, _, err := c.GetData().ForPath(t.Context(), wh.Node())
	if err != nil || len(data) != 0 {
		t.Fatalf("revocable write holder's node data %q (err %v); want empty, as Curator's", data, err)
	}
	waiter := holdAsync(t.Context(), newRW(t, other, path).WriteLock())
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == 2 }, "the second writer queued")

	if err := rwlock.Revoke(t.Context(), other, wh.Node()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-released:
		if err != nil {
			t.Fatalf("the listener's release of the revoked hold: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the revocation listener did not release the hold (not called, or its release hung)")
	}
	if holder.WriteLock().IsAcquiredInThisProcess() {
		t.Fatal("the revoked holder still holds the write lock")
	}
	waiter.finish(t, "the waiting writer")
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == 0 }, "no node left")
	// The Lock stays usable and revocable after a revoked hold.
	h2, ok, err := holder.WriteLock().TryAcquire(t.Context(), 5*time.Second)
	if err != nil || !ok {
		t.Fatalf("write acquire after the revoked release = %v, %v", ok, err)
	}
	if err := h2.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestRWLock_RevokeOneReaderOfTwo: two revocable readers hold the read
// lock at once; a revoke of one's node calls that reader's listener with
// its own hold, and not the other's; a plain (not revocable) reader's node
// keeps the client's data, and a revoke leaves it holding.
func TestRWLock_RevokeOneReaderOfTwo(t *testing.T) {
	t.Parallel()
	path := testPath(t)
	ca, cb, cp := newClient(t), newClient(t), newClient(t)
	revA, revB := make(revokedHolds, 1), make(revokedHolds, 1)
	ra := newRevocableRW(t, ca, path, rwlock.WithReadRevocation(revA.listener))
	rb := newRevocableRW(t, cb, path, rwlock.WithReadRevocation(revB.listener), rwlock.WithData([]byte("ignored")))
	plain := newRevocableRW(t, cp, path, rwlock.WithData([]byte("plain")))
	ha, err := ra.ReadLock().Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	hb, err := rb.ReadLock().Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	hp, err := plain.ReadLock().Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if data, _, err := cb.GetData().ForPath(t.Context(), hb.Node()); err != nil || len(data) != 0 {
		t.Fatalf("revocable reader with WithData: node data %q (err %v); want empty, as Curator's", data, err)
	}
	parts, err := plain.ReadLock().Participants(t.Context())
	if err != nil || len(parts) != 3 || parts[1] != hb.Node() {
		t.Fatalf("read participants %q, %v; want 3 with B's %s second", parts, err, hb.Node())
	}
	for _, n := range []string{parts[1], hp.Node()} {
		if err := rwlock.Revoke(t.Context(), cp, n); err != nil {
			t.Fatal(err)
		}
	}
	if got := revB.next(t, "reader B"); got != hb {
		t.Fatalf("reader B's listener got hold %v; want B's %v", got.Node(), hb.Node())
	}
	if err := hb.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-revA:
		t.Fatalf("reader A's listener was called for %s; only B was revoked", got.Node())
	default:
	}
	if err := hp.Check(); err != nil {
		t.Fatalf("the plain reader after a revoke of its node: %v; want still held", err)
	}
	if got := children(t, ca, path); len(got) != 2 {
		t.Fatalf("after B's release %s holds %q; want A's and the plain reader's", path, got)
	}
	for _, h := range []*rwlock.Hold{ha, hp} {
		if err := h.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRWLock_RevokeWhileWaitingActsOnHold: a revoke written to a
// revocable reader's node while it waits behind a writer calls its
// listener once it holds, with that hold.
func TestRWLock_RevokeWhileWaitingActsOnHold(t *testing.T) {
	t.Parallel()
	path := testPath(t)
	c, other := newClient(t), newClient(t)
	w, err := newRW(t, c, path).WriteLock().Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	revoked := make(revokedHolds, 1)
	reader := newRevocableRW(t, other, path, rwlock.WithReadRevocation(revoked.listener)).ReadLock()
	got := make(chan *rwlock.Hold, 1)
	go func() {
		h, err := reader.Acquire(t.Context())
		if err != nil {
			t.Error(err)
		}
		got <- h
	}()
	var waiting string
	eventually(t, 10*time.Second, func() bool {
		parts, err := reader.Participants(t.Context())
		if err == nil && len(parts) == 1 {
			waiting = parts[0]
		}
		return waiting != ""
	}, "the reader queued")
	if err := rwlock.Revoke(t.Context(), c, waiting); err != nil {
		t.Fatal(err)
	}
	select {
	case h := <-revoked:
		t.Fatalf("the listener ran for %s while it waited", h.Node())
	default:
	}
	if err := w.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	rh := <-got
	if rh == nil {
		t.FailNow()
	}
	if h := revoked.next(t, "reader revoked while waiting"); h != rh || h.Node() != waiting {
		t.Fatalf("the listener got %s; want the new hold of %s", h.Node(), waiting)
	}
	if err := rh.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestRWLock_RevokeBadInput: Revoke of bad input returns ErrInvalidArgument
// and writes nothing; a node already gone is not an error; a nil listener
// is refused by New.
func TestRWLock_RevokeBadInput(t *testing.T) {
	t.Parallel()
	path := testPath(t)
	c := newClient(t)
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(t.Context(), path, []byte("base")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteTree(t, c, path) })
	var nilCtx context.Context
	for _, tc := range []struct {
		name string
		want error
		call func() error
	}{
		{"nil client", framework.ErrNilClient, func() error { return rwlock.Revoke(t.Context(), nil, path+"/_c_x-__WRIT__0000000001") }},
		{"nil ctx", framework.ErrInvalidArgument, func() error { return rwlock.Revoke(nilCtx, c, path+"/_c_x-__WRIT__0000000001") }},
		{"bad path", framework.ErrInvalidPath, func() error { return rwlock.Revoke(t.Context(), c, path+"//_c_x-__READ__0000000001") }},
		{"the lock's own path", framework.ErrInvalidArgument, func() error { return rwlock.Revoke(t.Context(), c, path) }},
		{"nil read listener", framework.ErrInvalidArgument, func() error { _, err := rwlock.New(c, path, rwlock.WithReadRevocation(nil)); return err }},
		{"nil write listener", framework.ErrInvalidArgument, func() error { _, err := rwlock.New(c, path, rwlock.WithWriteRevocation(nil)); return err }},
	} {
		err := tc.call()
		if !errors.Is(err, rwlock.ErrInvalidArgument) || !errors.Is(err, tc.want) {
			t.Errorf("%s: %v; want rwlock.ErrInvalidArgument and %v", tc.name, err, tc.want)
		} else if !strings.HasPrefix(err.Error(), "rwlock: ") || strings.Count(err.Error(), "rwlock:") != 1 {
			t.Errorf("%s: message %q; want one rwlock: prefix", tc.name, err)
		}
	}
	if data, _, err := c.GetData().ForPath(t.Context(), path); err != nil || string(data) != "base" {
		t.Errorf("the lock's path reads %q (err %v) after the refused revokes; want its data untouched", data, err)
	}
	if err := rwlock.Revoke(t.Context(), c, path+"/_c_gone-__READ__0000000001"); err != nil {
		t.Errorf("revoke of a node already gone: %v; want nil", err)
	}
	if got := children(t, c, path); len(got) != 0 {
		t.Errorf("revokes left nodes %q", got)
	}
}

// TestInterop_RWLockRevokeBothWays: Curator's Revoker revokes a Go read
// holder, whose listener runs (and a Go mutex holder, which shares the
// revocation machinery); Go's Revoke revokes a Curator write holder
// made revocable with makeRevocable, whose listener runs, and once Curator
// releases, a Go writer gets the lock.
func TestInterop_RWLockRevokeBothWays(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j := startJava(t)

	// Java revokes Go.
	goPath := base + "/go-holds"
	revoked := make(revokedHolds, 1)
	rh, err := newRevocableRW(t, c, goPath, rwlock.WithReadRevocation(revoked.listener)).ReadLock().Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	javaDo(t, j, "revoke", rh.Node())
	if got := revoked.next(t, "Go reader revoked by Curator"); got != rh {
		t.Fatalf("the listener got %s; want the revoked hold %s", got.Node(), rh.Node())
	}
	if err := rh.Release(t.Context()); err != nil {
		t.Fatal(err)
	}

	// Curator's Revoker and a Go mutex holder: the same machinery.
	mutexRevoked := make(chan struct{}, 1)
	mh, err := newMutex(t, c, base+"/go-mutex", mutex.WithRevocation(func() { mutexRevoked <- struct{}{} })).Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	javaDo(t, j, "revoke", mh.Node())
	select {
	case <-mutexRevoked:
	case <-time.After(15 * time.Second):
		t.Fatal("Curator's Revoker did not reach the Go mutex holder's listener")
	}
	if err := mh.Release(t.Context()); err != nil {
		t.Fatal(err)
	}

	// Go revokes Java.
	javaPath := base + "/java-holds"
	javaDo(t, j, "rw.revocable", javaPath, "write")
	if !javaTry(t, j, "write.acquire", javaPath, "5000") {
		t.Fatal("Curator write.acquire on a free lock timed out")
	}
	w := newRW(t, newClient(t), javaPath)
	parts, err := w.WriteLock().Participants(t.Context())
	if err != nil || len(parts) != 1 {
		t.Fatalf("write participants %q, %v; want Curator's one node", parts, err)
	}
	if data, _, err := c.GetData().ForPath(t.Context(), parts[0]); err != nil || len(data) != 0 {
		t.Fatalf("Curator's revocable writer's node data %q (err %v); want empty", data, err)
	}
	waiter := holdAsync(t.Context(), w.WriteLock())
	if err := rwlock.Revoke(t.Context(), c, parts[0]); err != nil {
		t.Fatal(err)
	}
	want := "revoked write " + javaPath
	eventually(t, 15*time.Second, func() bool { return slices.Contains(j.Events(), want) }, "Curator's revocation listener ran")
	waiter.stillWaiting(t, "Go writer before Curator releases")
	javaDo(t, j, "write.release", javaPath)
	waiter.finish(t, "Go writer after Curator's revoked release")
}
