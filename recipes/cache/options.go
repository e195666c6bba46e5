package cache

import (
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
)

// TreeOption configures a Tree or a Children cache (a Children cache is a
// Tree of depth 1 whose root is not in the view). Each option's doc says
// which caches take it; given to another, or given a bad value, it makes
// [NewTree] or [NewChildren] return an error matching
// [ErrInvalidArgument] and framework.ErrInvalidArgument.
type TreeOption func(*treeOptions) error

// treeOptions are what the TreeOptions set.
type treeOptions struct {
	children bool // set by NewChildren before the options apply
	maxDepth int  // -1 for no limit
	selector Selector
	noData   bool
	unzip    bool
	start    StartMode
}

// WithMaxDepth limits a Tree to d levels below its root: 0 caches the
// root alone, 1 the root and its children. The default is no limit. It is
// Curator's TreeCache.Builder.setMaxDepth. A negative d is an error, and
// so is this option on a Children cache (its depth is 1).
func WithMaxDepth(d int) TreeOption {
	return func(o *treeOptions) error {
		if o.children {
			return recipe.BadArg(ErrInvalidArgument, "a Children cache takes no maximum depth (it caches one level)")
		}
		if d < 0 {
			return recipe.BadArg(ErrInvalidArgument, "maximum depth %d is below 0", d)
		}
		o.maxDepth = d
		return nil
	}
}

// Selector chooses which nodes a Tree caches: Curator's TreeCacheSelector.
// Paths are relative to the client's namespace, as in [Entry]. A node is
// in the view when its parent is, TraverseChildren(parent) is true and
// AcceptChild(node) is true; the root is always in (when it exists). So a
// node whose children are not traversed is cached without them, and a
// child that is not accepted is left out with all its descendants. See
// [SelectorFuncs] for a Selector made of two funcs.
//
// Both methods must give the same answer for the same path every time,
// and must not call the cache's methods: they run on the cache's own
// goroutine, once for each node created (or found at Start or after a
// resync), before its NodeAdded.
//
// The selector shapes the view and the events, not what the client
// watches: the cache's lasting watch still follows every node of the
// tree to its maximum depth (see the package doc's Cost), where Curator's
// TreeCache sets no watch on the nodes it leaves out. Use [WithMaxDepth]
// to bound the watches.
type Selector interface {
	// TraverseChildren reports whether the children of the node at path
	// are considered for the view (Curator's traverseChildren).
	TraverseChildren(path string) bool
	// AcceptChild reports whether the node at path is cached, given that
	// its parent's children are traversed (Curator's acceptChild).
	AcceptChild(path string) bool
}

// SelectorFuncs is a [Selector] made of two funcs; a nil func answers
// true, as Curator's DefaultTreeCacheSelector does. The zero value
// selects every node.
type SelectorFuncs struct {
	Traverse func(path string) bool
	Accept   func(path string) bool
}

// TraverseChildren calls s.Traverse, or returns true when it is nil.
func (s SelectorFuncs) TraverseChildren(path string) bool {
	return s.Traverse == nil || s.Traverse(path)
}

// AcceptChild calls s.Accept, or returns true when it is nil.
func (s SelectorFuncs) AcceptChild(path string) bool {
	return s.Accept == nil || s.Accept(path)
}

// WithSelector makes a Tree cache only the nodes s selects: Curator's
// TreeCache.Builder.setSelector. A nil s is an error, and so is this
// option on a Children cache.
func WithSelector(s Selector) TreeOption {
	return func(o *treeOptions) error {
		if o.children {
			return recipe.BadArg(ErrInvalidArgument, "a Children cache takes no selector")
		}
		if s == nil {
			return recipe.BadArg(ErrInvalidArgument, "nil selector")
		}
		o.selector = s
		return nil
	}
}

// WithoutData makes the cache keep no data: Curator's
// CuratorCacheStorage.dataNotCached, and PathChildrenCache's and
// TreeCache's cacheData=false. The view holds each node's path and stat
// only (Entry.Data is nil), and so do the events: NodeUpdated still comes
// when a node's data changes, with the new stat (Curator's CuratorCache
// passes the new data to its listeners; this cache does not). A Tree or
// a Children cache takes it.
//
// The client still reads each node's data, with its watch, as it follows
// the tree (the lasting watch reads data and stat in one request): the
// option saves memory, not requests. The data is dropped as it arrives,
// so the cache holds no copy of it.
func WithoutData() TreeOption {
	return func(o *treeOptions) error {
		o.noData = true
		return nil
	}
}

