package framework

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// A lasting watch on a server with addWatch (ZooKeeper 3.6+) stands on
// one persistent watch of the client's persistent registry: recursive for
// a WatchTree that looks below its node, plain (PERSISTENT) for
// WatchNode, WatchChildren and a WatchTree of depth 0. The watch's events
// only mark nodes to read; the watch's goroutine reads each marked node
// once, without a watch, and turns what it reads into WatchEvents, as the
// one-shot path does. Children are listed only where the events cannot
// tell: at the first load and after each PersistentResync (the server
// does not replay the events a watch missed, ZOOKEEPER-4698), when a node
// with children is first reported, and for WatchChildren.
//
// Only the reported nodes are kept, in a map to a 24-byte record: the
// bookkeeping of reads (queued, in flight, waited for by a round, failing)
// lives in a second map that holds only the nodes with work pending, and
// is empty once the watch is idle.

// kindLife marks a data read that follows a node's creation or deletion:
// until it is applied, the node's reported incarnation may be stale, so
// a child read meanwhile waits for it (see pwatch.place).
const kindLife uint8 = 1 << 2

// pnode is a reported node of a persistent lasting watch: 16 bytes, no
// pointer, so that the map of them costs about 50 bytes per node and is
// not scanned by the garbage collector but for its keys.
type pnode struct {
	czxid, mzxid int64 // the reported incarnation and version
}

// pwork is the pending work of one node.
type pwork struct {
	dirty    uint8 // kinds to read again (kindLife rides with kindData)
	inflight uint8 // kinds being read
	pending  uint8 // kinds the current round waits for
	queued   bool
	failWait time.Duration
}

func (w *pwork) idle() bool {
	return w.dirty == 0 && w.inflight == 0 && w.pending == 0 && !w.queued && w.failWait == 0
}

// presult is one read of one node.
type presult struct {
	path   string
	kind   uint8 // kindData (with kindLife, if that read was for one) or kindChildren
	round  int
	gen    uint64 // the client's handshakes when the reply came (persistents.gen)
	noNode bool
	data   []byte
	kids   []string
	stat   *zk.Stat
	err    error
}

// pwatch is the state of a lasting watch on a persistent watch. Its
// goroutine (lasting.runPersistent) owns everything but the fields under
// mu, which the sink fills.
type pwatch struct {
	l         *lasting
	root      string
	rootDepth int
	maxDepth  int32 // levels below root that are reported
	in        *persistentInterest

	mu     sync.Mutex // guards the sink's side
	fired  map[string]uint8
	order  []string // fired's paths, in the order first marked
	resync bool
	dead   bool

	nodes    map[string]pnode
	kids     map[string]int32 // reported children of the nodes that have some
	work     map[string]*pwork
	workPeak int                 // the work map's largest size since it was last made
	waiters  map[string]struct{} // nodes whose children wait for their next report or read
	queue    []string
	inflight int
	results  chan presult
	reads    sync.WaitGroup
	retries  map[string]*time.Timer

	round      int
	pending    int // reads the round still waits for
	roundDone  bool
	roundSess  Session
	roundGen   uint64 // the client's handshakes when the round started
	synced     bool
	syncedSess Session

	// WatchChildren's view of its node.
	cPresent     bool
	cCzxid, cPzx int64
}

