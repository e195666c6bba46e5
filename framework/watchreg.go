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
		w.AddWatches(1)
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
	w.AddWatches(1)
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
		a.w.AddWatches(-1)
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
	fires := fireBits(ev.Type)
	if fires == 0 {
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
			a.w.AddWatches(-1)
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
