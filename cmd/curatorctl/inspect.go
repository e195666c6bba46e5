package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-zookeeper/zk"
)

// node is one znode as the commands print it.
type node struct {
	Path    string `json:"path"`
	Mode    string `json:"mode"`              // persistent, ephemeral or container (see describe)
	Session string `json:"session,omitempty"` // the ephemeral owner, hex
	// Age is the seconds since the node was created (its ctime); none for
	// a node the server made without one (/, /zookeeper).
	Age      *float64 `json:"age,omitempty"`
	Data     string   `json:"data,omitempty"`
	Children int32    `json:"children"`
	Role     string   `json:"role,omitempty"` // holder, waiter, reader, writer, leader, lease...
}

// containerOwner is ZooKeeper's container marker (EphemeralType's
// CONTAINER_EPHEMERAL_OWNER, the high bit alone), what the server keeps as
// a container node's ephemeralOwner.
const containerOwner = -1 << 63

// describe returns the node at p with stat st and data. Its mode is what
// the server reports: a session as ephemeralOwner is an ephemeral node,
// the container marker a container. But ZooKeeper since TTL nodes (3.8
// included) hides every owner but a session's from clients, reporting 0
// for container and TTL nodes (DataNode.getClientEphemeralOwner; no
// request returns a node's kind, see ZOOKEEPER-3583), so those show as
// persistent: no client can tell them apart.
func describe(p string, st *zk.Stat, data []byte) node {
	n := node{Path: p, Mode: "persistent", Children: st.NumChildren}
	switch o := st.EphemeralOwner; o {
	case 0:
	case containerOwner:
		n.Mode = "container"
	default:
		n.Mode, n.Session = "ephemeral", fmt.Sprintf("0x%x", uint64(o))
	}
	if st.Ctime != 0 {
		age := time.Since(time.UnixMilli(st.Ctime)).Round(time.Millisecond).Seconds()
		n.Age = &age
	}
	n.Data = printable(data)
	return n
}

// printable shows data as text if it is, else as hex.
func printable(b []byte) string {
	for _, c := range string(b) {
		if c < ' ' || c == 0x7f || c == '\uFFFD' {
			return fmt.Sprintf("0x%x", b)
		}
	}
	return string(b)
}

// open starts a client and checks path.
func open(ctx context.Context, g *global, path string) (*framework.Client, error) {
	if err := framework.ValidatePath(path); err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	return g.client(ctx)
}

// read reads one node, naming it when it does not exist.
func read(ctx context.Context, c *framework.Client, p string) (node, error) {
	data, st, err := c.GetData().ForPath(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return node{}, fmt.Errorf("%s does not exist", p)
	}
	if err != nil {
		return node{}, err
	}
	return describe(p, st, data), nil
}

// kids reads the nodes under p, sorted as the lock recipes sort them
// (by their sequence suffix), or by name.
func kids(ctx context.Context, c *framework.Client, p string, names ...string) ([]node, error) {
	if _, err := read(ctx, c, p); err != nil {
		return nil, err
	}
	ks, err := c.GetChildren().ForPath(ctx, p)
	if err != nil {
		return nil, err
	}
	mutex.SortNodes(ks, names...)
	out := make([]node, 0, len(ks))
	for _, k := range ks {
		n, err := read(ctx, c, framework.JoinPath(p, k))
		if err != nil {
			continue // gone since the list
		}
		out = append(out, n)
	}
	return out, nil
}

