package framework

import (
	"errors"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
)

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
		if n.awaited && n.dirty&kindData == 0 && !n.removed {
			l.release(n)
		}
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
	st := r.stat
	if (!n.present || st.Czxid != n.czxid) && !l.placed(n, st) {
		l.await(n)
		return
	}
	n.gone = false
	if p := n.parent; p != nil && p.gone {
		l.markRound(p, kindData) // p exists again, since n does
	}
	if n.present && st.Czxid == n.czxid {
		n.pzxid = max(n.pzxid, st.Pzxid)
	}
	switch {
	case n.present && st.Czxid != n.czxid: // deleted and created again
		// The old incarnation's descendants went before it: each is
		// reported deleted first, deepest first, as Curator's TreeCache
		// does, so a consumer never holds a node without its parent.
		// The new incarnation's children are read afresh.
		l.dropTree(n)
		l.emit(WatchEvent{Type: WatchDeleted, Path: n.path})
		fallthrough
	case !n.present:
		n.present, n.czxid, n.mzxid, n.pzxid = true, st.Czxid, st.Mzxid, st.Pzxid
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
	if r.stat.Czxid == n.czxid {
		n.pzxid = max(n.pzxid, r.stat.Pzxid)
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

// placed reports whether the incarnation of n read with st is a child
// of its parent's reported incarnation: created after the parent (or in
// the same transaction), and no later than the parent's last known child
// change. A node is reported created only so placed; so when its parent
// is found deleted or created again, each reported descendant is truly
// of the old incarnation, and reporting its removal first never takes
// back a version the consumer will be given again.
func (l *lasting) placed(n *wnode, st *zk.Stat) bool {
	p := n.parent
	return p == nil || p.present && st.Czxid >= p.czxid && st.Czxid <= p.pzxid
}

// await defers n's new incarnation until its parent's data is read again
// (see placed): the parent may have been deleted and created again since
// it was read, or have had n created since its children were listed.
func (l *lasting) await(n *wnode) {
	n.awaiting = true
	n.parent.awaited = true
	l.markRound(n.parent, kindData)
}

// release reads again the children that await n's data read, once the
// latest one is applied.
func (l *lasting) release(n *wnode) {
	n.awaited = false
	for _, k := range n.kids {
		if k.awaiting {
			k.awaiting = false
			l.markRound(k, kindData)
		}
	}
}

// dropTree reports n's descendants deleted, each after its own
// descendants, and forgets them.
func (l *lasting) dropTree(n *wnode) {
	for len(n.kids) > 0 {
		k := n.kids[len(n.kids)-1]
		l.dropTree(k)
		if k.present {
			l.emit(WatchEvent{Type: WatchDeleted, Path: k.path})
		}
		l.forget(k)
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
		if l.c.obsOpts.m.WatchDelivered != nil {
			l.c.watchDelivered(true, ev.Type.String())
		}
	case <-l.ctx.Done():
	}
}
