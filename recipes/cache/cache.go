package cache

import (
	"context"
	"errors"
	"sync"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/goid"
	"github.com/go-curator/curator/internal/queue"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// Errors of the caches. A bad argument matches ErrInvalidArgument and the
// framework's sentinel for the problem: framework.ErrNilClient,
// framework.ErrInvalidPath, or framework.ErrInvalidArgument.
var (
	ErrInvalidArgument = errors.New("cache: invalid argument")
	ErrNotStarted      = errors.New("cache: not started")
	ErrAlreadyStarted  = errors.New("cache: already started")
	ErrClosed          = errors.New("cache: closed")
	// ErrNoNode reports a path that is not in the cache's view. It also
	// matches framework.ErrNoNode and zk.ErrNoNode, as the client's own
	// no-node errors do.
	ErrNoNode error = noNode{}
)

// noNode is ErrNoNode's type: it matches the client's no-node sentinels.
type noNode struct{}

func (noNode) Error() string { return "cache: no such node in the cache" }

func (noNode) Is(target error) bool {
	return target == framework.ErrNoNode || target == zk.ErrNoNode
}

// errZero is the error of a method of a nil or zero Node, Children or Tree.
var errZero = recipe.BadArg(ErrInvalidArgument, "nil or zero Node, Children or Tree (make one with NewNode, NewChildren or NewTree)")

// Entry is one cached node: Curator's ChildData. Its Data is shared with
// the cache and with listeners: do not modify it.
type Entry struct {
	Path string // relative to the client's namespace
	Data []byte
	Stat zk.Stat
}

// EventType is the kind of an Event.
type EventType int

// The kinds of cache events, as Curator's TreeCacheEvent names them.
const (
	// NodeAdded: a node entered the view (Entry).
	NodeAdded EventType = iota + 1
	// NodeUpdated: a node's data changed (Entry, and Old before it).
	NodeUpdated
	// NodeRemoved: a node left the view (Entry is its last cached state).
	NodeRemoved
	// Initialized: the initial view is complete. Sent once, after the
	// NodeAdded events of the nodes that existed at Start.
	Initialized
	// Resynced: the client's session changed, so changes may have been
	// missed; the view was read again on the new session and the
	// differences were sent, just before this event, as NodeAdded,
	// NodeUpdated and NodeRemoved events.
	Resynced
	// ConnectionSuspended, ConnectionReconnected and ConnectionLost are the
	// client's connection states. While suspended the view may be stale.
	ConnectionSuspended
	ConnectionReconnected
	ConnectionLost
	// Error: the node at Entry.Path could not be read (Err), for a reason
	// retrying at once will not fix, such as zk.ErrNoAuth. It is read
	// again after a growing wait (up to 10 s), and reported once until a
	// read succeeds; its cached state stands until then. Under
	// WithDecompression, Err may instead match
	// framework.ErrBadCompressedData: the node's data, as read, did not
	// decompress, and the NodeAdded or NodeUpdated that follows carries
	// its stat and nil Data (see WithDecompression).
	Error
)

var eventNames = [...]string{"", "NODE_ADDED", "NODE_UPDATED", "NODE_REMOVED", "INITIALIZED", "RESYNCED",
	"CONNECTION_SUSPENDED", "CONNECTION_RECONNECTED", "CONNECTION_LOST", "ERROR"}

// String returns the type's name as Curator spells it ("NODE_ADDED", ...),
// or "UNKNOWN".
func (t EventType) String() string {
	if t > 0 && int(t) < len(eventNames) {
		return eventNames[t]
	}
	return "UNKNOWN"
}

// Event is one change of a cache's view, or of its client's connection.
type Event struct {
	Type  EventType
	Entry Entry // the node (NodeAdded, NodeUpdated, NodeRemoved; Error: Path only)
	Old   Entry // the node before a NodeUpdated
	Err   error // Error's error
}

type lifecycle int

const (
	latent lifecycle = iota
	started
	closed
)

// core is the one engine behind Node, Children and Tree: a lasting watch
// of the client (framework.Client.Watch) applied to a map.
type core struct {
	client   *framework.Client
	path     string
	mode     framework.WatchMode
	maxDepth int  // WatchTree only; -1 for no limit
	kidsOnly bool // Children: the watched node itself is not in the view
	noData   bool // WithoutData: entries and events carry no data
	unzip    bool // WithDecompression (never with noData)
	selector Selector
	// startMode is when start returns and what the initial nodes send.
	startMode StartMode

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	ready  chan struct{} // closed at Initialized
	done   chan struct{} // closed when run ends

	mu         sync.RWMutex
	state      lifecycle
	running    bool
	quiet      bool // a StartBuildInitialCache cache is loading: node events are not posted
	view       *view
	listeners  map[*queue.Queue[Event]]struct{}
	removeConn func()
	closeOnce  sync.Once
}

func newCore(client *framework.Client, path string, mode framework.WatchMode) (*core, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &core{
		client: client, path: path, mode: mode, maxDepth: -1, startMode: StartPostInitializedEvent,
		ctx: ctx, cancel: cancel, ready: make(chan struct{}), done: make(chan struct{}),
		view: newView(path), listeners: make(map[*queue.Queue[Event]]struct{}),
	}, nil
}

// start starts the watch and waits for the initial view.
func (c *core) start(ctx context.Context) error {
	if c == nil {
		return errZero
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	switch c.state {
	case closed:
		c.mu.Unlock()
		return ErrClosed
	case started:
		c.mu.Unlock()
		return ErrAlreadyStarted
	}
	c.state = started
	c.quiet = c.startMode == StartBuildInitialCache
	c.removeConn = c.client.AddListener(c.onState)
	w := c.client.Watch().WithMode(c.mode)
	if c.maxDepth >= 0 {
		w = w.WithMaxDepth(c.maxDepth)
	}
	events, err := w.ForPath(c.ctx, c.path)
	if err == nil {
		c.running = true
		go c.run(events)
	}
	c.mu.Unlock()
	if err != nil {
		c.close()
		return recipe.Wrapf(ErrInvalidArgument, "cache: start %s: %w", c.path, err)
	}
	if c.startMode == StartNormal {
		return nil // the view loads in the background
	}
	select {
	case <-c.ready:
		return nil
	case <-c.done:
		err = ErrClosed // Close, or the client closed
		if c.client.Check() != nil {
			err = errtext.Errorf("%w: %w", ErrClosed, c.client.Check())
		}
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.close()
	return errtext.Errorf("cache: start %s: %w", c.path, err)
}

// run applies the watch's events until the watch ends (at Close, or when
// the client closes).
func (c *core) run(events <-chan framework.WatchEvent) {
	defer close(c.done)
	for ev := range events {
		c.apply(ev)
	}
}

func (c *core) apply(ev framework.WatchEvent) {
	// The selector is the caller's code: it runs before the lock is
	// taken, once per node created or found.
	selected := true
	if c.selector != nil && ev.Type == framework.WatchCreated && ev.Path != c.path {
		parent, _ := framework.SplitPath(ev.Path)
		selected = c.selector.TraverseChildren(parent) && c.selector.AcceptChild(ev.Path)
	}
	// Decompression too runs before the lock is taken.
	data, unzipErr := ev.Data, error(nil)
	switch {
	case ev.Type != framework.WatchCreated && ev.Type != framework.WatchChanged:
	case c.noData:
		data = nil
	case c.unzip && data != nil && !(c.kidsOnly && ev.Path == c.path):
		data, unzipErr = c.decompress(ev.Path, data)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != started {
		return
	}
	switch ev.Type {
	case framework.WatchCreated, framework.WatchChanged:
		if c.kidsOnly && ev.Path == c.path {
			return
		}
		if c.selector != nil && !c.view.has(ev.Path) && !c.selects(ev, selected) {
			return
		}
		rec := encodeRecord(ev.Stat, data)
		if unzipErr != nil {
			c.post(Event{Type: Error, Entry: Entry{Path: ev.Path}, Err: unzipErr})
		}
		e := entryOf(ev.Path, rec)
		if old, had := c.view.put(ev.Path, rec); had {
			c.post(Event{Type: NodeUpdated, Entry: e, Old: entryOf(ev.Path, old)})
			return
		}
		c.post(Event{Type: NodeAdded, Entry: e})
	case framework.WatchDeleted:
		old, had := c.view.remove(ev.Path)
		if !had {
			return
		}
		c.post(Event{Type: NodeRemoved, Entry: entryOf(ev.Path, old)})
	case framework.WatchSynced:
		c.view.trim()
		close(c.ready)
		quiet := c.quiet
		c.quiet = false
		if !quiet && c.startMode == StartPostInitializedEvent {
			c.post(Event{Type: Initialized})
		}
	case framework.WatchResynced:
		c.view.trim()
		c.post(Event{Type: Resynced})
	case framework.WatchFailed:
		c.post(Event{Type: Error, Entry: Entry{Path: ev.Path}, Err: ev.Err})
	}
}

// decompress returns data decompressed with gzip, or nil and an error
// matching framework.ErrBadCompressedData.
func (c *core) decompress(p string, data []byte) ([]byte, error) {
	out, err := framework.GzipCompression{}.Decompress(p, data)
	if err != nil {
		if !errors.Is(err, framework.ErrBadCompressedData) {
			err = errtext.Errorf("%w: %w", framework.ErrBadCompressedData, err)
		}
		return nil, errtext.Errorf("cache: decompress %s: %w", p, err)
	}
	return out, nil
}

// selects reports whether a node not in the view enters it: the root
// always does; another node when the selector chose it (selected) and its
// parent is in the view. A change of a node left out is no news. Called
// with c.mu held.
func (c *core) selects(ev framework.WatchEvent, selected bool) bool {
	if ev.Path == c.path {
		return true
	}
	if ev.Type != framework.WatchCreated || !selected {
		return false
	}
	parent, _ := framework.SplitPath(ev.Path)
	return c.view.has(parent)
}

// onState passes the client's connection states on. It runs on the
// client's listener goroutine.
func (c *core) onState(s framework.ConnectionState) {
	var t EventType
	switch s {
	case framework.Suspended:
		t = ConnectionSuspended
	case framework.Reconnected:
		t = ConnectionReconnected
	case framework.Lost:
		t = ConnectionLost
	default:
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == started {
		c.post(Event{Type: t})
	}
}

// post queues ev for every listener; while a StartBuildInitialCache
// cache loads, node events are not posted. Called with c.mu held.
func (c *core) post(ev Event) {
	if c.quiet && ev.Type <= NodeRemoved {
		return
	}
	for l := range c.listeners {
		l.Post(ev)
	}
}

// addListener adds fn; see Tree.AddListener.
func (c *core) addListener(fn func(Event)) (remove func()) {
	if c == nil || fn == nil {
		return func() {}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == closed {
		return func() {}
	}
	l := queue.New(fn)
	c.listeners[l] = struct{}{}
	return func() {
		c.mu.Lock()
		delete(c.listeners, l)
		c.mu.Unlock()
		l.Stop()
	}
}

// close stops the watch and the listeners and waits for them, except for
// a listener that calls it. The view is cleared.
func (c *core) close() error {
	if c == nil {
		return errZero
	}
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.state = closed
		ls := c.listeners
		c.listeners = nil
		remove, running := c.removeConn, c.running
		c.view = nil
		c.mu.Unlock()
		if remove != nil {
			remove()
		}
		c.cancel()
		if running {
			<-c.done
		}
		me := goid.Get()
		for l := range ls {
			l.Stop()
		}
		for l := range ls {
			if l.GoroutineID() != me {
				<-l.Done()
			}
		}
	})
	return nil
}
