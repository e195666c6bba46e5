package framework

import (
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// connWire returns the current connection and its wire.
func (c *Client) connWire() (*zk.Conn, *wire) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn, c.wire
}

// watchRegistry routes go-zookeeper's watch events, which the client gets
// through its event callback, to the lasting watches, without a goroutine
// per ZooKeeper watch. It keeps two things per connection and path:
//
//   - arms: the lasting watches waiting for the next event there, each
//     registered before the read that follows it is sent, and ended by the
//     first event of the types that fire it, or when its watch ends;
//   - held watches: the watches go-zookeeper holds there, as far as the
//     events show (its table, mirrored: a channel per watch set, fired by
//     the same event types), each counted on its wire's count of watches
//     outstanding (see waitGate).
//
// A read whose watch go-zookeeper already holds, live, is sent without a
// watch: the next event there fires the held watch and the read's arm
// alike. So go-zookeeper's table holds one watch per path and type
// whatever the number of lasting watches that follow the path, now or
// before: ZooKeeper cannot remove a watch (go-zookeeper has no
// removeWatches), so a watch that ended leaves its watches held until
// they fire or the session ends, and the next watch of the same paths
// uses them instead of adding more. An ended watch leaves nothing of its
// own in the registry (see unregister).
//
// Where the client's persistent watch serves a path (see
// persistents.serves), a read there is sent without a watch too, and the
// arm is fired by the persistent watch's events, or by the persistent
// registry when that watch goes (fireServed).
type watchRegistry struct {
	mu   sync.Mutex
	keys map[armKey]*regKey
	pers *persistents // nil in a zero Client
}

type armKey struct {
	conn *zk.Conn
	path string // the server's path
}

// regKey is what the registry knows of one path of one connection.
type regKey struct {
	arms []*arm
	held []*heldWatch
}

// arm is one lasting watch waiting for an event at a path.
type arm struct {
	key  armKey
	l    *lasting
	n    *wnode
	kind uint8
	mask uint8 // go-zookeeper watch types (bitExist, ...) whose events fire it
	gone bool  // fired, or dropped
	pers bool  // served by a persistent watch
	// The lasting watch's arms, a list guarded by the registry's mu.
	prev, next *arm
}

// heldWatch is one watch go-zookeeper holds: a channel in its table.
type heldWatch struct {
	typ   uint8 // go-zookeeper's watch type, as a bit
	ch    <-chan zk.Event
	w     *wire
	doubt bool // may have fired unseen (see attach): never shared
	gone  bool // fired, or found fired
}

// sweepDelay is when a held watch in doubt is checked again.
const sweepDelay = 100 * time.Millisecond

// pre registers an arm of l for n at path of conn, fired by the event
// types in mask, before its read is sent. It reports whether go-zookeeper
// holds a live watch there of one of the types in share: the read then
// need not set one, and is completed with settle instead of attach.
func (r *watchRegistry) pre(conn *zk.Conn, path string, l *lasting, n *wnode, kind, mask, share uint8) (*arm, bool) {
	a := &arm{key: armKey{conn, path}, l: l, n: n, kind: kind, mask: mask}
	if r.pers != nil {
		// Under the persistent registry's lock: no addWatch or
		// removeWatches on path starts before the arm is in.
		r.pers.mu.Lock()
		defer r.pers.mu.Unlock()
		a.pers = r.pers.servesLocked(conn, path)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys == nil {
		r.keys = make(map[armKey]*regKey)
	}
	k := r.keys[a.key]
	if k == nil {
		k = &regKey{}
		r.keys[a.key] = k
	}
	k.arms = append(k.arms, a)
	a.next = l.arms
	if l.arms != nil {
		l.arms.prev = a
	}
	l.arms = a
	if a.pers {
		return a, true
	}
	for _, h := range k.held {
		if h.typ&share != 0 && !h.doubt {
			return a, true
		}
	}
	return a, false
}

// attach completes a with its read's outcome: the channel of the watch
// go-zookeeper set, with its type, or nothing (the read failed).
func (r *watchRegistry) attach(a *arm, ch <-chan zk.Event, err error, w *wire, typ uint8) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil || ch == nil {
		r.drop(a)
		return
	}
	h := &heldWatch{typ: typ, ch: ch, w: w}
	if a.gone {
		// An event at this path fired the arm while the read was out,
		// and its lasting watch was told (it reads again). If that event
		// came after the reply, it fired ch too; if it came before, ch is
		// live. A channel not fired yet may be either: it is counted, not
		// shared, and looked at again shortly.
		select {
		case <-ch:
			return
		default:
		}
		h.doubt = true
		time.AfterFunc(sweepDelay, func() { r.sweep(a.key, h) })
	}
	w.AddWatches(1)
	k := r.keys[a.key]
	if k == nil {
		k = &regKey{}
		r.keys[a.key] = k
	}
	k.held = append(k.held, h)
}

// settle completes a shared read's arm: a failed read drops it.
func (r *watchRegistry) settle(a *arm, err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	r.drop(a)
	r.mu.Unlock()
	r.pers.poke()
}