// segments counts the segments of a path ("/" has none).
func segments(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// depth returns p's depth below the root, or -1 when p is not the root
// or below it.
func (w *pwatch) depth(p string) int {
	switch {
	case p == w.root:
		return 0
	case w.root == "/":
		if len(p) > 1 && p[0] == '/' {
			return segments(p)
		}
	case len(p) > len(w.root) && p[len(w.root)] == '/' && strings.HasPrefix(p, w.root):
		return segments(p) - w.rootDepth
	}
	return -1
}

// sink takes the persistent watch's events, under the registry's lock: it
// records which nodes to read, each once however many events come, and
// wakes the goroutine. It never blocks.
func (w *pwatch) sink(ev PersistentEvent) {
	var k uint8
	switch ev.Type {
	case PersistentCreated, PersistentDeleted:
		k = kindData | kindLife
	case PersistentDataChanged:
		k = kindData
	case PersistentChildrenChanged:
		k = kindChildren
	}
	w.mu.Lock()
	switch {
	case w.dead:
	case ev.Type == PersistentResync:
		w.resync = true
	case ev.Type == persistentEnd:
		// The client closes: its ctx ends the watch.
	case k == 0:
	default:
		if w.l.mode == WatchChildren {
			if ev.Path != w.root || ev.Type == PersistentDataChanged {
				break
			}
			k = kindChildren
		} else if ev.Type == PersistentChildrenChanged {
			break
		} else if d := w.depth(ev.Path); d < 0 || d > int(w.maxDepth) {
			break
		}
		if w.fired == nil {
			w.fired = make(map[string]uint8)
		}
		old, ok := w.fired[ev.Path]
		if !ok {
			w.order = append(w.order, ev.Path)
		}
		w.fired[ev.Path] = old | k
	}
	w.mu.Unlock()
	select {
	case w.l.wake <- struct{}{}:
	default:
	}
}

// retryFire is a retry timer's call: it marks path like an event.
func (w *pwatch) retryFire(path string, k uint8) {
	w.mu.Lock()
	if !w.dead {
		if w.fired == nil {
			w.fired = make(map[string]uint8)
		}
		if _, ok := w.fired[path]; !ok {
			w.order = append(w.order, path)
		}
		w.fired[path] |= k
	}
	w.mu.Unlock()
	select {
	case w.l.wake <- struct{}{}:
	default:
	}
}

// runPersistent runs the watch on a persistent watch. It reports false,
// having sent nothing, when the server has no addWatch: the caller then
// runs the one-shot path.
func (l *lasting) runPersistent() bool {
	w := &pwatch{
		l: l, root: l.rootPath, rootDepth: segments(l.rootPath), maxDepth: l.maxDepth,
		nodes:   make(map[string]pnode),
		kids:    make(map[string]int32),
		work:    make(map[string]*pwork),
		results: make(chan presult, maxReads+2),
	}
	if l.mode != WatchTree {
		w.maxDepth = 0
	}
	recursive := l.mode == WatchTree && w.maxDepth > 0
	in, err := l.c.watchPersistent(l.ctx, fixPath(l.c.ns, w.root), recursive, w.sink)
	switch {
	case err == nil:
	case l.ctx.Err() != nil || errors.Is(err, ErrClosed):
		return true
	default:
		if !errors.Is(err, ErrUnimplemented) {
			l.c.logger.Warn("framework: a lasting watch could not set its persistent watch; it uses one-shot watches",
				"path", w.root, "err", err)
		}
		return false
	}
	w.in = in
	defer w.stop()
	defer w.reads.Wait()
	defer l.cancel()
	if !w.startRound() {
		return true
	}
	for l.ctx.Err() == nil {
		w.dispatch()
		select {
		case <-l.ctx.Done():
		case <-l.wake:
			if !w.takeFired() {
				return true
			}
		case r := <-w.results:
			w.inflight--
			// Every event the server sent before this read's reply is
			// marked first (see place).
			if !w.takeFired() {
				return true
			}
			w.apply(r)
		}
	}
	return true
}

// stop ends the sink and the retry timers and removes the persistent
// watch, waiting for its removal on the server (bounded) so that a closed
// watch leaves no server watch behind.
func (w *pwatch) stop() {
	w.mu.Lock()
	w.dead, w.fired, w.order = true, nil, nil
	w.mu.Unlock()
	for _, t := range w.retries {
		t.Stop()
	}
	w.retries = nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.l.ctx), 10*time.Second)
	defer cancel()
	w.l.c.unwatchPersistent(ctx, w.in)
}

// takeFired marks what the sink recorded; a Resync starts a new round.
// It reports false when the watch must end.
func (w *pwatch) takeFired() bool {
	w.mu.Lock()
	fired, order, resync := w.fired, w.order, w.resync
	w.fired, w.order, w.resync = nil, nil, false
	w.mu.Unlock()
	for _, p := range order {
		w.mark(p, fired[p])
	}
	if resync {
		return w.startRound()
	}
	return true
}

