package framework

import (
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
)

// oneShots delivers the events of the one-shot watches the W reads set,
// without a goroutine per watch (a lock waiter holds one such watch while
// it waits; ten thousand waiters would otherwise cost ten thousand more
// goroutines). Like watchRegistry, it is fed by the client's event
// callback, which go-zookeeper calls for every watch event before it fires
// its own channels: a watch is registered before its read is sent, under
// the connection, the path and the bits of the event types that fire it
// (go-zookeeper's table, mirrored), and ends at the first such event. The
// channel go-zookeeper returns is left unread: it is buffered and closed
// by go-zookeeper.
//
// A watch on a path where the client's persistent watch is set on the
// server (see persistents.serves) is served by it: its read is sent
// without a watch (ZOOKEEPER-4466: one watch mode per path and
// connection), the persistent watch's events fire it here as they would
// a watch go-zookeeper holds, and the persistent registry fires it when
// that watch goes (fireServed).
type oneShots struct {
	mu   sync.Mutex
	m    map[armKey]*oneShot // each path's watches, in the order set, linked by next
	pers *persistents        // nil in a zero Client
}

type oneShot struct {
	out     chan<- zk.Event
	w       *wire
	next    *oneShot
	mask    uint8
	shared  bool // out is the caller's (Into): never closed, never blocked on
	counted bool // on w's count of outstanding watches (see waitGate)
	fired   bool
	served  bool // served by a persistent watch: go-zookeeper holds no watch for it
}

// pre registers a watch of conn on path, fired by the event types in
// mask, before its read is sent. Its event goes to into if that is not
// nil (see GetDataBuilder.Into), else to a channel of its own, which pre
// returns (own is nil with into). served reports that a persistent watch
// of the client serves it: the read must then be sent without a watch.
func (o *oneShots) pre(conn *zk.Conn, path string, mask uint8, w *wire, into chan<- zk.Event) (s *oneShot, own <-chan zk.Event, served bool) {
	s = &oneShot{out: into, shared: into != nil, mask: mask, w: w}
	if into == nil {
		ch := make(chan zk.Event, 1)
		s.out, own = ch, ch
	}
	if o.pers != nil {
		// Decided under the persistent registry's lock, so that no
		// addWatch or removeWatches on path starts in between.
		o.pers.mu.Lock()
		defer o.pers.mu.Unlock()
		s.served = o.pers.servesLocked(conn, path)
		served = s.served
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = make(map[armKey]*oneShot)
	}
	k := armKey{conn, path}
	at := o.m[k]
	if at == nil {
		o.m[k] = s
		return s, own, served
	}
	for at.next != nil {
		at = at.next
	}
	at.next = s
	return s, own, served
}

// done completes s with its read's outcome: with err, no watch was set and
// s is dropped; otherwise go-zookeeper holds the watch, which is counted
// on its wire unless it fired already (an event that came before the
// read's reply: a spurious wake-up at worst, never a missed one).
func (o *oneShots) done(conn *zk.Conn, path string, s *oneShot, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s.fired {
		return
	}
	if err == nil {
		if !s.served {
			s.counted = true
			s.w.AddWatches(1)
		}
		return
	}
	if o.pers != nil {
		defer o.pers.poke() // a persistent watch may have waited for this one
	}
	k := armKey{conn, path}
	var prev *oneShot
	for at := o.m[k]; at != nil; prev, at = at, at.next {
		if at != s {
			continue
		}
		switch {
		case prev != nil:
			prev.next = s.next
		case s.next != nil:
			o.m[k] = s.next
		default:
			delete(o.m, k)
		}
		break
	}
	s.next = nil
}

