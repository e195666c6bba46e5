package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/recipes/groupmember"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// Issue 27: group membership (Curator's GroupMember).

// startMember makes and starts a Member, closed at cleanup, and waits for
// its node.
func startMember(t *testing.T, c *framework.Client, p, id, payload string) *groupmember.Member {
	t.Helper()
	m, err := groupmember.New(c, p, id, []byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	if err := m.Start(t.Context()); err != nil {
		t.Fatalf("Start %s: %v", id, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), pnWait)
	defer cancel()
	if err := m.WaitForInitialCreate(ctx); err != nil {
		t.Fatalf("WaitForInitialCreate %s: %v", id, err)
	}
	return m
}

// serverGroup reads the group from the server: each member's ID and
// payload, and checks that each is an ephemeral node.
func serverGroup(ctx context.Context, obs *framework.Client, p string) (map[string][]byte, error) {
	kids, err := obs.GetChildren().ForPath(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(kids))
	for _, k := range kids {
		data, stat, err := obs.GetData().ForPath(ctx, p+"/"+k)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if stat.EphemeralOwner == 0 {
			return nil, fmt.Errorf("member %s is not ephemeral", k)
		}
		out[k] = data
	}
	return out, nil
}

func groupString(g map[string][]byte) string {
	var s []string
	for id, data := range g {
		s = append(s, id+"="+string(data))
	}
	sort.Strings(s)
	return "{" + strings.Join(s, " ") + "}"
}

func sameGroup(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for id, data := range a {
		if d, ok := b[id]; !ok || !bytes.Equal(d, data) {
			return false
		}
	}
	return true
}

// waitGroup waits until the server holds exactly want and every member's
// view equals it.
func waitGroup(t *testing.T, obs *framework.Client, p string, want map[string][]byte, members ...*groupmember.Member) {
	t.Helper()
	waitFor(t, func() string {
		server, err := serverGroup(t.Context(), obs, p)
		if err != nil {
			return err.Error()
		}
		if !sameGroup(server, want) {
			return "server " + groupString(server) + ", want " + groupString(want)
		}
		for _, m := range members {
			if got := m.Members(); !sameGroup(got, server) {
				return m.ID() + " sees " + groupString(got) + ", server " + groupString(server)
			}
		}
		return ""
	})
}

func TestGroupMember_MembersSeeEachOtherAndLeave(t *testing.T) {
	cacheNoLeaks(t)
	c1, c2, obs := newClient(t), newClient(t), newClient(t)
	p := cachePath(t, obs)
	a := startMember(t, c1, p, "a", "pa")
	b := startMember(t, c2, p, "b", "pb")
	waitGroup(t, obs, p, map[string][]byte{"a": []byte("pa"), "b": []byte("pb")}, a, b)

	if err := b.SetPayload(t.Context(), []byte("pb2")); err != nil {
		t.Fatal(err)
	}
	waitGroup(t, obs, p, map[string][]byte{"a": []byte("pa"), "b": []byte("pb2")}, a, b)
	if path, ok := b.Path(); !ok || path != p+"/b" || groupmember.IDFromPath(path) != "b" {
		t.Errorf("b.Path() = %q, %v", path, ok)
	}

	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if b.Members() != nil {
		t.Errorf("Members after Close = %v", b.Members())
	}
	waitGroup(t, obs, p, map[string][]byte{"a": []byte("pa")}, a)
	if err := a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitGroup(t, obs, p, map[string][]byte{})
}

// groupFault runs fault on c1's session, with members a (on c1) and b (on
// c2), then checks that each is one node again and both views equal the
// server.
func groupFault(t *testing.T, c1, c2, obs *framework.Client, fault func()) {
	t.Helper()
	p := cachePath(t, obs)
	a := startMember(t, c1, p, "a", "pa")
	b := startMember(t, c2, p, "b", "pb")
	want := map[string][]byte{"a": []byte("pa"), "b": []byte("pb")}
	waitGroup(t, obs, p, want, a, b)
	for i := range 2 {
		before := c1.ZooKeeper().SessionID()
		fault()
		eventually(t, pnWait, func() bool {
			id := c1.ZooKeeper().SessionID()
			return id != 0 && id != before
		}, "a new session")
		if err := a.SetPayload(t.Context(), []byte(fmt.Sprintf("pa%d", i))); err != nil && !errors.Is(err, framework.ErrIndeterminate) {
			t.Logf("SetPayload during the fault: %v", err)
		}
		want["a"] = []byte(fmt.Sprintf("pa%d", i))
		waitGroup(t, obs, p, want, a, b)
		_, stat, err := obs.GetData().ForPath(t.Context(), p+"/a")
		if err != nil || stat.EphemeralOwner != c1.ZooKeeper().SessionID() {
			t.Fatalf("a's node: %v, %v; want it owned by 0x%x", stat, err, c1.ZooKeeper().SessionID())
		}
	}
}

func TestGroupMember_SessionExpiryLeavesOneNodePerMember(t *testing.T) {
	cacheNoLeaks(t)
	c1, c2, obs := newClient(t), newClient(t), newClient(t)
	groupFault(t, c1, c2, obs, func() { expire(t, c1) })
}

func TestGroupMember_CutPastSessionTimeoutLeavesOneNodePerMember(t *testing.T) {
	cacheNoLeaks(t)
	var states stateLog
	c1, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b.Listener(states.listen) })
	c2, obs := newClient(t), newClient(t)
	n := 0
	groupFault(t, c1, c2, obs, func() {
		n++
		proxy.Pause()
		eventually(t, pnWait, func() bool { return states.count(framework.Lost) == n }, "Lost: "+states.String())
		proxy.Resume()
	})
}