// sweep forgets h if go-zookeeper fired it without an event reaching the
// registry after it was added.
func (r *watchRegistry) sweep(key armKey, h *heldWatch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h.gone {
		return
	}
	select {
	case <-h.ch:
	default:
		return
	}
	h.gone = true
	h.w.AddWatches(-1)
	r.pers.poke()
	if k := r.keys[key]; k != nil {
		if i := slices.Index(k.held, h); i >= 0 {
			k.held = slices.Delete(k.held, i, i+1)
		}
		r.tidy(key, k)
	}
}

// drop removes a, if it is still registered. Called with r.mu held.
func (r *watchRegistry) drop(a *arm) {
	if a.gone {
		return
	}
	a.gone = true
	r.unlink(a)
	k := r.keys[a.key]
	if k == nil {
		return
	}
	if i := slices.Index(k.arms, a); i >= 0 {
		k.arms = slices.Delete(k.arms, i, i+1)
	}
	r.tidy(a.key, k)
}

// unlink takes a out of its lasting watch's list. Called with r.mu held.
func (r *watchRegistry) unlink(a *arm) {
	if a.prev != nil {
		a.prev.next = a.next
	} else if a.l.arms == a {
		a.l.arms = a.next
	}
	if a.next != nil {
		a.next.prev = a.prev
	}
	a.prev, a.next = nil, nil
}

// tidy forgets an empty key. Called with r.mu held.
func (r *watchRegistry) tidy(key armKey, k *regKey) {
	if len(k.arms) == 0 && len(k.held) == 0 {
		delete(r.keys, key)
	}
}

// unregister drops every arm of l, once its watch has ended and no read
// of it is left: the registry then holds nothing of l, and a later event
// at its paths finds only the watches go-zookeeper still holds.
func (r *watchRegistry) unregister(l *lasting) {
	r.mu.Lock()
	for l.arms != nil {
		r.drop(l.arms)
	}
	r.mu.Unlock()
	r.pers.poke() // a persistent watch's removal may have waited for these
}

// standardLive reports whether go-zookeeper may hold a watch of a lasting
// watch at path of conn (held, or a read setting one still out). Called
// with the persistent registry's lock held.
func (r *watchRegistry) standardLive(conn *zk.Conn, path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := r.keys[armKey{conn, path}]
	if k == nil {
		return false
	}
	for _, h := range k.held {
		if !h.gone {
			return true
		}
	}
	for _, a := range k.arms {
		if !a.pers {
			return true
		}
	}
	return false
}

// busy reports whether any lasting watch waits for an event at path of
// conn, or go-zookeeper may hold a watch there. Called with the
// persistent registry's lock held.
func (r *watchRegistry) busy(conn *zk.Conn, path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.keys[armKey{conn, path}]
	return ok
}

// fireServed fires the arms at path of conn that a persistent watch
// served, once it no longer does: their lasting watches read again. It
// never blocks.
func (r *watchRegistry) fireServed(conn *zk.Conn, path string) {
	key := armKey{conn, path}
	r.mu.Lock()
	k := r.keys[key]
	if k == nil {
		r.mu.Unlock()
		return
	}
	var hit []*arm
	keep := k.arms[:0]
	for _, a := range k.arms {
		if !a.pers {
			keep = append(keep, a)
			continue
		}
		a.gone = true
		r.unlink(a)
		hit = append(hit, a)
	}
	clear(k.arms[len(keep):])
	k.arms = keep
	r.tidy(key, k)
	r.mu.Unlock()
	for _, a := range hit {
		a.l.notify(a.n, a.kind)
	}
}

// dispatch handles a watch event of conn, from go-zookeeper's event
// callback: it ends the held watches and the arms the event fires (as
// go-zookeeper's notifyWatches and invalidateWatches fire its channels,
// right after the callback) and tells the arms' lasting watches. It never
// blocks.
func (r *watchRegistry) dispatch(conn *zk.Conn, ev zk.Event) {
	fires := fireBits(ev.Type)
	if fires == 0 {
		return
	}
	key := armKey{conn, ev.Path}
	r.mu.Lock()
	k := r.keys[key]
	if k == nil {
		r.mu.Unlock()
		return
	}
	keepH := k.held[:0]
	for _, h := range k.held {
		if h.typ&fires == 0 {
			keepH = append(keepH, h)
			continue
		}
		h.gone = true
		h.w.AddWatches(-1)
	}
	clear(k.held[len(keepH):])
	k.held = keepH
	var hit []*arm
	keepA := k.arms[:0]
	for _, a := range k.arms {
		if a.mask&fires == 0 {
			keepA = append(keepA, a)
			continue
		}
		a.gone = true
		r.unlink(a)
		hit = append(hit, a)
	}
	clear(k.arms[len(keepA):])
	k.arms = keepA
	r.tidy(key, k)
	r.mu.Unlock()
	for _, a := range hit {
		a.l.notify(a.n, a.kind)
	}
}