// show writes nodes as a table or JSON.
func show(g *global, w io.Writer, nodes []node) error {
	if g.json {
		if nodes == nil {
			nodes = []node{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(nodes)
	}
	for _, n := range nodes {
		fields := []string{n.Path}
		if n.Role != "" {
			fields = append([]string{n.Role}, fields...)
		}
		fields = append(fields, n.Mode)
		if n.Session != "" {
			fields = append(fields, "session="+n.Session)
		}
		if n.Age != nil {
			fields = append(fields, "age="+time.Duration(*n.Age*float64(time.Second)).Round(time.Second).String())
		}
		if n.Data != "" {
			fields = append(fields, "data="+strconv.Quote(n.Data))
		}
		fmt.Fprintln(w, strings.Join(fields, "\t"))
	}
	return nil
}

func cmdLs(ctx context.Context, g *global, p string, w io.Writer) error {
	c, err := open(ctx, g, p)
	if err != nil {
		return err
	}
	defer c.Close()
	root, err := read(ctx, c, p)
	if err != nil {
		return err
	}
	nodes := []node{root}
	var walk func(string) error
	walk = func(at string) error {
		ks, err := c.GetChildren().ForPath(ctx, at)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			return err
		}
		mutex.SortNodes(ks)
		for _, k := range ks {
			kp := framework.JoinPath(at, k)
			n, err := read(ctx, c, kp)
			if err != nil {
				continue
			}
			nodes = append(nodes, n)
			if n.Children > 0 {
				if err := walk(kp); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(p); err != nil {
		return err
	}
	return show(g, w, nodes)
}

// Node names of the recipes, as Curator's.
const (
	lockName  = "lock-"
	readName  = "__READ__"
	writeName = "__WRIT__"
	latchName = "latch-"
	leaseName = "lease-"
)

// cmdHolders shows who holds the lock at p and who waits, in queue order,
// with the rule of the recipe the nodes' names show: a mutex or a leader
// selector (lock-), a read/write lock (__READ__, __WRIT__), a leader
// latch (-latch-), or a semaphore (leases/ under p).
func cmdHolders(ctx context.Context, g *global, p string, w io.Writer) error {
	c, err := open(ctx, g, p)
	if err != nil {
		return err
	}
	defer c.Close()
	if st, err := c.CheckExists().ForPath(ctx, framework.JoinPath(p, "leases")); err == nil && st != nil {
		return leases(ctx, c, g, p, w)
	}
	nodes, err := kids(ctx, c, p, lockName, readName, writeName, latchName)
	if err != nil {
		return err
	}
	writerSeen := false
	for i := range nodes {
		_, name := framework.SplitPath(nodes[i].Path)
		switch {
		case strings.Contains(name, readName):
			// A reader holds unless a writer is ahead of it.
			nodes[i].Role = map[bool]string{false: "reader-holder", true: "reader-waiter"}[writerSeen]
		case strings.Contains(name, writeName):
			nodes[i].Role = map[bool]string{true: "writer-holder", false: "writer-waiter"}[i == 0]
			writerSeen = true
		case strings.Contains(name, latchName):
			nodes[i].Role = map[bool]string{true: "leader", false: "candidate"}[i == 0]
		case strings.Contains(name, lockName):
			nodes[i].Role = map[bool]string{true: "holder", false: "waiter"}[i == 0]
		default:
			nodes[i].Role = "other"
		}
	}
	return show(g, w, nodes)
}

func cmdLeases(ctx context.Context, g *global, p string, w io.Writer) error {
	c, err := open(ctx, g, p)
	if err != nil {
		return err
	}
	defer c.Close()
	return leases(ctx, c, g, p, w)
}

// leases lists a semaphore's leases (every one is held) and the waiters
// on its internal lock.
func leases(ctx context.Context, c *framework.Client, g *global, p string, w io.Writer) error {
	held, err := kids(ctx, c, framework.JoinPath(p, "leases"), leaseName)
	if err != nil {
		return err
	}
	for i := range held {
		held[i].Role = "lease"
	}
	waiting, _ := kids(ctx, c, framework.JoinPath(p, "locks"), lockName)
	for i := range waiting {
		waiting[i].Role = "waiter"
	}
	return show(g, w, append(held, waiting...))
}

func cmdBarrier(ctx context.Context, g *global, p string, w io.Writer) error {
	c, err := open(ctx, g, p)
	if err != nil {
		return err
	}
	defer c.Close()
	st, err := c.CheckExists().ForPath(ctx, p)
	if err != nil {
		return err
	}
	if st == nil {
		// A barrier without its node is down: waiters pass.
		if g.json {
			return show(g, w, nil)
		}
		fmt.Fprintf(w, "%s\tdown (no node)\n", p)
		return nil
	}
	nodes, err := kids(ctx, c, p)
	if err != nil {
		return err
	}
	root, err := read(ctx, c, p)
	if err != nil {
		return err
	}
	root.Role = "barrier"
	for i := range nodes {
		nodes[i].Role = "member"
	}
	return show(g, w, append([]node{root}, nodes...))
}

func cmdCountGet(ctx context.Context, g *global, p string, w io.Writer) error {
	c, err := open(ctx, g, p)
	if err != nil {
		return err
	}
	defer c.Close()
	data, st, err := c.GetData().ForPath(ctx, p)
	if errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("%s does not exist", p)
	}
	if err != nil {
		return err
	}
	var v int64
	switch len(data) {
	case 4: // SharedCount: a big-endian int32
		v = int64(int32(binary.BigEndian.Uint32(data)))
	case 8: // DistributedAtomicLong: a big-endian int64
		v = int64(binary.BigEndian.Uint64(data))
	default:
		return fmt.Errorf("%s holds %d bytes: not a shared count (4) or an atomic long (8)", p, len(data))
	}
	if g.json {
		return json.NewEncoder(w).Encode(map[string]any{"path": p, "value": v, "version": st.Version})
	}
	fmt.Fprintln(w, v)
	return nil
}

func cmdCountSet(ctx context.Context, g *global, p, value string, w io.Writer) error {
	n, err := strconv.ParseInt(value, 10, 32)
	if err != nil {
		return fmt.Errorf("%w: count set: %q is not a 32-bit integer", errUsage, value)
	}
	c, err := open(ctx, g, p)
	if err != nil {
		return err
	}
	defer c.Close()
	data, _, err := c.GetData().ForPath(ctx, p)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%s does not exist", p)
	case err != nil:
		return err
	case len(data) != 4:
		return fmt.Errorf("%s holds %d bytes: not a shared count", p, len(data))
	}
	st, err := c.SetData().ForPath(ctx, p, binary.BigEndian.AppendUint32(nil, uint32(int32(n))))
	if err != nil {
		return err
	}
	if g.json {
		return json.NewEncoder(w).Encode(map[string]any{"path": p, "value": n, "version": st.Version})
	}
	fmt.Fprintln(w, n)
	return nil
}

func cmdRevoke(ctx context.Context, g *global, p string, w io.Writer) error {
	c, err := open(ctx, g, p)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := read(ctx, c, p); err != nil {
		return err
	}
	if err := mutex.Revoke(ctx, c, p); err != nil {
		return err
	}
	fmt.Fprintf(w, "asked the holder of %s to release\n", p)
	return nil
}