func TestGroupMember_ServerRestartLeavesOneNodePerMember(t *testing.T) {
	cacheNoLeaks(t)
	cluster := zktest.Start(t)
	srv := fwServer(t, cluster)
	c1 := startClient(t, builder(t, cluster.ConnectString()))
	c2 := startClient(t, builder(t, cluster.ConnectString()))
	obs := startClient(t, builder(t, cluster.ConnectString()))
	p := cachePath(t, obs)
	a := startMember(t, c1, p, "a", "pa")
	b := startMember(t, c2, p, "b", "pb")
	want := map[string][]byte{"a": []byte("pa"), "b": []byte("pb")}
	waitGroup(t, obs, p, want, a, b)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.SetPayload(t.Context(), []byte("pb2")); err != nil {
		t.Logf("SetPayload after the restart: %v", err)
	}
	want["b"] = []byte("pb2")
	waitGroup(t, obs, p, want, a, b)
}

func TestGroupMember_BadInputLeavesNothing(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	for _, id := range []string{"", "a/b", "..", "x\x00"} {
		if m, err := groupmember.New(c, p, id, nil); m != nil || !errors.Is(err, groupmember.ErrInvalidArgument) {
			t.Errorf("New(id %q) = %v, %v", id, m, err)
		}
	}
	m, err := groupmember.New(c, p, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(nil); !errors.Is(err, groupmember.ErrInvalidArgument) { //nolint:staticcheck // nil ctx on purpose
		t.Errorf("Start(nil) = %v", err)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if err := m.Start(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Start(done ctx) = %v", err)
	}
	if err := m.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, c, p); len(kids) != 0 {
		t.Errorf("left %v", kids)
	}
}

// groupView is where a test reads a group from: a client and the path.
type groupView struct {
	c *framework.Client
	p string
}

// pnEvents records a Member's cache events.
type pnEvents struct {
	mu  sync.Mutex
	evs []cache.Event
}

func (r *pnEvents) listen(ev cache.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

func (r *pnEvents) count(typ cache.EventType, path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ev := range r.evs {
		if ev.Type == typ && ev.Entry.Path == path {
			n++
		}
	}
	return n
}
