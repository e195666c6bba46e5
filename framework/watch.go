package framework

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// WatchMode says what a lasting watch follows (see Client.Watch). The modes
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
	// depth (WatchBuilder.WithMaxDepth; unlimited by default).
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

// WatchBuilder starts a lasting watch. The zero value of its options
// watches one node (WatchNode).
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
// ZooKeeper 3.8 servers have persistent watches (addWatch), but
// go-zookeeper v1.0.4 cannot send that request, so the client emulates
// them with one-shot watches: each node's data (and, where children are
// followed, its children) is read with a watch set in the same request,
// and after each watch event it is read again the same way. No change can
// fall between a read and its watch; changes that come before the re-read
// are coalesced into the state it reads, so a consumer may miss
// intermediate versions, never the final state, and sees each node's
// versions in increasing order. A persistent watch would report every
// change; the events and their order are otherwise the same, so a client
// built on a go-zookeeper with addWatch can serve this API unchanged.
//
// On a reconnect to the same session, ZooKeeper keeps the watches (the
// client re-sends them) and reports what changed meanwhile. When the
// session changes (an expiry, or the client's own Lost after a whole
// session timeout without a server), every watch of the old session is
// gone: the watch reads every node again on the new session, sets its
// watches again, sends the differences (created, changed, deleted nodes)
// and then WatchResynced. A session change that comes before the resync is
// complete restarts it: one WatchResynced follows both.
//
// # Cost, and slow receivers
//
// The watch runs one goroutine, plus up to 64 short-lived ones while reads
// are in flight. Watch events are routed by the client's event callback,
// without a goroutine per ZooKeeper watch: a WatchTree costs, per node, two
// ZooKeeper watches (one at the maximum depth), two reads to load, and
// about 1 KB of client memory (go-zookeeper's record of each watch, the
// client's entry for it, and the node's state). A persistent watch would
// cost one watch for the whole tree and one read per node. A receiver
// that does not keep up never blocks the client or other
// watches: this watch stops re-reading until the receiver takes the
// event, so changes meanwhile are coalesced into the next read. Its memory
// does not grow with the rate of changes (at most one pending re-read per
// node), and what it sees is late, never wrong.
//
// When the watch ends, the ZooKeeper watches it set stay on the server
// until they fire or the session ends (ZooKeeper 3.8's removeWatches is
// not available either); they cost a little memory, no goroutine.
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
		return nil, fmt.Errorf("framework: watch %s: %w", path, err)
	}
	l := &lasting{
		c: c, mode: b.mode, maxDepth: int32(maxDepth),
		out:     make(chan WatchEvent, 64),
		wake:    make(chan struct{}, 1),
		results: make(chan readResult, maxReads+2),
		nodes:   make(map[string]*wnode),
	}
	l.root = &wnode{path: path}
	l.nodes[path] = l.root
	l.ctx, l.cancel = context.WithCancel(ctx)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		l.cancel()
		return nil, fmt.Errorf("framework: watch %s: %w", path, ErrClosed)
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go l.run()
	return l.out, nil
}

// maxReads bounds the reads a watch has in flight at once.
const maxReads = 64

// Kinds of lasting interest in a node.
const (
	kindData     uint8 = 1 << iota // data and existence
	kindChildren                   // list of children
)

// go-zookeeper's watch types, as bits: a watch event fires the types
// go-zookeeper's notifyWatches does.
const (
	bitExist uint8 = 1 << iota
	bitData
	bitChild
)

// wnode is one node of a lasting watch. Only the watch's goroutine touches
// it, except path, parent and depth, which never change.
type wnode struct {
	path     string
	parent   *wnode
	kids     []*wnode
	idx      int // index in parent.kids
	depth    int32
	present  bool // reported as existing
	removed  bool // no longer part of the watch
	gone     bool // read as missing while it had descendants: they are read first
	queued   bool
	dirty    uint8 // kinds to read again
	inflight uint8 // kinds being read
	pending  uint8 // kinds the current round still waits for
	czxid    int64
	mzxid    int64
	pzxid    int64
	failWait time.Duration
}

// readResult is one read of one node.
type readResult struct {
	n      *wnode
	kind   uint8
	round  int
	noNode bool
	data   []byte
	kids   []string
	stat   *zk.Stat
	err    error
}

