package framework

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-curator/curator/framework/internal/transport"
	"github.com/go-zookeeper/zk"
)

// pmode is a persistent watch's mode, ordered: a recursive watch covers
// what a persistent one does, but the children of its own node (see
// persistents.dispatch).
type pmode uint8

const (
	pNone pmode = iota
	pPersistent
	pRecursive
)

// persistents keeps the client's persistent interests by server path, and
// the server watch that serves each path on the current connection: one
// per path, whatever the interests (ZOOKEEPER-4466: before 3.9 a
// connection keeps one watch mode per path, and a standard watch set over
// a persistent one turns it one-shot, silently). Its rules:
//
//   - while a path has a persistent watch on the connection (being added,
//     set, or being removed), a one-shot watch the client would set there
//     (the W reads, the lasting watches' re-arming) is sent without the
//     watch flag and served by the persistent watch's events (servesLocked;
//     oneShots and watchRegistry decide under mu);
//   - a persistent watch is not added on a path where go-zookeeper may hold
//     a standard watch (a W read's, set or still out): it is deferred until
//     that one fires or its read fails, and its interests get Resync once
//     it is set (the events between were not watched);
//   - a path's persistent watch is removed (removeWatches Any, which
//     before 3.9 is the only type that removes it and takes every watch
//     on the path, ZOOKEEPER-4472) only when no local interest needs the
//     path: no persistent interest and no one-shot it serves; until then
//     it stays, and events no interest wants are dropped;
//   - every handshake ends the server's watches of the connection before:
//     the watches it served are fired (spurious wake-ups on the same
//     session; NotWatching with zk.ErrSessionExpired on a new one), every
//     wanted path is set again (setWatches2, after the standard watches
//     go-zookeeper re-sets, which never share a path with them), and
//     its interests get Resync (ZOOKEEPER-4698: missed events are not
//     replayed).
//
// One goroutine (run) sends every addWatch, setWatches2 and removeWatches,
// one at a time, so no two requests of one path cross. Lock order: the
// client's mu, then mu, then oneShots' and watchRegistry's.
type persistents struct {
	c    *Client
	kick chan struct{} // wakes run; nil in a zero Client

	gen   atomic.Uint64 // handshakes with a session, counted by the event callback
	count atomic.Int32  // len(paths), for the event callback's fast path

	mu      sync.Mutex
	paths   map[string]*pPath
	conn    *zk.Conn // the connection srv describes
	w       *wire
	session int64
	seenGen uint64 // the handshake conn and srv stand for
	started bool   // run is running
	closed  bool
}

// pPath is one server path with persistent interests, or a server watch
// still to remove.
type pPath struct {
	full     string
	subs     []*persistentInterest
	srv      pmode // mode set, or being set, on conn
	srvChild bool  // the server's child watch table holds a persistent watch here (mode PERSISTENT)
	ok       bool  // srv is confirmed by the server
	removing bool  // removeWatches in flight
	deferred bool  // wanted, but go-zookeeper may hold a standard watch here
	err      error // the last add's failure on seenGen (ErrUnimplemented)
	errGen   uint64
	waiters  []*pWaiter
}

// pWaiter waits for a path to settle: its interest's watch set (add), or
// the path's watch removed or kept for a local interest (remove).
type pWaiter struct {
	add bool
	sub *persistentInterest
	ch  chan error // buffered
}

// persistentInterest is one local interest in a path's persistent watch:
// its sink gets every event of the watch's mode, in the order the server
// sent them, and Resync.
type persistentInterest struct {
	pp     *pPath
	mode   pmode
	sink   func(PersistentEvent)
	live   bool // its watch has been set on the server
	resync bool // owes a Resync once its watch is set again
	closed bool
}

func (p *pPath) want() pmode {
	m := pNone
	for _, s := range p.subs {
		m = max(m, s.mode)
	}
	return m
}

