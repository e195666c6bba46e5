package integration

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/persistentnode"
	"github.com/go-curator/curator/zktest"
)

// Issue 27: a persistent node under faults. Each test ends with exactly one
// node per Node, owned (if ephemeral) by the client's current session and
// holding the latest data.

// pnSeen records, at each re-creation the Node reports, how many nodes the
// server holds: a node of a session given up on must be gone before the
// next is made, though the server would remove it a moment later.
type pnSeen struct {
	mu    sync.Mutex
	extra []string
}

func (s *pnSeen) watch(t *testing.T, n *persistentnode.Node, obs *framework.Client, parent, name string) {
	n.AddListener(func(ev persistentnode.Event) {
		if ev.Type != persistentnode.Created {
			return
		}
		nodes, err := pnNodes(t.Context(), obs, parent, name)
		if err == nil && len(nodes) > 1 {
			s.mu.Lock()
			s.extra = append(s.extra, fmt.Sprintf("at the creation of %s: %v", ev.Path, nodes))
			s.mu.Unlock()
		}
	})
}

func (s *pnSeen) check(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.extra {
		t.Errorf("two copies %s", e)
	}
}

func TestPersistentNode_SessionExpiryLeavesOneNode(t *testing.T) {
	cacheNoLeaks(t)
	obs := newClient(t)
	for _, m := range pnModes {
		t.Run(m.name, func(t *testing.T) {
			c := newClient(t)
			parent := cachePath(t, obs)
			var r pnRecorder
			var seen pnSeen
			n := startPNode(t, c, parent+"/member-", "a", &r, m.opts...)
			seen.watch(t, n, obs, parent, "member-")
			if err := n.SetData(t.Context(), []byte("b")); err != nil {
				t.Fatal(err)
			}
			var owner *framework.Client
			if m.eph {
				owner = c
			}
			for i := range 2 {
				before := c.ZooKeeper().SessionID()
				expire(t, c)
				eventually(t, pnWait, func() bool {
					id := c.ZooKeeper().SessionID()
					return id != 0 && id != before
				}, "a new session")
				if m.eph {
					eventually(t, pnWait, func() bool { return r.count(persistentnode.Created) == i+2 },
						"the node made again on the new session")
				}
				waitOne(t, obs, n, parent, "member-", owner, "b")
			}
			if err := n.SetData(t.Context(), []byte("c")); err != nil {
				t.Fatal(err)
			}
			waitOne(t, obs, n, parent, "member-", owner, "c")
			seen.check(t)
		})
	}
}

// The client is cut off until it declares its session Lost, then let
// through at once: the server still holds the old session, and its
// ephemeral node, for a moment, while the Node makes the node again.
func TestPersistentNode_CutPastSessionTimeoutLeavesOneNode(t *testing.T) {
	cacheNoLeaks(t)
	obs := newClient(t)
	for _, m := range pnModes {
		t.Run(m.name, func(t *testing.T) {
			var states stateLog
			c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b.Listener(states.listen) })
			parent := cachePath(t, obs)
			var r pnRecorder
			var seen pnSeen
			n := startPNode(t, c, parent+"/member-", "a", &r, m.opts...)
			seen.watch(t, n, obs, parent, "member-")
			if err := n.SetData(t.Context(), []byte("b")); err != nil {
				t.Fatal(err)
			}
			var owner *framework.Client
			if m.eph {
				owner = c
			}
			for i := range 2 {
				proxy.Pause()
				eventually(t, pnWait, func() bool { return states.count(framework.Lost) == i+1 }, "Lost: "+states.String())
				proxy.Resume()
				// A new session before the next cut: a cut with none has
				// no lease to end, and no Lost to wait for.
				eventually(t, pnWait, func() bool { return states.count(framework.Reconnected) >= i+1 }, "Reconnected: "+states.String())
				if m.eph {
					eventually(t, pnWait, func() bool { return r.count(persistentnode.Created) == i+2 },
						"the node made again on the new session")
				}
				waitOne(t, obs, n, parent, "member-", owner, "b")
			}
			seen.check(t)
		})
	}
}