// dispatch fires the one-shot watches ev ends, with ev's path relative to
// the namespace, and an end of watch (zk.EventNotWatching) that tells a
// closed client (ErrClosed) from a session that ended
// (zk.ErrSessionExpired). It never blocks.
func (c *Client) dispatchOneShot(conn *zk.Conn, ev zk.Event) {
	fires := fireBits(ev.Type)
	if fires == 0 {
		return
	}
	o := &c.oneShots
	k := armKey{conn, ev.Path}
	o.mu.Lock()
	var hit, keep, keepTail, hitTail *oneShot // hit and keep: lists in the order set
	for s := o.m[k]; s != nil; {
		next := s.next
		s.next = nil
		if s.mask&fires == 0 {
			if keep == nil {
				keep = s
			} else {
				keepTail.next = s
			}
			keepTail = s
		} else {
			s.fired = true
			if s.counted {
				s.w.AddWatches(-1)
			}
			if hit == nil {
				hit = s
			} else {
				hitTail.next = s
			}
			hitTail = s
		}
		s = next
	}
	if keep == nil {
		delete(o.m, k)
	} else {
		o.m[k] = keep
	}
	o.mu.Unlock()
	if hit == nil {
		return
	}
	ev.Path = unfixPath(c.ns, ev.Path)
	if ev.Type == zk.EventNotWatching {
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		switch {
		case closed:
			ev.Err = fmt.Errorf("%w (watch ended: %w)", ErrClosed, ev.Err)
		case !errors.Is(ev.Err, zk.ErrSessionExpired):
			ev.Err = fmt.Errorf("%w (watch ended: %w)", zk.ErrSessionExpired, ev.Err)
		}
	}
	for s := hit; s != nil; s = s.next {
		if s.shared {
			select {
			case s.out <- ev:
			default:
				c.logger.Debug("framework: a watch event found its Into channel full: dropped", "path", ev.Path, "type", ev.Type.String())
			}
		} else {
			s.out <- ev // buffered, and each fires once
			close(s.out)
		}
		if c.obsOpts.m.WatchDelivered != nil {
			c.watchDelivered(false, oneShotName(ev.Type))
		}
	}
}

// standardLive reports whether go-zookeeper may hold a watch set by a
// W read at path of conn (set, or its read still out). Called with the
// persistent registry's lock held.
func (o *oneShots) standardLive(conn *zk.Conn, path string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for s := o.m[armKey{conn, path}]; s != nil; s = s.next {
		if !s.fired && !s.served {
			return true
		}
	}
	return false
}

// busy reports whether any W read's watch at path of conn waits for an
// event. Called with the persistent registry's lock held.
func (o *oneShots) busy(conn *zk.Conn, path string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.m[armKey{conn, path}]
	return ok
}

// fireServed fires the watches at path of conn that a persistent watch
// served, once it no longer does: with a NotWatching event carrying
// ended if that is not nil (the session ended, or the client closed),
// else with a NodeDataChanged or NodeChildrenChanged event, a spurious
// wake-up after which the caller reads again (its watch then goes to the
// server). rel is path relative to the namespace. It never blocks.
func (o *oneShots) fireServed(conn *zk.Conn, path, rel string, ended error) {
	k := armKey{conn, path}
	o.mu.Lock()
	var hit []*oneShot
	var keep, tail *oneShot
	for s := o.m[k]; s != nil; {
		next := s.next
		s.next = nil
		if s.served && !s.fired {
			s.fired = true
			hit = append(hit, s)
		} else {
			if keep == nil {
				keep = s
			} else {
				tail.next = s
			}
			tail = s
		}
		s = next
	}
	if keep == nil {
		delete(o.m, k)
	} else {
		o.m[k] = keep
	}
	o.mu.Unlock()
	for _, s := range hit {
		ev := zk.Event{Type: zk.EventNodeDataChanged, State: zk.StateHasSession, Path: rel}
		switch {
		case ended != nil:
			ev.Type, ev.State, ev.Err = zk.EventNotWatching, zk.StateDisconnected, ended
		case s.mask&bitChild != 0:
			ev.Type = zk.EventNodeChildrenChanged
		}
		if s.shared {
			select {
			case s.out <- ev:
			default:
			}
		} else {
			s.out <- ev
			close(s.out)
		}
	}
}

// oneShotName names a one-shot watch's event type as WatchInfo does.
func oneShotName(t zk.EventType) string {
	switch t {
	case zk.EventNodeCreated:
		return "CREATED"
	case zk.EventNodeDataChanged:
		return "CHANGED"
	case zk.EventNodeDeleted:
		return "DELETED"
	case zk.EventNodeChildrenChanged:
		return "CHILDREN_CHANGED"
	case zk.EventNotWatching:
		return "NOT_WATCHING"
	}
	return "UNKNOWN"
}

// fireBits returns the watch types an event of type t fires, as
// go-zookeeper's notifyWatches and invalidateWatches do.
func fireBits(t zk.EventType) uint8 {
	switch t {
	case zk.EventNodeCreated:
		return bitExist
	case zk.EventNodeDataChanged:
		return bitExist | bitData
	case zk.EventNodeChildrenChanged:
		return bitChild
	case zk.EventNodeDeleted, zk.EventNotWatching:
		return bitExist | bitData | bitChild
	}
	return 0
}