// poke wakes run. It never blocks, takes no lock, and is safe on nil.
func (p *persistents) poke() {
	if p == nil {
		return
	}
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// handshake is called by the event callback at each session event of the
// current connection (with the client's mu held).
func (p *persistents) handshake() {
	p.gen.Add(1)
	p.poke()
}

// servesLocked reports whether a watch a read would set at path of conn
// is served by a persistent watch (see oneShots.pre). Called with mu held.
func (p *persistents) servesLocked(conn *zk.Conn, path string) bool {
	if conn != p.conn || conn == nil {
		return false
	}
	pp := p.paths[path]
	return pp != nil && (pp.srv != pNone || pp.removing)
}

func (p *persistents) standardLive(conn *zk.Conn, path string) bool {
	return p.c.oneShots.standardLive(conn, path) || p.c.reg.standardLive(conn, path)
}

func (p *persistents) busy(conn *zk.Conn, path string) bool {
	return p.c.oneShots.busy(conn, path) || p.c.reg.busy(conn, path)
}

// fireServedLocked fires what the persistent watch at pp served on conn.
func (p *persistents) fireServedLocked(conn *zk.Conn, pp *pPath, ended error) {
	if conn == nil {
		return
	}
	p.c.oneShots.fireServed(conn, pp.full, unfixPath(p.c.ns, pp.full), ended)
	p.c.reg.fireServed(conn, pp.full)
}

// add registers s on full and waits until its watch is set on the server
// (or deferred, see persistents), ctx ends, or the client closes.
func (p *persistents) add(ctx context.Context, full string, s *persistentInterest) error {
	wt := &pWaiter{add: true, sub: s, ch: make(chan error, 1)}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	if p.paths == nil {
		p.paths = make(map[string]*pPath)
	}
	pp := p.paths[full]
	if pp == nil {
		pp = &pPath{full: full}
		p.paths[full] = pp
		p.count.Store(int32(len(p.paths)))
	}
	s.pp = pp
	pp.subs = append(pp.subs, s)
	pp.waiters = append(pp.waiters, wt)
	if !p.started {
		p.started = true
		p.c.wg.Add(1)
		go p.run()
	}
	p.mu.Unlock()
	p.poke()
	select {
	case err := <-wt.ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-p.c.ctx.Done():
		return ErrClosed
	}
}

// remove ends s: it gets nothing more, and the path's server watch is
// removed when no other local interest needs it. It waits for that while
// ctx lasts and the client is connected; it returns at once when the
// client is not connected (the connection's watches went with it, and
// none is set again for s). Without wait it returns at once.
func (p *persistents) remove(ctx context.Context, s *persistentInterest, wait bool) error {
	p.mu.Lock()
	if s.closed || s.pp == nil {
		p.mu.Unlock()
		return nil
	}
	s.closed = true
	pp := s.pp
	for i, x := range pp.subs {
		if x == s {
			pp.subs = append(pp.subs[:i], pp.subs[i+1:]...)
			break
		}
	}
	if p.closed || len(pp.subs) > 0 || (pp.srv == pNone && !pp.removing) {
		if len(pp.subs) == 0 && pp.srv == pNone && !pp.removing && p.paths[pp.full] == pp {
			p.dropLocked(pp)
		}
		p.mu.Unlock()
		return nil
	}
	wt := &pWaiter{ch: make(chan error, 1)}
	pp.waiters = append(pp.waiters, wt)
	p.mu.Unlock()
	p.poke()
	if !wait || !p.c.State().IsConnected() {
		return nil
	}
	select {
	case err := <-wt.ch:
		return err
	case <-ctx.Done():
		return ctx.Err() // the removal goes on
	case <-p.c.ctx.Done():
		return nil
	}
}

// dropLocked forgets pp, settling its waiters.
func (p *persistents) dropLocked(pp *pPath) {
	for _, wt := range pp.waiters {
		wt.ch <- nil
	}
	pp.waiters = nil
	delete(p.paths, pp.full)
	p.count.Store(int32(len(p.paths)))
}

// run sends the server requests, one at a time, until the client closes.
func (p *persistents) run() {
	defer p.c.wg.Done()
	for {
		select {
		case <-p.kick:
			p.reconcile()
		case <-p.c.ctx.Done():
			p.shutdown()
			return
		}
	}
}

// shutdown ends every interest at Close: the watches the persistent ones
// served end with ErrClosed, and every sink is told (see
// persistentInterest.sink's end).
func (p *persistents) shutdown() {
	p.mu.Lock()
	p.closed = true
	var ends []func(PersistentEvent)
	for _, pp := range p.paths {
		if pp.srv != pNone || pp.removing {
			p.fireServedLocked(p.conn, pp, fmt.Errorf("%w (watch ended: %w)", ErrClosed, zk.ErrClosing))
		}
		for _, s := range pp.subs {
			s.closed = true
			ends = append(ends, s.sink)
		}
		for _, wt := range pp.waiters {
			wt.ch <- ErrClosed
		}
	}
	p.paths = nil
	p.count.Store(0)
	p.mu.Unlock()
	for _, sink := range ends {
		sink(PersistentEvent{Type: persistentEnd})
	}
}

// job is one request run sends.
type job struct {
	gen    uint64
	conn   *zk.Conn
	w      *wire
	remove *pPath
	adds   []*pPath
	modes  []pmode // the adds' modes
	prev   []pmode // the adds' srv before
}

// reconcile brings the server's watches to what the interests want, one
// request at a time, until nothing is left to do or a request fails for
// want of a connection (the next handshake pokes run again).
func (p *persistents) reconcile() {
	for p.c.ctx.Err() == nil {
		conn, w := p.c.connWire()
		p.c.mu.Lock()
		sess, connected := p.c.sessionID, p.c.state.IsConnected()
		p.c.mu.Unlock()
		p.mu.Lock()
		if g := p.gen.Load(); g != p.seenGen {
			p.seenGen = g
			p.resetLocked(conn, w, sess)
		}
		var j *job
		if connected && conn == p.conn && !p.closed {
			j = p.nextLocked()
		}
		p.settleLocked()
		p.mu.Unlock()
		if j == nil || !p.send(j) {
			return
		}
	}
}

// resetLocked starts over on a new connection (a handshake): the server
// holds none of the watches set before.
func (p *persistents) resetLocked(conn *zk.Conn, w *wire, sess int64) {
	var ended error
	if sess != p.session {
		ended = fmt.Errorf("%w (watch ended: the session changed)", zk.ErrSessionExpired)
	}
	for _, pp := range p.paths {
		if pp.srv != pNone || pp.removing {
			p.fireServedLocked(p.conn, pp, ended)
		}
		pp.srv, pp.srvChild, pp.ok, pp.removing, pp.deferred, pp.err = pNone, false, false, false, false, nil
		if len(pp.subs) == 0 {
			p.dropLocked(pp)
			continue
		}
		for _, s := range pp.subs {
			if s.live {
				s.resync = true
			}
		}
	}
	p.conn, p.w, p.session = conn, w, sess
}

// nextLocked picks the next request: the adds (all the paths to set, as
// one setWatches2, after a handshake), else one removal.
func (p *persistents) nextLocked() *job {
	j := &job{gen: p.seenGen, conn: p.conn, w: p.w}
	for _, pp := range p.paths {
		want := pp.want()
		if want == pNone || pp.removing || pp.srv >= want || (pp.err != nil && pp.errGen == p.seenGen) {
			continue
		}
		if pp.srv == pNone && p.standardLive(p.conn, pp.full) {
			pp.deferred = true
			continue
		}
		pp.deferred = false
		j.adds = append(j.adds, pp)
		j.modes = append(j.modes, want)
		j.prev = append(j.prev, pp.srv)
		// Claimed now: reads from here on are served by it.
		if want == pPersistent {
			pp.srvChild = true
		}
		pp.srv, pp.ok = want, false
	}
	if len(j.adds) > 0 {
		return j
	}
	for _, pp := range p.paths {
		if len(pp.subs) > 0 || pp.srv == pNone || pp.removing || p.busy(p.conn, pp.full) {
			continue
		}
		pp.removing = true
		j.remove = pp
		return j
	}
	return nil
}

// send runs j's request and applies its answer. It reports false when
// the request failed for want of a connection.
func (p *persistents) send(j *job) bool {
	ctx := p.c.ctx
	if j.remove != nil {
		code, _, err := j.w.Call(ctx, transport.OpRemoveWatches,
			transport.RemoveWatchesRequest(j.remove.full, transport.WatcherAny))
		p.mu.Lock()
		defer p.mu.Unlock()
		pp := j.remove
		if err != nil || j.gen != p.seenGen {
			return err == nil // a handshake came between: resetLocked cleared it
		}
		if code != transport.CodeOK && code != transport.CodeNoWatcher && code != transport.CodeUnimplemented {
			p.c.logger.Warn("framework: removeWatches failed; the watch stays until the connection ends",
				"path", pp.full, "code", code)
		}
		pp.removing, pp.srv, pp.srvChild, pp.ok = false, pNone, false, false
		p.fireServedLocked(j.conn, pp, nil) // they read again, and set their own watch
		if len(pp.subs) == 0 && p.paths[pp.full] == pp {
			p.dropLocked(pp)
		}
		return true
	}
	var code int32
	var err error
	if len(j.adds) == 1 {
		mode := transport.AddWatchPersistent
		if j.modes[0] == pRecursive {
			mode = transport.AddWatchPersistentRecursive
		}
		code, _, err = j.w.Call(ctx, transport.OpAddWatch, transport.AddWatchRequest(j.adds[0].full, mode))
	} else {
		code, err = p.setWatches2(ctx, j)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil || j.gen != p.seenGen {
		return err == nil
	}
	for i, pp := range j.adds {
		if code == transport.CodeOK {
			pp.ok = true
			for _, s := range pp.subs {
				if s.mode > pp.srv {
					continue
				}
				s.live = true
				if s.resync && !s.closed {
					s.resync = false
					s.sink(PersistentEvent{Type: PersistentResync, Path: unfixPath(p.c.ns, pp.full)})
				}
			}
			continue
		}
		pp.err, pp.errGen = ErrUnimplemented, p.seenGen
		if code != transport.CodeUnimplemented {
			pp.err = fmt.Errorf("framework: addWatch %s: the server answered error code %d", pp.full, code)
		}
		pp.srv = j.prev[i]
		if pp.srv == pNone {
			pp.srvChild = false
			p.fireServedLocked(j.conn, pp, nil)
		}
	}
	return true
}

// setWatches2 sets j's adds in setWatches2 requests of at most
// transport.SetWatches2Limit bytes each, and returns the first failure.
func (p *persistents) setWatches2(ctx context.Context, j *job) (int32, error) {
	var pers, rec []string
	size := 0
	flush := func() (int32, error) {
		if len(pers)+len(rec) == 0 {
			return transport.CodeOK, nil
		}
		body := transport.SetWatches2Request(j.w.LastZxid(), nil, nil, nil, pers, rec)
		pers, rec, size = nil, nil, 0
		code, _, err := j.w.Call(ctx, transport.OpSetWatches2, body)
		return code, err
	}
	for i, pp := range j.adds {
		if size+4+len(pp.full) > transport.SetWatches2Limit {
			if code, err := flush(); err != nil || code != transport.CodeOK {
				return code, err
			}
		}
		size += 4 + len(pp.full)
		if j.modes[i] == pRecursive {
			rec = append(rec, pp.full)
		} else {
			pers = append(pers, pp.full)
		}
	}
	return flush()
}

// settleLocked answers the waiters whose path has settled.
func (p *persistents) settleLocked() {
	for _, pp := range p.paths {
		keep := pp.waiters[:0]
		for _, wt := range pp.waiters {
			var done bool
			var err error
			switch {
			case wt.add && wt.sub.closed:
				done = true
			case wt.add && pp.ok && pp.srv >= wt.sub.mode:
				done = true
			case wt.add && pp.deferred:
				// Set once go-zookeeper's watch there fires: until then
				// its events are not all watched.
				done, wt.sub.resync = true, true
			case wt.add && pp.err != nil && pp.errGen == p.seenGen:
				done, err = true, pp.err
			case !wt.add:
				done = len(pp.subs) > 0 || (pp.srv == pNone && !pp.removing) ||
					(!pp.removing && p.busy(p.conn, pp.full))
			}
			if done {
				wt.ch <- err
			} else {
				keep = append(keep, wt)
			}
		}
		clear(pp.waiters[len(keep):])
		pp.waiters = keep
	}
}

// dispatch hands a notification of conn to every interest it serves, and
// synthesizes the NodeChildrenChanged a recursive watch does not send for
// the W reads and lasting watches it serves. Called from the event
// callback after the one-shot dispatch; it never blocks.
func (p *persistents) dispatch(conn *zk.Conn, ev zk.Event) {
	if p == nil || p.count.Load() == 0 {
		return
	}
	var typ PersistentEventType
	switch ev.Type {
	case zk.EventNodeCreated:
		typ = PersistentCreated
	case zk.EventNodeDeleted:
		typ = PersistentDeleted
	case zk.EventNodeDataChanged:
		typ = PersistentDataChanged
	case zk.EventNodeChildrenChanged:
		typ = PersistentChildrenChanged
	}
	kick, syn := false, ""
	p.mu.Lock()
	if conn != p.conn || p.closed {
		p.mu.Unlock()
		return
	}
	rel := unfixPath(p.c.ns, ev.Path)
	if pp := p.paths[ev.Path]; pp != nil {
		kick = pp.deferred || (len(pp.subs) == 0 && pp.srv != pNone)
		for _, s := range pp.subs {
			if typ != 0 && (s.mode == pPersistent || typ != PersistentChildrenChanged) {
				s.sink(PersistentEvent{Type: typ, Path: rel})
			}
		}
	}
	if typ == 0 || ev.Path == "/" {
		p.mu.Unlock()
		p.after(kick, conn, syn, ev)
		return
	}
	parent := parentPath(ev.Path)
	if pp := p.paths[parent]; pp != nil && (typ == PersistentCreated || typ == PersistentDeleted) &&
		pp.srv == pRecursive && !pp.srvChild {
		syn = parent
		for _, s := range pp.subs {
			if s.mode == pPersistent {
				s.sink(PersistentEvent{Type: PersistentChildrenChanged, Path: unfixPath(p.c.ns, parent)})
			}
		}
	}
	if typ != PersistentChildrenChanged {
		for a := parent; ; a = parentPath(a) {
			if pp := p.paths[a]; pp != nil {
				for _, s := range pp.subs {
					if s.mode == pRecursive {
						s.sink(PersistentEvent{Type: typ, Path: rel})
					}
				}
			}
			if a == "/" {
				break
			}
		}
	}
	p.mu.Unlock()
	p.after(kick, conn, syn, ev)
}

func (p *persistents) after(kick bool, conn *zk.Conn, syn string, ev zk.Event) {
	if syn != "" {
		sev := zk.Event{Type: zk.EventNodeChildrenChanged, State: ev.State, Path: syn, Server: ev.Server}
		p.c.reg.dispatch(conn, sev)
		p.c.dispatchOneShot(conn, sev)
	}
	if kick {
		p.poke()
	}
}

// parentPath returns the parent of a server path other than "/".
func parentPath(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}