func TestPersistentNode_ServerRestartLeavesOneNode(t *testing.T) {
	cacheNoLeaks(t)
	cluster := zktest.Start(t)
	srv := fwServer(t, cluster)
	obs := startClient(t, builder(t, cluster.ConnectString()))
	for _, m := range pnModes {
		t.Run(m.name, func(t *testing.T) {
			c := startClient(t, builder(t, cluster.ConnectString()))
			parent := cachePath(t, obs)
			n := startPNode(t, c, parent+"/member-", "a", nil, m.opts...)
			if err := n.SetData(t.Context(), []byte("b")); err != nil {
				t.Fatal(err)
			}
			if err := srv.Stop(); err != nil {
				t.Fatal(err)
			}
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			var owner *framework.Client
			if m.eph {
				owner = c
			}
			waitOne(t, obs, n, parent, "member-", owner, "b")
		})
	}
}

// The server makes the node but its reply is lost with the connection:
// the Node finds its node again (by its protected prefix, or by its
// session at a fixed path) and never makes a second.
func TestPersistentNode_LostCreateReplyLeavesOneNode(t *testing.T) {
	cacheNoLeaks(t)
	obs := newClient(t)
	for _, m := range pnModes {
		t.Run(m.name, func(t *testing.T) {
			c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b })
			parent := cachePath(t, obs)
			if _, err := obs.Create().CreatingParentsIfNeeded().ForPath(t.Context(), parent, nil); err != nil {
				t.Fatal(err)
			}
			proxy.LoseNextReply(zktest.OpCreate, zktest.OpCreate2)
			n := startPNode(t, c, parent+"/member-", "a", nil, m.opts...)
			struck(t, proxy, 1)
			var owner *framework.Client
			if m.eph {
				owner = c
			}
			waitOne(t, obs, n, parent, "member-", owner, "a")
			if err := n.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			waitNone(t, obs, parent, "member-")
		})
	}
}

// A create whose reply is lost, then Close while the client cannot reach
// the server: the Node never learnt that it made the node, but Close still
// deletes it.
func TestPersistentNode_CloseAfterALostCreateReplyLeavesNothing(t *testing.T) {
	cacheNoLeaks(t)
	obs := newClient(t)
	// Fixed paths only: a protected create that fails has the framework
	// delete its node.
	for _, m := range []struct {
		name string
		opts []persistentnode.Option
	}{
		{"Ephemeral", nil},
		{"Persistent", []persistentnode.Option{persistentnode.WithMode(framework.Persistent)}},
		// Found again by its owner, not a prefix.
		{"PlainEphemeralSequential", []persistentnode.Option{persistentnode.WithMode(framework.EphemeralSequential), persistentnode.WithoutProtection()}},
	} {
		t.Run(m.name, func(t *testing.T) {
			c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b })
			parent := cachePath(t, obs)
			if _, err := obs.Create().CreatingParentsIfNeeded().ForPath(t.Context(), parent, nil); err != nil {
				t.Fatal(err)
			}
			proxy.Refuse(true)
			proxy.LoseNextReply(zktest.OpCreate, zktest.OpCreate2)
			n, err := persistentnode.New(c, parent+"/member", []byte("a"), m.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if err := n.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			eventually(t, pnWait, func() bool { return proxy.LostReplies() == 1 }, "the create's reply lost")
			done := make(chan error, 1)
			go func() { done <- n.Close(t.Context()) }()
			// Let Close stop the Node while the client is cut off (if it
			// comes late, the Node finds its node first: the test then
			// proves less, never fails wrongly).
			time.Sleep(300 * time.Millisecond)
			proxy.Refuse(false)
			if err := <-done; err != nil {
				t.Logf("Close: %v", err)
			}
			waitNone(t, obs, parent, "member")
		})
	}
}

// SetData called right after the session expired, before the Node has
// made its node again, keeps the data for the new node and returns nil
// (its doc's promise; it returned the write's NoNode before).
func TestPersistentNode_SetDataRightAfterExpiry(t *testing.T) {
	cacheNoLeaks(t)
	obs := newClient(t)
	for _, m := range pnModes {
		if !m.eph {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			c := newClient(t)
			parent := cachePath(t, obs)
			var r pnRecorder
			n := startPNode(t, c, parent+"/member-", "a", &r, m.opts...)
			for i, data := range []string{"b", "c", "d"} {
				expire(t, c)
				if err := n.SetData(t.Context(), []byte(data)); err != nil {
					t.Fatalf("SetData right after expiry %d: %v", i+1, err)
				}
				waitOne(t, obs, n, parent, "member-", c, data)
			}
		})
	}
}
