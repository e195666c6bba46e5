package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/persistentnode"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// Issue 27: persistent nodes (Curator's PersistentNode, PersistentTtlNode).

const pnWait = 30 * time.Second

// pnRecorder collects a Node's events.
type pnRecorder struct {
	mu  sync.Mutex
	evs []persistentnode.Event
}

func (r *pnRecorder) listen(ev persistentnode.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

func (r *pnRecorder) count(typ persistentnode.EventType) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, ev := range r.evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// startPNode makes and starts a Node, closed at cleanup, and waits for its
// first creation.
func startPNode(t *testing.T, c *framework.Client, p string, data string, r *pnRecorder,
	opts ...persistentnode.Option) *persistentnode.Node {
	t.Helper()
	n, err := persistentnode.New(c, p, []byte(data), opts...)
	if err != nil {
		t.Fatal(err)
	}
	if r != nil {
		n.AddListener(r.listen)
	}
	t.Cleanup(func() { n.Close(context.Background()) })
	if err := n.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), pnWait)
	defer cancel()
	if err := n.WaitForInitialCreate(ctx); err != nil {
		t.Fatalf("WaitForInitialCreate: %v", err)
	}
	return n
}

// pnNodes lists the nodes under parent whose name (protection stripped)
// starts with name, as full paths.
func pnNodes(ctx context.Context, obs *framework.Client, parent, name string) ([]string, error) {
	kids, err := obs.GetChildren().ForPath(ctx, parent)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range kids {
		if strings.HasPrefix(framework.StripProtected(k), name) {
			out = append(out, framework.JoinPath(parent, k))
		}
	}
	return out, nil
}

// pnOne describes how the server differs from one node for n under parent
// (named name, owned by owner's session unless owner is nil, holding
// data), or returns "" if it does not.
func pnOne(ctx context.Context, obs *framework.Client, n *persistentnode.Node, parent, name string,
	owner *framework.Client, data string) string {
	nodes, err := pnNodes(ctx, obs, parent, name)
	if err != nil {
		return err.Error()
	}
	if len(nodes) != 1 {
		return fmt.Sprintf("%d nodes %v, want 1", len(nodes), nodes)
	}
	p, ok := n.Path()
	if !ok || p != nodes[0] {
		return fmt.Sprintf("Path() = %q, %v; the server has %s", p, ok, nodes[0])
	}
	got, stat, err := obs.GetData().ForPath(ctx, p)
	if err != nil {
		return err.Error()
	}
	if owner != nil && stat.EphemeralOwner != owner.ZooKeeper().SessionID() {
		return fmt.Sprintf("%s owned by 0x%x, the client's session is 0x%x", p, stat.EphemeralOwner, owner.ZooKeeper().SessionID())
	}
	if !bytes.Equal(got, []byte(data)) {
		return fmt.Sprintf("%s holds %q, want %q", p, got, data)
	}
	return ""
}

