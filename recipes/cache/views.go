package cache

import (
	"context"
	"fmt"

	"github.com/go-curator/curator/framework"
)

// Node caches one node: Curator's NodeCache. The node need not exist. It
// is safe for concurrent use; it must not be copied. Build one with
// [NewNode], Start it, and Close it when done. A zero Node is not usable:
// its methods return ErrInvalidArgument.
type Node struct{ c *core }

// NewNode returns a cache of the node at path. It checks its arguments
// and does no I/O.
func NewNode(client *framework.Client, path string) (*Node, error) {
	c, err := newCore(client, path, framework.WatchNode)
	if err != nil {
		return nil, err
	}
	return &Node{c}, nil
}

func (n *Node) core() *core {
	if n == nil {
		return nil
	}
	return n.c
}

// Start reads the node, sets its watch and returns once the view is
// loaded (listeners get NodeAdded if the node exists, then Initialized).
// If ctx ends first, or the client is not started or closes, Start
// returns the error and closes the cache. It returns ErrAlreadyStarted on
// a second call and ErrClosed after Close.
func (n *Node) Start(ctx context.Context) error { return n.core().start(ctx) }

// Close stops watching and the listeners, waits for them (except a
// listener that calls Close), and clears the view; the cache then holds
// no memory beyond the Node value itself (see the package doc for the
// ZooKeeper watches). It is idempotent.
func (n *Node) Close() error { return n.core().close() }

// Current returns the cached node. It returns an error matching ErrNoNode
// when the node does not exist, and ErrNotStarted or ErrClosed outside
// Start and Close.
func (n *Node) Current() (Entry, error) {
	c := n.core()
	if c == nil {
		return Entry{}, c.usable()
	}
	return c.get(c.path)
}

// AddListener adds a listener of the cache's events and returns a
// function that removes it; see the package doc for its delivery. Added
// before Start, a listener also gets the initial NodeAdded and
// Initialized. After Close it does nothing.
func (n *Node) AddListener(fn func(Event)) (remove func()) { return n.core().addListener(fn) }

// Children caches the children of a node, with their data: Curator's
// PathChildrenCache (and CuratorCache's single-level mode). The node itself
// is not in the view, and need not exist. It is safe for concurrent use;
// it must not be copied. Build one with [NewChildren]; a zero Children is
// not usable.
type Children struct{ c *core }

// NewChildren returns a cache of the children of the node at path. It
// checks its arguments and does no I/O. It takes [WithoutData] and
// [WithStartMode] (PathChildrenCache's cacheData and StartMode).
func NewChildren(client *framework.Client, path string, opts ...TreeOption) (*Children, error) {
	c, err := newTreeCore(client, path, true, opts)
	if err != nil {
		return nil, err
	}
	return &Children{c}, nil
}

func (ch *Children) core() *core {
	if ch == nil {
		return nil
	}
	return ch.c
}

// Start reads the children, sets the watches and returns once the view is
// loaded, as [Node.Start] does.
func (ch *Children) Start(ctx context.Context) error { return ch.core().start(ctx) }

// Close stops the cache as [Node.Close] does.
func (ch *Children) Close() error { return ch.core().close() }

// Get returns the cached child at path (its full path, as in Curator's
// getCurrentData), or an error matching ErrNoNode.
func (ch *Children) Get(path string) (Entry, error) { return ch.core().get(path) }

// Entries returns the cached children, sorted by path.
func (ch *Children) Entries() ([]Entry, error) { return ch.core().entries() }

// AddListener adds a listener, as [Node.AddListener] does.
func (ch *Children) AddListener(fn func(Event)) (remove func()) { return ch.core().addListener(fn) }

// Tree caches a node and its descendants, to a maximum depth: Curator's
// TreeCache and CuratorCache. It is safe for concurrent use; it must not
// be copied. Build one with [NewTree]; a zero Tree is not usable.
type Tree struct{ c *core }

// NewTree returns a cache of the subtree at path. It checks its arguments
// and does no I/O. It takes [WithMaxDepth], [WithSelector], [WithoutData]
// and [WithStartMode].
func NewTree(client *framework.Client, path string, opts ...TreeOption) (*Tree, error) {
	c, err := newTreeCore(client, path, false, opts)
	if err != nil {
		return nil, err
	}
	return &Tree{c}, nil
}

func (t *Tree) core() *core {
	if t == nil {
		return nil
	}
	return t.c
}

// Start reads the tree, sets its watches and returns once the view is
// loaded, as [Node.Start] does.
func (t *Tree) Start(ctx context.Context) error { return t.core().start(ctx) }

// Close stops the cache as [Node.Close] does.
func (t *Tree) Close() error { return t.core().close() }

// Get returns the cached node at path, or an error matching ErrNoNode.
func (t *Tree) Get(path string) (Entry, error) { return t.core().get(path) }

// Children returns the names of the cached children of path, sorted, or
// an error matching ErrNoNode if path is not cached.
func (t *Tree) Children(path string) ([]string, error) { return t.core().children(path) }

// Entries returns every cached node, sorted by path.
func (t *Tree) Entries() ([]Entry, error) { return t.core().entries() }

// AddListener adds a listener, as [Node.AddListener] does.
func (t *Tree) AddListener(fn func(Event)) (remove func()) { return t.core().addListener(fn) }

// usable returns ErrNotStarted or ErrClosed when the view cannot be read.
func (c *core) usable() error {
	switch {
	case c == nil:
		return errZero
	case c.state == latent:
		return ErrNotStarted
	case c.state == closed:
		return ErrClosed
	}
	return nil
}

// get returns the cached node at p.
func (c *core) get(p string) (Entry, error) {
	if c == nil {
		return Entry{}, c.usable()
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if err := c.usable(); err != nil {
		return Entry{}, err
	}
	rec, ok := c.view.get(p)
	if !ok {
		return Entry{}, fmt.Errorf("%w: %s", ErrNoNode, p)
	}
	return entryOf(p, rec), nil
}

// entries returns the cached nodes, sorted by path.
func (c *core) entries() ([]Entry, error) {
	if c == nil {
		return nil, c.usable()
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if err := c.usable(); err != nil {
		return nil, err
	}
	return c.view.entries(), nil
}

// children returns the names of p's cached children, sorted.
func (c *core) children(p string) ([]string, error) {
	if c == nil {
		return nil, c.usable()
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if err := c.usable(); err != nil {
		return nil, err
	}
	if !c.view.has(p) {
		return nil, fmt.Errorf("%w: %s", ErrNoNode, p)
	}
	return c.view.children(p), nil
}
