package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/doublebarrier"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// TestFaults_SessionLocks_DoubleBarrierMemberOfOldSession: member A waits
// in Enter; its client declares the session lost and opens a new one while
// the server keeps the old session, and A's member node, alive. A must not
// count that node as its own: once B enters and the barrier opens, A must
// be in the barrier with a member node of its current session, so that it
// is still counted when the server ends the old session.
func TestFaults_SessionLocks_DoubleBarrierMemberOfOldSession(t *testing.T) {
	faultsNoLeaks(t)
	base := testPath(t)
	var log stateLog
	a, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b.Listener(log.listen) })
	b, obs := newClient(t), newClient(t)
	ba, err := doublebarrier.New(a, base, 2)
	if err != nil {
		t.Fatal(err)
	}
	bb, err := doublebarrier.New(b, base, 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	members := func() []string {
		var m []string
		for _, k := range children(t, obs, base) {
			if k != "ready" {
				m = append(m, k)
			}
		}
		return m
	}

	oldConn, oldSession := a.ZooKeeper(), a.SessionID()
	aEntered := make(chan error, 1)
	go func() { aEntered <- ba.Enter(ctx) }()
	eventually(t, 10*time.Second, func() bool { return len(members()) == 1 }, "A's member node")
	slAwaitWatch(t, a, base+"/ready", "A waits for ready")

	proxy.Pause()
	eventually(t, 3*testSessionTimeout, func() bool { return log.count(framework.Lost) > 0 },
		"A's client declares its session lost")
	proxy.Resume()
	eventually(t, 3*testSessionTimeout, func() bool {
		return a.State().IsConnected() && a.SessionID() != oldSession
	}, "A's client reconnects with a new session")
	slAwaitWatch(t, a, base+"/ready", "A waits for ready on its new session")

	if err := bb.Enter(ctx); err != nil {
		t.Fatalf("B's Enter: %v", err)
	}
	select {
	case err := <-aEntered:
		if err != nil {
			t.Fatalf("A's Enter: %v", err)
		}
	case <-time.After(3 * testSessionTimeout):
		t.Fatal("A's Enter did not return after the barrier opened")
	}
	var ours int
	for _, k := range members() {
		stat, err := obs.CheckExists().ForPath(ctx, base+"/"+k)
		if err == nil && stat != nil && stat.EphemeralOwner == a.SessionID() {
			ours++
		}
	}
	if ours != 1 {
		t.Errorf("A is inside the barrier with %d member nodes of its session 0x%x; members %v", ours, a.SessionID(), members())
	}
	if err := zktest.ExpireSession(ctx, zktest.Shared(t).ConnectString(), oldConn); err != nil &&
		!errors.Is(err, zk.ErrSessionExpired) {
		t.Fatalf("expire A's old session: %v", err)
	}
	if m := members(); len(m) != 2 {
		t.Errorf("members after A's old session ended: %v; want A and B", m)
	}

	left := make(chan error, 2)
	go func() { left <- ba.Leave(ctx) }()
	go func() { left <- bb.Leave(ctx) }()
	for range 2 {
		if err := <-left; err != nil {
			t.Errorf("Leave: %v", err)
		}
	}
	if kids := children(t, obs, base); len(kids) != 0 {
		t.Fatalf("nodes left after both left: %v", kids)
	}
}
