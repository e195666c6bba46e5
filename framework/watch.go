package framework

import (
	"context"
	"fmt"
	"math"

	"github.com/go-zookeeper/zk"
)

// WatchMode says what a lasting watch follows (see [Client.Watch]). The modes
// match ZooKeeper 3.6's addWatch: WatchNode and WatchChildren are the two
// halves of PERSISTENT, WatchTree is PERSISTENT_RECURSIVE.
type WatchMode int

const (
	// WatchNode follows one node: its creation, each change of its data,
	// and its deletion. The node need not exist.
	WatchNode WatchMode = iota
	// WatchChildren follows the list of a node's children.
	WatchChildren
	// WatchTree follows a node and its descendants, down to a maximum
	// depth ([WatchBuilder.WithMaxDepth]; unlimited by default).
	WatchTree
)

// WatchEventType is the kind of a WatchEvent.
type WatchEventType int

// The kinds of watch events.
const (
	// WatchCreated: the node exists and was not reported before: it was
	// there at the first read, or was created since.
	WatchCreated WatchEventType = iota + 1
	// WatchChanged: the node's data changed (Data and Stat are the new ones).
	WatchChanged
	// WatchDeleted: the node no longer exists. A node deleted and created
	// again between two reads is reported as WatchDeleted then WatchCreated.
	// A WatchTree reports a node's reported descendants deleted before the
	// node, deepest first: a consumer never holds a node without its parent.
	WatchDeleted
	// WatchChildrenChanged (WatchChildren only): the list of children
	// changed; Children holds it, sorted, and Stat the parent's stat (nil
	// when the parent does not exist).
	WatchChildrenChanged
	// WatchSynced: every node that existed at the first reads has been
	// reported: the consumer's view is complete. Sent once.
	WatchSynced
	// WatchResynced: the session changed, so events may have been missed;
	// every node was read again on the new session, and the differences
	// from what was reported before have been sent, just before this event.
	WatchResynced
	// WatchFailed: a read of Path failed with Err, an error that retrying
	// at once will not fix (such as zk.ErrNoAuth). That node is read again
	// after a growing wait (up to 10 s); what was reported for it stands
	// until a read succeeds. A streak of failures is reported once.
	WatchFailed
)

var watchEventNames = [...]string{"", "CREATED", "CHANGED", "DELETED", "CHILDREN_CHANGED", "SYNCED", "RESYNCED", "FAILED"}

// String returns the type's name, such as "CHANGED", or "UNKNOWN".
func (t WatchEventType) String() string {
	if t > 0 && int(t) < len(watchEventNames) {
		return watchEventNames[t]
	}
	return "UNKNOWN"
}

// WatchEvent is one event of a lasting watch.
type WatchEvent struct {
	Type WatchEventType
	// Path is the node's path, relative to the namespace; for
	// WatchSynced and WatchResynced, the watched path.
	Path string
	// Data and Stat are the node's, as read after the change
	// (WatchCreated, WatchChanged). The receiver owns them.
	Data []byte
	Stat *zk.Stat
	// Children is the sorted list of children (WatchChildrenChanged).
	Children []string
	// Err is the error of a WatchFailed event.
	Err error
}

// WatchBuilder starts a lasting watch: a cheap value, like the other
// operation builders. Without options it watches one node (WatchNode).
type WatchBuilder struct {
	c        *Client
	mode     WatchMode
	maxDepth int
	depthSet bool
}

// Watch starts building a lasting watch.
func (c *Client) Watch() WatchBuilder { return WatchBuilder{c: c} }

// WithMode sets what the watch follows: WatchNode (the default),
// WatchChildren or WatchTree.
func (b WatchBuilder) WithMode(m WatchMode) WatchBuilder { b.mode = m; return b }

// WithMaxDepth limits a WatchTree to d levels below the watched node: 0
// watches the node alone, 1 the node and its children. A negative d is an
// error, as is a depth on another mode.
func (b WatchBuilder) WithMaxDepth(d int) WatchBuilder { b.maxDepth, b.depthSet = d, true; return b }