// waitFor polls check until it returns "", for at most pnWait, and fails
// the test with its last answer if it never does.
func waitFor(t *testing.T, check func() string) {
	t.Helper()
	deadline := time.Now().Add(pnWait)
	for {
		last := check()
		if last == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", pnWait, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitOne waits until the server holds exactly one node for n, as pnOne.
func waitOne(t *testing.T, obs *framework.Client, n *persistentnode.Node, parent, name string,
	owner *framework.Client, data string) {
	t.Helper()
	waitFor(t, func() string { return pnOne(t.Context(), obs, n, parent, name, owner, data) })
}

// waitNone waits until the server holds no node named name under parent.
func waitNone(t *testing.T, obs *framework.Client, parent, name string) {
	t.Helper()
	eventually(t, pnWait, func() bool {
		nodes, err := pnNodes(t.Context(), obs, parent, name)
		return err == nil && len(nodes) == 0
	}, "no node "+name+" under "+parent)
}

// pnModes are the Node configurations the fault tests run.
var pnModes = []struct {
	name string
	opts []persistentnode.Option
	eph  bool
}{
	{"Ephemeral", nil, true},
	{"ProtectedEphemeral", []persistentnode.Option{persistentnode.WithProtection()}, true},
	{"EphemeralSequential", []persistentnode.Option{persistentnode.WithMode(framework.EphemeralSequential)}, true},
	{"PlainEphemeralSequential", []persistentnode.Option{persistentnode.WithMode(framework.EphemeralSequential), persistentnode.WithoutProtection()}, true},
	{"Persistent", []persistentnode.Option{persistentnode.WithMode(framework.Persistent)}, false},
	{"PersistentSequential", []persistentnode.Option{persistentnode.WithMode(framework.PersistentSequential)}, false},
}

func TestPersistentNode_CreatesKeepsDataAndDeletesOnClose(t *testing.T) {
	cacheNoLeaks(t)
	c, obs := newClient(t), newClient(t)
	for _, m := range pnModes {
		t.Run(m.name, func(t *testing.T) {
			parent := cachePath(t, obs)
			var owner *framework.Client
			if m.eph {
				owner = c
			}
			n := startPNode(t, c, parent+"/member-", "a", nil, m.opts...)
			waitOne(t, obs, n, parent, "member-", owner, "a")
			if err := n.SetData(t.Context(), []byte("b")); err != nil {
				t.Fatalf("SetData: %v", err)
			}
			if got := pnOne(t.Context(), obs, n, parent, "member-", owner, "b"); got != "" {
				t.Fatalf("after SetData returned: %s", got)
			}
			if got := string(n.Data()); got != "b" {
				t.Errorf("Data() = %q", got)
			}
			if err := n.Close(t.Context()); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if nodes, err := pnNodes(t.Context(), obs, parent, "member-"); err != nil || len(nodes) != 0 {
				t.Fatalf("after Close: %v, %v; want no node", nodes, err)
			}
			if _, ok := n.Path(); ok {
				t.Error("Path() reports the node present after Close")
			}
			if err := n.SetData(t.Context(), nil); !errors.Is(err, persistentnode.ErrClosed) {
				t.Errorf("SetData after Close = %v", err)
			}
		})
	}
}

func TestPersistentNode_RecreatedAfterDeleteWithLatestData(t *testing.T) {
	cacheNoLeaks(t)
	c, obs := newClient(t), newClient(t)
	for _, m := range pnModes {
		t.Run(m.name, func(t *testing.T) {
			parent := cachePath(t, obs)
			var owner *framework.Client
			if m.eph {
				owner = c
			}
			var r pnRecorder
			n := startPNode(t, c, parent+"/member-", "a", &r, m.opts...)
			if err := n.SetData(t.Context(), []byte("b")); err != nil {
				t.Fatal(err)
			}
			first, _ := n.Path()
			for i := range 3 {
				if err := obs.Delete().ForPath(t.Context(), first); err != nil {
					t.Fatalf("delete %s: %v", first, err)
				}
				eventually(t, pnWait, func() bool { return r.count(persistentnode.Created) == i+2 },
					"the node made again after a delete")
				waitOne(t, obs, n, parent, "member-", owner, "b")
				p, _ := n.Path()
				if strings.Contains(m.name, "Sequential") || m.name == "ProtectedEphemeral" {
					if p == first {
						t.Errorf("a protected or sequential node made again at its old path %s", p)
					}
				} else if p != first {
					t.Errorf("node made again at %s, want %s", p, first)
				}
				first = p
			}
			if g := r.count(persistentnode.Gone); g != 3 {
				t.Errorf("%d Gone events, want 3", g)
			}
		})
	}
}

// A node at the path that another live client made is left alone: the
// Node waits for it to go, then makes its own; Close meanwhile deletes
// nothing of the other's.
func TestPersistentNode_AnotherClientsNodeIsLeftAlone(t *testing.T) {
	cacheNoLeaks(t)
	c, other := newClient(t), newClient(t)
	parent := cachePath(t, other)
	p := parent + "/id"
	if _, err := other.Create().CreatingParentsIfNeeded().WithMode(framework.Ephemeral).ForPath(t.Context(), p, []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	n, err := persistentnode.New(c, p, []byte("mine"))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close(context.Background())
	if err := n.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The Node finds the other's node, and waits.
	short, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if err := n.WaitForInitialCreate(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitForInitialCreate with another client's node there = %v", err)
	}
	got, stat, err := other.GetData().ForPath(t.Context(), p)
	if err != nil || string(got) != "theirs" || stat.EphemeralOwner != other.ZooKeeper().SessionID() {
		t.Fatalf("the other client's node: %q, %v, %v", got, stat, err)
	}
	if err := other.Delete().ForPath(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitForInitialCreate(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitOne(t, other, n, parent, "id", c, "mine")

	// And a Node that never made the node does not delete the other's.
	if err := n.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Create().WithMode(framework.Ephemeral).ForPath(t.Context(), p, []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	n2, err := persistentnode.New(c, p, []byte("mine"))
	if err != nil {
		t.Fatal(err)
	}
	if err := n2.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := n2.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, _, err := other.GetData().ForPath(t.Context(), p); err != nil || string(got) != "theirs" {
		t.Fatalf("the other client's node after Close: %q, %v", got, err)
	}
}

// Close while the node is being made again leaves nothing.
func TestPersistentNode_CloseDuringRecreateLeavesNothing(t *testing.T) {
	cacheNoLeaks(t)
	c, obs := newClient(t), newClient(t)
	for _, m := range pnModes {
		t.Run(m.name, func(t *testing.T) {
			parent := cachePath(t, obs)
			for i := range 10 {
				n := startPNode(t, c, parent+"/member-", "a", nil, m.opts...)
				p, _ := n.Path()
				if err := obs.Delete().ForPath(t.Context(), p); err != nil {
					t.Fatal(err)
				}
				if i%2 == 1 {
					time.Sleep(time.Duration(i) * time.Millisecond) // vary where Close lands
				}
				if err := n.Close(t.Context()); err != nil {
					t.Fatalf("Close: %v", err)
				}
				if nodes, err := pnNodes(t.Context(), obs, parent, "member-"); err != nil || len(nodes) != 0 {
					t.Fatalf("round %d: after Close: %v, %v; want no node", i, nodes, err)
				}
			}
		})
	}
}

func TestPersistentNode_BadInputAndMisuse(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	parent := cachePath(t, c)
	n, err := persistentnode.New(c, parent+"/n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(nil); !errors.Is(err, persistentnode.ErrInvalidArgument) || !errors.Is(err, framework.ErrInvalidArgument) { //nolint:staticcheck // nil ctx on purpose
		t.Errorf("Start(nil) = %v", err)
	}
	if err := n.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := n.Start(t.Context()); !errors.Is(err, persistentnode.ErrAlreadyStarted) {
		t.Errorf("second Start = %v", err)
	}
	if err := n.WaitForInitialCreate(nil); !errors.Is(err, persistentnode.ErrInvalidArgument) { //nolint:staticcheck // nil ctx on purpose
		t.Errorf("WaitForInitialCreate(nil) = %v", err)
	}
	if err := n.SetData(nil, nil); !errors.Is(err, persistentnode.ErrInvalidArgument) { //nolint:staticcheck // nil ctx on purpose
		t.Errorf("SetData(nil) = %v", err)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	if err := n.SetData(done, []byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("SetData(done ctx) = %v", err)
	}
	if got := string(n.Data()); got != "" {
		t.Errorf("a SetData with a done ctx changed the data to %q", got)
	}
	if err := n.Close(nil); !errors.Is(err, persistentnode.ErrInvalidArgument) { //nolint:staticcheck // nil ctx on purpose
		t.Errorf("Close(nil) = %v", err)
	}
	if err := n.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, c, parent); len(kids) != 0 {
		t.Errorf("left %v", kids)
	}

	closed := startClient(t, builder(t, fwShared(t)))
	closed.Close()
	n2, err := persistentnode.New(closed, parent+"/n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := n2.Start(t.Context()); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("Start on a closed client = %v", err)
	}
}

func TestPersistentNode_TTLNodeIsAContainerWithATouchChild(t *testing.T) {
	cacheNoLeaks(t)
	srv := zktest.StartWith(t, zktest.Config{ExtraConfig: "extendedTypesEnabled=true\n"})
	c, obs := startClient(t, builder(t, srv.ConnectString())), startClient(t, builder(t, srv.ConnectString()))
	p := "/ttl/node"
	n, err := persistentnode.NewTTL(c, p, 2*time.Second, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitForInitialCreate(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, _, err := obs.GetData().ForPath(t.Context(), p)
	if err != nil || string(got) != "a" {
		t.Fatalf("the container: %q, %v", got, err)
	}
	if kids := children(t, obs, p); len(kids) != 1 || kids[0] != "touch" {
		t.Fatalf("the container's children: %v, want [touch]", kids)
	}
	if err := n.SetData(t.Context(), []byte("b")); err != nil {
		t.Fatal(err)
	}
	// The touches keep it past several TTLs: wait until the child has
	// been touched a few times.
	eventually(t, pnWait, func() bool {
		_, stat, err := obs.GetData().ForPath(t.Context(), p+"/touch")
		return err == nil && stat.Version >= 4
	}, "the touch child touched 4 times")
	if got, _, err := obs.GetData().ForPath(t.Context(), p); err != nil || string(got) != "b" {
		t.Fatalf("the container after its TTL passed, touched: %q, %v", got, err)
	}
	// Deleted by someone else, the container is made again, with its data,
	// and touched again.
	if err := obs.Delete().DeletingChildrenIfNeeded().ForPath(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() string {
		got, _, err := obs.GetData().ForPath(t.Context(), p)
		if err != nil || string(got) != "b" {
			return fmt.Sprintf("the container: %q, %v", got, err)
		}
		if kids := children(t, obs, p); len(kids) != 1 || kids[0] != "touch" {
			return fmt.Sprintf("the container's children: %v, want [touch]", kids)
		}
		return ""
	})
	// Close deletes nothing; the server then removes the child after its
	// TTL, then the empty container.
	if err := n.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	eventually(t, pnWait, func() bool {
		stat, err := obs.CheckExists().ForPath(t.Context(), p)
		return err == nil && stat == nil
	}, "the server removes the container once it stopped being touched")
}

func TestPersistentNode_TTLNodeOnAServerWithoutTTL(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	parent := cachePath(t, c)
	n, err := persistentnode.NewTTL(c, parent+"/node", time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close(context.Background())
	if err := n.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := n.WaitForInitialCreate(t.Context()); !errors.Is(err, framework.ErrTTLNotEnabled) {
		t.Fatalf("WaitForInitialCreate = %v; want framework.ErrTTLNotEnabled", err)
	}
}
