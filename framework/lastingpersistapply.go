package framework

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"time"
)

// apply turns one read of a persistent lasting watch into events.
func (w *pwatch) apply(r presult) {
	wk := w.workOf(r.path)
	wk.inflight &^= r.kind
	base := r.kind &^ kindLife
	switch {
	case r.gen > w.roundGen:
		// Answered on a connection the watch has not been set on again
		// yet: events between the last connection and this one are
		// missed, so the read cannot be placed. The Resync that follows
		// (once the watch is set there) reads everything again.
	case r.err != nil:
		if w.l.ctx.Err() != nil || errors.Is(r.err, ErrClosed) {
			return
		}
		if wk.failWait == 0 { // once per streak of failures
			w.l.emit(WatchEvent{Type: WatchFailed, Path: r.path, Err: r.err})
		}
		w.retryLater(r.path, wk, r.kind)
	case base == kindData:
		w.recovered(r.path, wk)
		w.applyData(r, wk)
	default:
		w.recovered(r.path, wk)
		w.applyChildren(r)
	}
	if r.round == w.round && wk.dirty&base == 0 {
		w.done(r.path, wk, base) // else the read queued after this one will do
	}
	if wk.dirty != 0 && !wk.queued {
		wk.queued = true
		w.queue = append(w.queue, r.path)
	}
	w.forgetWork(r.path, wk)
	w.checkRound()
}

func (w *pwatch) applyData(r presult, wk *pwork) {
	p := r.path
	rec, reported := w.nodes[p]
	// Children waiting for p (see place) are let go once p is no longer
	// busy after this read: p is then listed again, if reported.
	_, waited := w.waiters[p]
	if waited {
		pendAfter := wk.pending&kindData != 0 && (r.round != w.round || wk.dirty&kindData != 0)
		if waited = wk.dirty&kindLife == 0 && !pendAfter; waited {
			delete(w.waiters, p)
			if len(w.waiters) == 0 {
				w.waiters = nil
			}
		}
	}
	if r.noNode {
		if reported {
			w.drop(p)
		}
		return
	}
	st := r.stat
	d := w.depth(p)
	if reported {
		switch {
		case st.Czxid == rec.czxid:
			if st.Mzxid > rec.mzxid {
				rec.mzxid = st.Mzxid
				w.nodes[p] = rec
				w.l.emit(WatchEvent{Type: WatchChanged, Path: p, Data: r.data, Stat: st})
			}
			// A round's read lists the children again; so does a
			// child's wait for this read.
			roundRead := r.round == w.round && wk.pending&kindData != 0
			if (roundRead || waited) && st.NumChildren > 0 && d < int(w.maxDepth) {
				w.markRound(p, kindChildren)
			}
			return
		case st.Czxid < rec.czxid:
			return // an older incarnation: cannot follow a newer read of p
		}
		// Deleted and created again: the old incarnation and its
		// descendants go first, deepest first.
		w.drop(p)
	}
	if !w.place(p, st.Czxid) {
		return
	}
	w.nodes[p] = pnode{czxid: st.Czxid, mzxid: st.Mzxid}
	if p != w.root {
		parent, _ := SplitPath(p)
		w.kids[parent]++
	}
	w.l.emit(WatchEvent{Type: WatchCreated, Path: p, Data: r.data, Stat: st})
	if d < int(w.maxDepth) && (st.NumChildren > 0 || waited) {
		w.markRound(p, kindChildren)
	}
}

// place reports whether a node read with creation zxid czxid may be
// reported created now: the root may; another node only under its
// parent's reported incarnation (created after it), while no creation or
// deletion of the parent waits to be read and, in a round, once the
// parent's round read is applied (until then the parent's record may be
// of an incarnation this node does not belong to). Otherwise the node
// waits for its parent's next read, which lists the parent's children
// again if it is reported; its own events bring it back if it is created
// again later.
func (w *pwatch) place(p string, czxid int64) bool {
	if p == w.root {
		return true
	}
	parent, _ := SplitPath(p)
	pr, ok := w.nodes[parent]
	pw := w.work[parent]
	// After missed events (a round), a parent is not trusted until its
	// round read is applied: it may have been created again meanwhile.
	busy := pw != nil && ((pw.dirty|pw.inflight)&kindLife != 0 || pw.pending&kindData != 0)
	if ok && !busy && czxid >= pr.czxid {
		return true
	}
	if !ok || busy {
		if w.waiters == nil {
			w.waiters = make(map[string]struct{})
		}
		w.waiters[parent] = struct{}{}
	}
	return false
}