// lasting is one lasting watch: its goroutine (run) owns the nodes and
// turns reads into events.
type lasting struct {
	c        *Client
	mode     WatchMode
	maxDepth int32
	root     *wnode
	out      chan WatchEvent
	ctx      context.Context
	cancel   context.CancelFunc

	mu    sync.Mutex // guards fired and dead
	fired []firing   // notifications from the registry, not yet taken
	dead  bool
	wake  chan struct{}

	nodes     map[string]*wnode
	queue     []*wnode
	inflight  int
	results   chan readResult
	reads     sync.WaitGroup
	sess      Session
	round     int
	pending   int // reads the round still waits for
	roundDone bool
	synced    bool
	retries   map[*wnode]*time.Timer
}

type firing struct {
	n    *wnode
	kind uint8
}

func (l *lasting) run() {
	defer l.c.wg.Done()
	defer close(l.out)
	defer l.stop()
	defer l.reads.Wait()
	defer l.cancel()
	stop := context.AfterFunc(l.c.ctx, l.cancel)
	defer stop()
	if !l.newSession() {
		return
	}
	l.startRound()
	for l.ctx.Err() == nil {
		l.dispatch()
		select {
		case <-l.ctx.Done():
		case <-l.wake:
			l.takeFired()
		case r := <-l.results:
			l.inflight--
			l.apply(r)
		case <-l.sess.Lost():
			if l.newSession() {
				l.startRound()
			}
		}
	}
}

// stop ends the notifications and the retry timers.
func (l *lasting) stop() {
	l.mu.Lock()
	l.dead, l.fired = true, nil
	l.mu.Unlock()
	for _, t := range l.retries {
		t.Stop()
	}
}

// newSession waits for a connected session to read on.
func (l *lasting) newSession() bool {
	for {
		s, err := l.c.CurrentSession(l.ctx)
		if err == nil {
			l.sess = s
			return true
		}
		if l.ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return false
		}
		if l.c.sleep(l.ctx, 100*time.Millisecond) != nil {
			return false
		}
	}
}

// startRound reads every node again (on a new session): the round ends
// with WatchSynced or WatchResynced once all those reads are applied.
func (l *lasting) startRound() {
	l.round++
	l.pending, l.roundDone = 0, false
	for _, n := range l.nodes {
		n.pending = l.kindsFor(n)
		l.pending += bits(n.pending)
		l.mark(n, n.pending)
	}
}

// kindsFor returns what is read of n.
func (l *lasting) kindsFor(n *wnode) uint8 {
	switch l.mode {
	case WatchNode:
		return kindData
	case WatchChildren:
		return kindChildren
	}
	if n.present && n.depth < l.maxDepth {
		return kindData | kindChildren
	}
	return kindData
}

func bits(k uint8) int { return int(k&kindData) + int(k&kindChildren)>>1 }

// mark queues kinds of n to be read.
func (l *lasting) mark(n *wnode, k uint8) {
	if k == 0 || n.removed {
		return
	}
	n.dirty |= k
	if !n.queued {
		n.queued = true
		l.queue = append(l.queue, n)
	}
}

// notify is called by the registry, from go-zookeeper's event callback,
// when a watch of n fires or ends. It never blocks.
func (l *lasting) notify(n *wnode, kind uint8) {
	l.mu.Lock()
	if l.dead {
		l.mu.Unlock()
		return
	}
	l.fired = append(l.fired, firing{n, kind})
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *lasting) takeFired() {
	l.mu.Lock()
	fired := l.fired
	l.fired = nil
	l.mu.Unlock()
	for _, f := range fired {
		l.mark(f.n, f.kind)
	}
}

// dispatch starts reads for queued nodes, up to maxReads at once. A tree
// node's children are read only while it exists.
func (l *lasting) dispatch() {
	for l.inflight < maxReads && len(l.queue) > 0 {
		n := l.queue[0]
		l.queue[0] = nil
		l.queue = l.queue[1:]
		n.queued = false
		if n.removed {
			continue
		}
		for _, k := range [...]uint8{kindData, kindChildren} {
			if n.dirty&k == 0 || n.inflight&k != 0 {
				continue
			}
			n.dirty &^= k
			if k == kindChildren && l.mode == WatchTree && !n.present {
				l.done(n, k)
				l.checkRound()
				continue
			}
			n.inflight |= k
			l.inflight++
			l.reads.Add(1)
			go l.read(n, k, l.round)
		}
	}
}