// WithDecompression makes the cache decompress each node's data with
// gzip (framework.GzipCompression), as Curator's caches do when built
// with dataIsCompressed (CuratorCache.Options.COMPRESSED_DATA,
// TreeCache.Builder.setDataIsCompressed, PathChildrenCache's
// dataIsCompressed): for nodes written with Create().Compressed() or
// SetData().Compressed(), by a go-curator client or by Curator. The view
// and the events hold the decompressed data; the stat is the server's
// (its DataLength is the compressed length). A Tree or a Children cache
// takes it.
//
// The cache decompresses what its lasting watch reads, with gzip: a
// client built with another framework.CompressionProvider, or with
// EnableCompression, does not change what the cache does (the client's
// provider is not visible to the cache).
//
// Data that does not decompress (written uncompressed, or corrupt) is
// reported by an Error event whose Err matches
// framework.ErrBadCompressedData, followed by the node's NodeAdded or
// NodeUpdated with its stat and nil Data: the node stays in the view, so
// its children do too, and its next change is decompressed again. It is
// not read again (its bytes would not change). With [WithoutData] there
// is no data to decompress, and the option does nothing.
func WithDecompression() TreeOption {
	return func(o *treeOptions) error {
		o.unzip = true
		return nil
	}
}

// StartMode says when Start returns and which events a cache sends for
// the nodes that exist when it starts: Curator's PathChildrenCache.StartMode.
// The zero StartMode is not a mode.
type StartMode int

const (
	// StartNormal: Start returns once the cache's watch is set, without
	// waiting for the view to load; listeners get NodeAdded for each node
	// found, as it is found, and no Initialized. Until then the view is
	// partial. Curator's NORMAL.
	StartNormal StartMode = iota + 1
	// StartBuildInitialCache: Start returns once the view is loaded, and
	// listeners get no event for the nodes loaded, and no Initialized:
	// only the changes after the load. A change made during the load is
	// in the view Start leaves, without an event. Curator's
	// BUILD_INITIAL_CACHE.
	StartBuildInitialCache
	// StartPostInitializedEvent: listeners get NodeAdded for each node
	// loaded, then Initialized; Start returns once the view is loaded (so
	// after Initialized is queued), where Curator's start returns at once:
	// a caller that must not wait starts the cache on another goroutine,
	// or uses StartNormal. Curator's POST_INITIALIZED_EVENT, and the
	// default (what Curator's TreeCache and CuratorCache do).
	StartPostInitializedEvent
)

var startModeNames = [...]string{"", "NORMAL", "BUILD_INITIAL_CACHE", "POST_INITIALIZED_EVENT"}

// String returns the mode's name as Curator spells it ("NORMAL", ...), or
// "UNKNOWN".
func (m StartMode) String() string {
	if m > 0 && int(m) < len(startModeNames) {
		return startModeNames[m]
	}
	return "UNKNOWN"
}

// WithStartMode sets when Start returns and which events the initial
// nodes bring (see [StartMode]); the default is
// StartPostInitializedEvent. A Tree or a Children cache takes it; an
// unknown mode is an error.
func WithStartMode(m StartMode) TreeOption {
	return func(o *treeOptions) error {
		if m < StartNormal || m > StartPostInitializedEvent {
			return recipe.BadArg(ErrInvalidArgument, "unknown start mode %d", int(m))
		}
		o.start = m
		return nil
	}
}

// newTreeCore builds the core of a Tree (children false) or of a Children
// cache from its options.
func newTreeCore(client *framework.Client, path string, children bool, opts []TreeOption) (*core, error) {
	c, err := newCore(client, path, framework.WatchTree)
	if err != nil {
		return nil, err
	}
	o := treeOptions{children: children, maxDepth: -1, start: StartPostInitializedEvent}
	if children {
		o.maxDepth = 1
	}
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	c.maxDepth, c.kidsOnly = o.maxDepth, children
	c.selector, c.noData, c.startMode = o.selector, o.noData, o.start
	c.unzip = o.unzip && !o.noData
	return c, nil
}
