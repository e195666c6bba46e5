// Package cache keeps a local view of ZooKeeper nodes up to date: Curator's
// NodeCache (Node), PathChildrenCache (Children), and TreeCache and
// CuratorCache (Tree).
//
// # Use
//
//	t, err := cache.NewTree(client, "/config", cache.WithMaxDepth(2))
//	if err != nil { ... }
//	remove := t.AddListener(func(ev cache.Event) {
//		switch ev.Type {
//		case cache.NodeAdded, cache.NodeUpdated:
//			apply(ev.Entry.Path, ev.Entry.Data)
//		case cache.NodeRemoved:
//			forget(ev.Entry.Path)
//		}
//	})
//	defer remove()
//	if err := t.Start(ctx); err != nil { ... } // the view is loaded
//	defer t.Close()
//	e, err := t.Get("/config/db/url")
//
// Start reads the nodes, sets their watches and returns once the view is
// complete. The view then follows the server: each change is applied to
// it, then reported to the listeners. Reads of the view (Get, Entries,
// Children, Current) do no I/O.
//
// # Options, and Curator's names for them
//
// [NewTree] and [NewChildren] take [TreeOption]s:
//
//   - [WithoutData]: the view and the events hold each node's path and
//     stat, no data: CuratorCache's CuratorCacheStorage.dataNotCached(),
//     PathChildrenCache's and TreeCache's cacheData=false. It saves the
//     data's memory, not the reads (see its doc).
//   - [WithDecompression]: the data is decompressed (gzip) as it is read:
//     Curator's dataIsCompressed (CuratorCache's COMPRESSED_DATA), for
//     nodes written with Create().Compressed(). Data that does not
//     decompress is an Error event matching
//     framework.ErrBadCompressedData, and the node is kept with nil data.
//   - [WithMaxDepth] (Tree): TreeCache's maxDepth.
//   - [WithSelector] (Tree): TreeCache's TreeCacheSelector, as a
//     [Selector] (TraverseChildren, AcceptChild) or [SelectorFuncs]. It
//     shapes the view and the events; the client still watches every node
//     to the maximum depth.
//   - [WithStartMode]: PathChildrenCache.StartMode, mapped onto Start:
//     [StartPostInitializedEvent] (the default, and what TreeCache and
//     CuratorCache do) sends NodeAdded for each node loaded, then
//     Initialized, and Start returns once the view is loaded;
//     [StartBuildInitialCache] returns once the view is loaded and sends no
//     event for the nodes loaded; [StartNormal] returns once the watch is
//     set and sends NodeAdded for each node as the view fills, and no
//     Initialized. Curator's start returns at once in every mode but
//     BUILD_INITIAL_CACHE; here only StartNormal does (run Start on a
//     goroutine of your own for the rest).
//
// A bad value (a negative depth, a nil selector, an unknown mode, a depth
// or selector given to a Children cache) makes the constructor return an
// error matching [ErrInvalidArgument] and framework.ErrInvalidArgument.
//
// # Events, and what a cache can miss
//
// A cache sits on the client's lasting watches ([framework.Client.Watch]):
// a persistent watch's event marks a node, which is then read (on servers
// before 3.6, a one-shot watch is set again by the read that follows its
// event). A change made before that read is folded into it, so a node changed twice quickly may be reported once, with its
// last data: a cache reports each node's versions in increasing order and
// never a wrong final state, but not necessarily every version, exactly
// as Curator's caches. A node deleted and created again between two reads
// is reported as NodeRemoved then NodeAdded. Removals come deepest first,
// as in Curator's TreeCache: when a node is found deleted (or deleted and
// created again), each of its cached descendants is reported NodeRemoved
// before it, so neither the view nor a listener replaying the events
// ever holds a node without its parent.
//
// # Connection states
//
// Listeners get ConnectionSuspended, ConnectionReconnected and
// ConnectionLost as the client reports them. While suspended the view may
// be stale; nothing needs doing. After a reconnect to the same session
// nothing is lost: ZooKeeper keeps the watches and reports what changed
// meanwhile. When the session changes (after ConnectionLost), the cache
// reads every node again on the new session, reports the differences
// (including the old session's ephemeral nodes, now removed), then sends
// Resynced. The cache never gives up on its own; Close it when done.
// Close frees what the cache held (its view, its watch's state): a
// long-lived client that opens and closes caches keeps flat memory. On
// ZooKeeper 3.6 and later Close removes the cache's persistent watch from
// the server; on older servers the one-shot watches a closed cache set
// stay until they fire, and the next cache of the same paths uses them
// instead of setting more (see [framework.WatchBuilder.ForPath]).
//
// # Listeners
//
// Each listener runs on its own goroutine and receives its events in order
// from an unbounded queue: a slow listener delays only itself, never the
// cache, the view or other listeners, and never loses an event; its queue
// grows while it is slow, by one small Event per change (the data is
// shared with the view). A listener may read the view, remove itself, or
// Close the cache. Close waits for listener calls in progress, except
// the caller's own.
//
// # ZooKeeper layout
//
// The caches only read: they create, change and delete nothing, so Java
// and Go processes can cache the same paths and see each other's writes.
// Paths are relative to the client's namespace. A Tree's depth counts
// levels below its root, as in Curator's TreeCache; a Children cache is a
// Tree of depth 1 whose root is not part of the view.
//
// # Cost
//
// On ZooKeeper 3.6 and later a cache stands on one persistent watch
// (recursive for a Tree or a Children cache) for all its nodes, and reads
// each node once to load (twice for a node with children) and once per
// change; older servers get two one-shot watches per node instead (see
// [framework.WatchBuilder.ForPath]). The view keeps per node its path (the
// very string the client's watch keeps, not a copy), its place in its
// parent's sorted list of children (which is also what Tree.Children
// reads), and one record of its stat and data, the stat packed as
// varints that leave out zero fields: about 48 bytes for a data-less node
// never changed, plus the data. Entries are built when asked (Get,
// Entries, events). The client's watch adds 50 to 70 bytes per node and
// the path's bytes. See bench/README.md's cache case (go run ./bench
// cache) for the figures beside Curator's CuratorCache. A cache runs one
// goroutine for its watch, one for its events, one per listener, and up
// to 64 while reads are in flight.
package cache
