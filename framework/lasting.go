package framework

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

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
	awaiting bool // found in an incarnation its parent's state cannot place: read again after the parent
	awaited  bool // a child is awaiting this node's next data read
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
	rootPath string // the watched path
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

	arms *arm // its arms in the client's registry, guarded by the registry's mu
}

type firing struct {
	n    *wnode
	kind uint8
}

// run runs the watch on a persistent watch where the server has addWatch
// (see runPersistent), else on one-shot watches (runOneShot).
func (l *lasting) run() {
	defer l.c.wg.Done()
	defer close(l.out)
	defer l.cancel()
	stop := context.AfterFunc(l.c.ctx, l.cancel)
	defer stop()
	if l.runPersistent() {
		return
	}
	l.runOneShot()
}

// runOneShot runs the watch on one-shot watches, for servers before 3.6.
func (l *lasting) runOneShot() {
	l.results = make(chan readResult, maxReads+2)
	l.nodes = make(map[string]*wnode)
	l.root = &wnode{path: l.rootPath}
	l.nodes[l.rootPath] = l.root
	defer l.stop()
	defer l.reads.Wait()
	defer l.cancel()
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

// stop ends the notifications and the retry timers, and takes the
// watch's arms out of the client's registry, which then holds nothing
// of it. It runs once no read is left.
func (l *lasting) stop() {
	l.mu.Lock()
	l.dead, l.fired = true, nil
	l.mu.Unlock()
	for _, t := range l.retries {
		t.Stop()
	}
	l.retries = nil
	l.c.reg.unregister(l)
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
		r.err = l.c.retryRead(l.ctx, OpNameWatch, func() error { return l.readOnce(&r) })
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
// can come first. Where go-zookeeper already holds that watch, live, the
// read sets none: the held watch's next event fires the arm. A missing
// watched node (or WatchChildren's parent) is watched for its creation.
func (l *lasting) readOnce(r *readResult) error {
	conn, w := l.c.connWire()
	full := fixPath(l.c.ns, r.n.path)
	reg := &l.c.reg
	r.noNode, r.data, r.kids, r.stat = false, nil, nil, nil
	for {
		var err error
		var ch <-chan zk.Event
		if r.kind == kindData {
			a, shared := reg.pre(conn, full, l, r.n, kindData, bitData, bitData)
			if shared {
				r.data, r.stat, err = conn.Get(full)
				reg.settle(a, err)
			} else {
				r.data, r.stat, ch, err = conn.GetW(full)
				reg.attach(a, ch, err, w, bitData)
			}
		} else {
			a, shared := reg.pre(conn, full, l, r.n, kindChildren, bitChild, bitChild)
			if shared {
				r.kids, r.stat, err = conn.Children(full)
				reg.settle(a, err)
			} else {
				r.kids, r.stat, ch, err = conn.ChildrenW(full)
				reg.attach(a, ch, err, w, bitChild)
			}
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		r.noNode = true
		if r.n != l.root || (l.mode == WatchTree && r.kind == kindChildren) {
			return nil // a tree's nodes are found through their parents
		}
		// go-zookeeper holds an exists watch on a missing node as
		// bitExist, and on a node that exists as bitData: either one is
		// fired by the node's creation or deletion.
		a, shared := reg.pre(conn, full, l, r.n, r.kind, bitExist|bitData, bitExist|bitData)
		var ok bool
		if shared {
			ok, _, err = conn.Exists(full)
			reg.settle(a, err)
		} else {
			ok, _, ch, err = conn.ExistsW(full)
			typ := bitExist
			if ok {
				typ = bitData
			}
			reg.attach(a, ch, err, w, typ)
		}
		if err != nil || !ok {
			return err
		}
		r.noNode = false // created in between: read it
	}
}