// drop reports p deleted, after its reported descendants, deepest first,
// and forgets them. The descendants are normally gone already (each
// deletion is an event of its own); they are left only where a read of p
// overtook theirs.
func (w *pwatch) drop(p string) {
	if w.kids[p] > 0 {
		prefix := p + "/"
		if p == "/" {
			prefix = "/"
		}
		var below []string
		for q := range w.nodes {
			if q != p && strings.HasPrefix(q, prefix) {
				below = append(below, q)
			}
		}
		slices.SortFunc(below, func(a, b string) int {
			if c := cmp.Compare(segments(b), segments(a)); c != 0 {
				return c
			}
			return strings.Compare(b, a)
		})
		for _, q := range below {
			delete(w.nodes, q)
			delete(w.kids, q)
			w.l.emit(WatchEvent{Type: WatchDeleted, Path: q})
		}
	}
	delete(w.nodes, p)
	delete(w.kids, p)
	if p != w.root {
		parent, _ := SplitPath(p)
		if n := w.kids[parent] - 1; n > 0 {
			w.kids[parent] = n
		} else {
			delete(w.kids, parent)
		}
	}
	w.l.emit(WatchEvent{Type: WatchDeleted, Path: p})
}

func (w *pwatch) applyChildren(r presult) {
	if w.l.mode == WatchChildren {
		switch {
		case r.noNode && w.cPresent:
			w.cPresent, w.cCzxid, w.cPzx = false, 0, 0
			w.l.emit(WatchEvent{Type: WatchChildrenChanged, Path: r.path})
		case !r.noNode && (!w.cPresent || r.stat.Czxid != w.cCzxid || r.stat.Pzxid != w.cPzx):
			w.cPresent, w.cCzxid, w.cPzx = true, r.stat.Czxid, r.stat.Pzxid
			slices.Sort(r.kids)
			w.l.emit(WatchEvent{Type: WatchChildrenChanged, Path: r.path, Children: r.kids, Stat: r.stat})
		}
		return
	}
	if r.noNode {
		return // the data read reports a deletion
	}
	if _, ok := w.nodes[r.path]; !ok {
		return
	}
	slices.Sort(r.kids)
	for _, name := range r.kids {
		p := JoinPath(r.path, name)
		if _, ok := w.nodes[p]; !ok {
			w.markRound(p, kindData)
		}
	}
}

// checkRound ends a round whose reads are all applied, if its session is
// still the client's: otherwise a Resync, and a new round, are on their
// way. A round reports WatchSynced the first time, and WatchResynced when
// the session changed since the last report.
func (w *pwatch) checkRound() {
	if w.roundDone || w.pending > 0 {
		return
	}
	w.roundDone = true
	if !w.roundSess.Valid() || w.l.c.pers.gen.Load() != w.roundGen {
		return // a Resync, and a new round, are on their way
	}
	switch {
	case !w.synced:
		w.synced = true
		w.l.emit(WatchEvent{Type: WatchSynced, Path: w.root})
	case !w.syncedSess.Valid():
		w.l.emit(WatchEvent{Type: WatchResynced, Path: w.root})
	}
	w.syncedSess = w.roundSess
}

// recovered ends p's streak of failures, if any.
func (w *pwatch) recovered(p string, wk *pwork) {
	if wk.failWait == 0 {
		return
	}
	wk.failWait = 0
	if t := w.retries[p]; t != nil {
		t.Stop()
		delete(w.retries, p)
	}
}

// retryLater reads kind k of p again after a growing wait.
func (w *pwatch) retryLater(p string, wk *pwork, k uint8) {
	wk.failWait = min(max(2*wk.failWait, 100*time.Millisecond), 10*time.Second)
	if w.retries == nil {
		w.retries = make(map[string]*time.Timer)
	}
	if t := w.retries[p]; t != nil {
		t.Stop()
	}
	w.retries[p] = time.AfterFunc(wk.failWait, func() { w.retryFire(p, k) })
}