// read reads one kind of n with a watch, through the retry loop and past
// it: while the connection is down it waits for it, until the watch ends.
func (l *lasting) read(n *wnode, kind uint8, round int) {
	defer l.reads.Done()
	r := readResult{n: n, kind: kind, round: round}
	for {
		r.err = l.c.Retry(l.ctx, func() error { return l.readOnce(&r) })
		if r.err == nil || !IsRetryable(r.err) || l.ctx.Err() != nil {
			break
		}
		if err := l.c.BlockUntilConnected(l.ctx); err != nil {
			r.err = err
			break
		}
	}
	l.results <- r // never blocks: room for every read in flight
}

// readOnce is one attempt: a read that sets a watch, registered with the
// client's registry before the request goes out, so that no event for it
// can come first. A missing watched node (or WatchChildren's parent) is
// watched for its creation.
func (l *lasting) readOnce(r *readResult) error {
	conn, w := l.c.connWire()
	full := fixPath(l.c.ns, r.n.path)
	reg := &l.c.reg
	r.noNode, r.data, r.kids, r.stat = false, nil, nil, nil
	for {
		var err error
		if r.kind == kindData {
			a := reg.pre(conn, full, l, r.n, kindData, bitData)
			var ch <-chan zk.Event
			r.data, r.stat, ch, err = conn.GetW(full)
			reg.attach(a, ch, err, w, bitData)
		} else {
			a := reg.pre(conn, full, l, r.n, kindChildren, bitChild)
			var ch <-chan zk.Event
			r.kids, r.stat, ch, err = conn.ChildrenW(full)
			reg.attach(a, ch, err, w, bitChild)
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		r.noNode = true
		if r.n != l.root || (l.mode == WatchTree && r.kind == kindChildren) {
			return nil // a tree's nodes are found through their parents
		}
		a := reg.pre(conn, full, l, r.n, r.kind, bitExist|bitData)
		ok, _, ch, err := conn.ExistsW(full)
		mask := bitExist
		if ok {
			mask = bitData
		}
		reg.attach(a, ch, err, w, mask)
		if err != nil || !ok {
			return err
		}
		r.noNode = false // created in between: read it
	}
}

// apply turns one read into events.
func (l *lasting) apply(r readResult) {
	n := r.n
	n.inflight &^= r.kind
	if n.removed {
		return
	}
	switch {
	case r.err != nil:
		if l.ctx.Err() != nil || errors.Is(r.err, ErrClosed) {
			return
		}
		if n.failWait == 0 { // once per streak of failures
			l.emit(WatchEvent{Type: WatchFailed, Path: n.path, Err: r.err})
		}
		l.retryLater(n, r.kind)
	case r.kind == kindData:
		n.failWait = 0
		l.applyData(n, r)
	default:
		n.failWait = 0
		l.applyChildren(n, r)
	}
	if r.round == l.round && n.dirty&r.kind == 0 {
		l.done(n, r.kind) // else the read queued after this one will do
	}
	if !n.removed && n.dirty != 0 && !n.queued {
		n.queued = true
		l.queue = append(l.queue, n)
	}
	l.checkRound()
}

func (l *lasting) applyData(n *wnode, r readResult) {
	if r.noNode {
		if len(n.kids) > 0 {
			// The node was gone when read, but its descendants may have
			// been read since, in a newer incarnation: each is read
			// again first, and the node once none is left.
			n.gone = true
			l.markTree(n)
			return
		}
		l.vanish(n)
		return
	}
	n.gone = false
	if p := n.parent; p != nil && p.gone {
		l.markRound(p, kindData) // p exists again, since n does
	}
	st := r.stat
	switch {
	case n.present && st.Czxid != n.czxid: // deleted and created again
		l.emit(WatchEvent{Type: WatchDeleted, Path: n.path})
		l.markTree(n) // each descendant tells its own incarnation
		fallthrough
	case !n.present:
		n.present, n.czxid, n.mzxid = true, st.Czxid, st.Mzxid
		l.emit(WatchEvent{Type: WatchCreated, Path: n.path, Data: r.data, Stat: st})
		if l.mode == WatchTree && n.depth < l.maxDepth {
			l.markRound(n, kindChildren)
		}
	case st.Mzxid > n.mzxid:
		n.mzxid = st.Mzxid
		l.emit(WatchEvent{Type: WatchChanged, Path: n.path, Data: r.data, Stat: st})
	}
}

func (l *lasting) applyChildren(n *wnode, r readResult) {
	if l.mode == WatchChildren {
		switch {
		case r.noNode && n.present:
			n.present, n.czxid, n.pzxid = false, 0, 0
			l.emit(WatchEvent{Type: WatchChildrenChanged, Path: n.path})
		case !r.noNode && (!n.present || r.stat.Czxid != n.czxid || r.stat.Pzxid != n.pzxid):
			n.present, n.czxid, n.pzxid = true, r.stat.Czxid, r.stat.Pzxid
			slices.Sort(r.kids)
			l.emit(WatchEvent{Type: WatchChildrenChanged, Path: n.path, Children: r.kids, Stat: r.stat})
		}
		return
	}
	if r.noNode || !n.present {
		return // the data read reports a deletion
	}
	if n.gone {
		l.markRound(n, kindData)
	}
	slices.Sort(r.kids)
	for _, name := range r.kids {
		p := JoinPath(n.path, name)
		if _, ok := l.nodes[p]; ok {
			continue
		}
		k := &wnode{path: p, parent: n, depth: n.depth + 1, idx: len(n.kids)}
		n.kids = append(n.kids, k)
		l.nodes[p] = k
		l.markRound(k, kindData)
	}
}

// vanish reports a node without descendants deleted. A tree node is
// forgotten, and its parent's children are read again: the node may have
// been created again after the parent's last listing.
func (l *lasting) vanish(n *wnode) {
	if n.present {
		l.emit(WatchEvent{Type: WatchDeleted, Path: n.path})
	}
	if n == l.root {
		n.present, n.gone, n.czxid, n.mzxid = false, false, 0, 0
		l.done(n, kindChildren)
		return
	}
	l.forget(n)
	p := n.parent
	if p.present {
		l.markRound(p, kindChildren)
	}
	if p.gone && len(p.kids) == 0 {
		l.markRound(p, kindData)
	}
}

// markTree reads n's descendants again.
func (l *lasting) markTree(n *wnode) {
	for _, k := range n.kids {
		l.markRound(k, kindData)
		l.markTree(k)
	}
}

// markRound queues a read of kind k of n that the current round, if it is
// not over, waits for: a read that follows from another of the round.
func (l *lasting) markRound(n *wnode, k uint8) {
	if n.removed {
		return
	}
	l.mark(n, k)
	if !l.roundDone && n.pending&k == 0 {
		n.pending |= k
		l.pending++
	}
}

func (l *lasting) forget(n *wnode) {
	delete(l.nodes, n.path)
	n.removed = true
	l.pending -= bits(n.pending)
	n.pending = 0
	if t := l.retries[n]; t != nil {
		t.Stop()
		delete(l.retries, n)
	}
	if p := n.parent; p != nil {
		last := p.kids[len(p.kids)-1]
		p.kids[n.idx], last.idx = last, n.idx
		p.kids[len(p.kids)-1] = nil
		p.kids = p.kids[:len(p.kids)-1]
	}
}

// done records that the round's read of kind k of n is applied.
func (l *lasting) done(n *wnode, k uint8) {
	if n.pending&k != 0 {
		n.pending &^= k
		l.pending--
	}
}

// checkRound ends a round whose reads are all applied, if its session is
// still the client's: otherwise a new round is on its way.
func (l *lasting) checkRound() {
	if l.roundDone || l.pending > 0 {
		return
	}
	l.roundDone = true
	if !l.sess.Valid() {
		return
	}
	t := WatchResynced
	if !l.synced {
		t, l.synced = WatchSynced, true
	}
	l.emit(WatchEvent{Type: t, Path: l.root.path})
}

// retryLater reads kind k of n again after a growing wait.
func (l *lasting) retryLater(n *wnode, k uint8) {
	n.failWait = min(max(2*n.failWait, 100*time.Millisecond), 10*time.Second)
	if l.retries == nil {
		l.retries = make(map[*wnode]*time.Timer)
	}
	if t := l.retries[n]; t != nil {
		t.Stop()
	}
	l.retries[n] = time.AfterFunc(n.failWait, func() { l.notify(n, k) })
}

// emit hands ev to the receiver, waiting for it: a slow receiver holds
// the watch's re-reads back, nothing else.
func (l *lasting) emit(ev WatchEvent) {
	select {
	case l.out <- ev:
	case <-l.ctx.Done():
	}
}

// connWire returns the current connection and its wire.
func (c *Client) connWire() (*zk.Conn, *wire) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn, c.wire
}