// startRound reads every reported node again, and the watched node,
// listing the children of each that has some: the round ends with
// WatchSynced, or WatchResynced after a session change, once all those
// reads are applied.
func (w *pwatch) startRound() bool {
	if !w.l.newSession() {
		return false
	}
	w.roundSess, w.roundGen = w.l.sess, w.l.c.pers.gen.Load()
	w.round++
	w.pending, w.roundDone = 0, false
	for _, wk := range w.work {
		wk.pending = 0
	}
	k := kindData
	if w.l.mode == WatchChildren {
		k = kindChildren
	}
	w.markRound(w.root, k)
	for p := range w.nodes {
		w.markRound(p, kindData)
	}
	return true
}

// workOf returns p's work record, made if needed.
func (w *pwatch) workOf(p string) *pwork {
	wk := w.work[p]
	if wk == nil {
		wk = &pwork{}
		w.work[p] = wk
		w.workPeak = max(w.workPeak, len(w.work))
	}
	return wk
}

// forgetWork drops p's work record once it is idle. A map does not
// shrink: once the work of a load or a resync is done, a large map is
// made again, empty.
func (w *pwatch) forgetWork(p string, wk *pwork) {
	if !wk.idle() {
		return
	}
	delete(w.work, p)
	if len(w.work) == 0 && w.workPeak > 64 {
		w.work, w.workPeak = make(map[string]*pwork), 0
	}
}

// mark queues kinds k of p to be read.
func (w *pwatch) mark(p string, k uint8) {
	if k == 0 {
		return
	}
	wk := w.workOf(p)
	wk.dirty |= k
	if !wk.queued {
		wk.queued = true
		w.queue = append(w.queue, p)
	}
}

// markRound queues a read that the current round, if not over, waits for.
func (w *pwatch) markRound(p string, k uint8) {
	w.mark(p, k)
	wk := w.work[p]
	k &^= kindLife
	if !w.roundDone && wk.pending&k == 0 {
		wk.pending |= k
		w.pending++
	}
}

// done records that the round's read of kind k of p is applied.
func (w *pwatch) done(p string, wk *pwork, k uint8) {
	if wk.pending&k != 0 {
		wk.pending &^= k
		w.pending--
	}
}

// dispatch starts reads for queued nodes, up to maxReads at once, one
// read of a kind per node at a time.
func (w *pwatch) dispatch() {
	for w.inflight < maxReads && len(w.queue) > 0 {
		p := w.queue[0]
		w.queue[0] = ""
		w.queue = w.queue[1:]
		wk := w.work[p]
		if wk == nil {
			continue
		}
		wk.queued = false
		for _, k := range [...]uint8{kindData, kindChildren} {
			if wk.dirty&k == 0 || wk.inflight&k != 0 {
				continue
			}
			kk := k
			if k == kindData {
				kk |= wk.dirty & kindLife
			}
			wk.dirty &^= kk
			wk.inflight |= kk
			w.inflight++
			w.reads.Add(1)
			go w.read(p, kk, w.round)
		}
		w.forgetWork(p, wk)
	}
	if len(w.queue) == 0 && cap(w.queue) > 1024 {
		w.queue = nil // let a load's queue go
	}
}

// read reads one kind of p, without a watch, through the retry loop and
// past it: while the connection is down it waits for it, until the watch
// ends.
func (w *pwatch) read(p string, k uint8, round int) {
	defer w.reads.Done()
	l := w.l
	r := presult{path: p, kind: k, round: round}
	full := fixPath(l.c.ns, p)
	for {
		r.err = l.c.retryRead(l.ctx, OpNameWatch, func() error {
			conn, _ := l.c.connWire()
			r.noNode, r.data, r.kids, r.stat = false, nil, nil, nil
			var err error
			if k&kindData != 0 {
				r.data, r.stat, err = conn.Get(full)
			} else {
				r.kids, r.stat, err = conn.Children(full)
			}
			if errors.Is(err, zk.ErrNoNode) {
				r.noNode, err = true, nil
			}
			return err
		})
		if r.err == nil || !IsRetryable(r.err) || l.ctx.Err() != nil {
			break
		}
		if err := l.c.BlockUntilConnected(l.ctx); err != nil {
			r.err = err
			break
		}
	}
	r.gen = l.c.pers.gen.Load()
	w.results <- r // never blocks: room for every read in flight
}