// ForPath starts the watch on path and returns its events. The channel
// first carries the current state (WatchCreated for each node that exists,
// or WatchChildrenChanged with the list), then WatchSynced, then every
// change until ctx ends or the client closes; then it is closed, once no
// goroutine of the watch is left. It returns an error, and starts
// nothing, for a bad path, mode or depth, a nil or done ctx, or a client
// that is not started or is closed.
//
// # How it works
//
// Where the server has addWatch (ZooKeeper 3.6 and later), the watch
// stands on one persistent watch, set before the first read: recursive
// (PERSISTENT_RECURSIVE) for a WatchTree that looks below its node,
// plain (PERSISTENT) for WatchNode, WatchChildren and a WatchTree of
// depth 0. Its events only mark the nodes they name (events below the
// maximum depth are ignored); the watch's goroutine then reads each
// marked node once, without a watch, and reports what it reads. Changes
// that come before that read are coalesced into the state it reads, so a
// consumer may miss intermediate versions, never the final state, and
// sees each node's versions in increasing order. A WatchTree lists
// children only at the first load and after each resync, and when a node
// with children is first reported: a child's creation is an event of its
// own. Several watches of the client on one path share one server watch
// (see "Persistent watches" in the package doc, which also says how
// one-shot watches of the client on the same paths are served).
//
// A server without addWatch (3.5 and older) gets one-shot watches
// instead: each node's data (and, where children are followed, its
// children) is read with a watch set in the same request, and after each
// watch event it is read again the same way. No change can fall between a
// read and its watch; the events and their order are the same.
//
// After a reconnect, on the same session or a new one, ZooKeeper does not
// replay the events a persistent watch missed (ZOOKEEPER-4698): once the
// watch is set again, every node is read again and the differences
// (created, changed, deleted nodes) are sent. When the session changed
// (an expiry, or the client's own Lost after a whole session timeout
// without a server), WatchResynced follows them; on the same session
// nothing follows them, as before. A reconnect that comes before the
// resync is complete restarts it: one WatchResynced follows both. (On
// one-shot watches a reconnect to the same session needs no re-read: the
// client re-sends the watches and the server reports what changed.)
//
// # Cost, and slow receivers
//
// The watch runs one goroutine, plus up to 64 short-lived ones while reads
// are in flight. On a persistent watch a WatchTree costs one ZooKeeper
// watch for the whole tree, one read per node to load (two for a node
// with children), one read per change, and 50 to 70 bytes of client
// memory per node (a map entry of its path and versions; the path's bytes
// are those of the events' Path); what a consumer keeps of the events
// (Data, Stat) is its own. Events are routed by the client's event
// callback, without a goroutine per watch. On one-shot watches it costs,
// per node, two ZooKeeper watches (one at the maximum depth; shared with
// other lasting watches of the client on the same node), two reads to
// load, and about 1 KB of client memory (go-zookeeper's record of each
// watch, the client's entry for it, and the node's state). A receiver
// that does not keep up never blocks the client or other watches: this
// watch stops re-reading until the receiver takes the event, so changes
// meanwhile are coalesced into the next read. Its memory does not grow
// with the rate of changes (at most one pending re-read per node), and
// what it sees is late, never wrong.
//
// # When the watch ends
//
// The watch then leaves nothing of its own in the client: its nodes, its
// reads' state and its entries in the client's tables of watches are
// freed, and the channel is closed once its persistent watch is removed
// from the server (removeWatches; bounded by 10 s, and at once while the
// client is disconnected, the server having dropped the connection's
// watches), unless another watch of the client still needs that path (it
// is then removed once none does). On one-shot watches, the ZooKeeper
// watches it set cannot be removed that way on servers before 3.6: they
// stay on the server, and in go-zookeeper's own table, until they fire or
// the session ends. The client sets no second watch of a kind on a path
// while go-zookeeper holds one, live: such a read is sent without a watch
// (the held watch's next event serves both), so watches of the same
// paths, at once or one after another, share them. A client that opens
// and closes watches on the same paths keeps flat memory; watches on ever
// new paths leave up to about 0.5 KB per path and kind until those fire.
func (b WatchBuilder) ForPath(ctx context.Context, path string) (<-chan WatchEvent, error) {
	c := b.c
	maxDepth := math.MaxInt32
	switch {
	case b.mode < WatchNode || b.mode > WatchTree:
		return nil, fmt.Errorf("%w: watch %s: unknown mode %d", ErrInvalidArgument, path, b.mode)
	case b.depthSet && b.mode != WatchTree:
		return nil, fmt.Errorf("%w: watch %s: a maximum depth applies to WatchTree only", ErrInvalidArgument, path)
	case b.depthSet && b.maxDepth < 0:
		return nil, fmt.Errorf("%w: watch %s: maximum depth %d is below 0", ErrInvalidArgument, path, b.maxDepth)
	case b.depthSet:
		maxDepth = min(b.maxDepth, math.MaxInt32)
	}
	if _, err := c.prepare(ctx, path); err != nil {
		return nil, err
	}
	l := &lasting{
		c: c, mode: b.mode, maxDepth: int32(maxDepth), rootPath: path,
		out:  make(chan WatchEvent, 64),
		wake: make(chan struct{}, 1),
	}
	l.ctx, l.cancel = context.WithCancel(ctx)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		l.cancel()
		return nil, ErrClosed
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go l.run()
	return l.out, nil
}