// watchRegistry routes go-zookeeper's watch events, which the client gets
// through its event callback, to the lasting watches, without a goroutine
// per ZooKeeper watch. It mirrors go-zookeeper's own table of watches: an
// arm is one watch set by one read, keyed like go-zookeeper's by
// connection and path, and fired by the same event types. It also keeps
// the wire's count of watches outstanding (see waitGate) exact for every
// watch it knows go-zookeeper holds.
type watchRegistry struct {
	mu   sync.Mutex
	arms map[armKey][]*arm
}

type armKey struct {
	conn *zk.Conn
	path string // the server's path
}

// arm is one watch of a lasting watch. It is registered before its read
// is sent, so that an event after the read cannot miss it; until the read
// returns it has no channel (and is not counted on a wire).
type arm struct {
	key  armKey
	l    *lasting
	n    *wnode
	kind uint8
	mask uint8 // go-zookeeper watch types (bitExist, ...) that fire it
	w    *wire
	ch   <-chan zk.Event // go-zookeeper's channel; nil until attached
	gone bool            // fired, or dropped
}

// sweepDelay is when an arm re-registered in doubt is checked again.
const sweepDelay = 100 * time.Millisecond

func (r *watchRegistry) pre(conn *zk.Conn, path string, l *lasting, n *wnode, kind, mask uint8) *arm {
	a := &arm{key: armKey{conn, path}, l: l, n: n, kind: kind, mask: mask}
	r.mu.Lock()
	if r.arms == nil {
		r.arms = make(map[armKey][]*arm)
	}
	r.arms[a.key] = append(r.arms[a.key], a)
	r.mu.Unlock()
	return a
}

