package integration

import (
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
)

// A write whose right comes from an ephemeral node of ours (a lock we
// hold) must never run on a later session of the client, where that node
// may be another client's: Transaction.InSession sends it only on the
// session it names. Without it, the same multi sent after the client's
// session changed deletes the other client's lock and the item it works
// on (what a queue consumer finishing an item as its session ends did).
func TestFramework_TransactionInSession(t *testing.T) {
	securityNoLeaks(t)
	srv := zktest.Shared(t)
	c := newClient(t)
	other := newClient(t)
	ctx := t.Context()
	base := testPath(t)
	item, lock := base+"/item", base+"/lock"
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, item, []byte("job")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = other.Delete().DeletingChildrenIfNeeded().ForPath(t.Context(), base)
	})

	// On its own session, the bound multi commits.
	sess, err := c.CurrentSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create().WithMode(framework.Ephemeral).ForPath(ctx, lock, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Transaction().SetData(item, []byte("seen"), -1).InSession(sess).Commit(ctx); err != nil {
		t.Fatalf("a transaction bound to the current session: %v", err)
	}

	// The session expires; another client takes the lock.
	if err := zktest.ExpireSession(ctx, srv.ConnectString(), c.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() bool {
		s, err := c.CurrentSession(ctx)
		return err == nil && s.ID() != sess.ID()
	}, "the client runs a new session")
	if _, err := other.Create().WithMode(framework.Ephemeral).ForPath(ctx, lock, nil); err != nil {
		t.Fatalf("the other client takes the lock: %v", err)
	}

	finish := c.Transaction().Delete(item, -1).Delete(lock, -1)
	_, err = finish.InSession(sess).Commit(ctx)
	if !errors.Is(err, framework.ErrSessionLost) {
		t.Fatalf("the finish bound to the old session = %v; want ErrSessionLost", err)
	}
	for _, p := range []string{item, lock} {
		if stat, err := other.CheckExists().ForPath(ctx, p); err != nil || stat == nil {
			t.Fatalf("%s after the refused finish: %v, %v; want it kept", p, stat, err)
		}
	}
	if stat, _ := other.CheckExists().ForPath(ctx, lock); stat.EphemeralOwner != other.SessionID() {
		t.Fatalf("the lock's owner is %#x; want the other client's %#x", stat.EphemeralOwner, other.SessionID())
	}
	// The zero Session binds to nothing.
	if _, err := finish.InSession(framework.Session{}).Commit(ctx); !errors.Is(err, framework.ErrSessionLost) {
		t.Errorf("a transaction bound to the zero Session = %v; want ErrSessionLost", err)
	}

	// Unbound, the same multi runs on the new session: it deletes the
	// other client's lock and the item it works on.
	if _, err := finish.Commit(ctx); err != nil {
		t.Fatalf("the unbound finish: %v", err)
	}
	if stat, _ := other.CheckExists().ForPath(ctx, lock); stat != nil {
		t.Fatal("the unbound finish left the other client's lock")
	}
}