// attach completes a with the read's outcome: the channel of the watch
// go-zookeeper set, with its exact type, or nothing (the read failed).
func (r *watchRegistry) attach(a *arm, ch <-chan zk.Event, err error, w *wire, mask uint8) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil || ch == nil {
		if !a.gone {
			r.drop(a)
		}
		return
	}
	if !a.gone {
		a.ch, a.w, a.mask = ch, w, mask
		w.watches.Add(1)
		return
	}
	// An event at this path ended the arm while the read was out, and
	// its lasting watch was told. If that event came after the reply, it
	// fired ch too; if it came before, ch is live. A channel not fired
	// yet may be either, so it is kept and looked at again shortly.
	select {
	case <-ch:
		return
	default:
	}
	a.gone = false
	a.ch, a.w, a.mask = ch, w, mask
	w.watches.Add(1)
	r.arms[a.key] = append(r.arms[a.key], a)
	time.AfterFunc(sweepDelay, func() { r.sweep(a) })
}

// sweep drops a if go-zookeeper fired it without an event reaching the
// registry after it was re-registered.
func (r *watchRegistry) sweep(a *arm) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.gone {
		return
	}
	select {
	case <-a.ch:
		r.drop(a)
		a.w.watches.Add(-1)
	default:
	}
}

// drop removes a. Called with r.mu held.
func (r *watchRegistry) drop(a *arm) {
	a.gone = true
	list := r.arms[a.key]
	if i := slices.Index(list, a); i >= 0 {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(r.arms, a.key)
	} else {
		r.arms[a.key] = list
	}
}

// dispatch handles a watch event of conn, from go-zookeeper's event
// callback: it ends the arms the event fires (as go-zookeeper's
// notifyWatches and invalidateWatches fire its channels, right after the
// callback) and tells their lasting watches. It never blocks.
func (r *watchRegistry) dispatch(conn *zk.Conn, ev zk.Event) {
	var fires uint8
	switch ev.Type {
	case zk.EventNodeCreated:
		fires = bitExist
	case zk.EventNodeDataChanged:
		fires = bitExist | bitData
	case zk.EventNodeChildrenChanged:
		fires = bitChild
	case zk.EventNodeDeleted, zk.EventNotWatching:
		fires = bitExist | bitData | bitChild
	default:
		return
	}
	key := armKey{conn, ev.Path}
	r.mu.Lock()
	list := r.arms[key]
	var hit []*arm
	keep := list[:0]
	for _, a := range list {
		if a.mask&fires == 0 {
			keep = append(keep, a)
			continue
		}
		a.gone = true
		if a.ch != nil {
			a.w.watches.Add(-1)
		}
		hit = append(hit, a)
	}
	if len(hit) > 0 {
		clear(list[len(keep):])
		if len(keep) == 0 {
			delete(r.arms, key)
		} else {
			r.arms[key] = keep
		}
	}
	r.mu.Unlock()
	for _, a := range hit {
		a.l.notify(a.n, a.kind)
	}
}
