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
type oneShots struct {
	mu sync.Mutex
	m  map[armKey][]*oneShot
}

type oneShot struct {
	out     chan<- zk.Event
	mine    chan zk.Event // out, when it is s's own; nil when it is the caller's (Into)
	mask    uint8
	w       *wire
	counted bool // on w's count of outstanding watches (see waitGate)
	fired   bool
}

// pre registers a watch of conn on path, fired by the event types in
// mask, before its read is sent. Its event goes to into if that is not
// nil (see GetDataBuilder.Into), else to a channel of its own.
func (o *oneShots) pre(conn *zk.Conn, path string, mask uint8, w *wire, into chan<- zk.Event) *oneShot {
	s := &oneShot{out: into, mask: mask, w: w}
	if into == nil {
		s.mine = make(chan zk.Event, 1)
		s.out = s.mine
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = make(map[armKey][]*oneShot)
	}
	k := armKey{conn, path}
	o.m[k] = append(o.m[k], s)
	return s
}

// own returns the channel the caller receives s's event from: nil when
// the event goes to the caller's own channel (Into).
func (s *oneShot) own() <-chan zk.Event { return s.mine }

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
		s.counted = true
		s.w.AddWatches(1)
		return
	}
	k := armKey{conn, path}
	list := o.m[k]
	for i, x := range list {
		if x == s {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(o.m, k)
	} else {
		o.m[k] = list
	}
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
	var hit []*oneShot
	keep := o.m[k][:0]
	for _, s := range o.m[k] {
		if s.mask&fires == 0 {
			keep = append(keep, s)
			continue
		}
		s.fired = true
		if s.counted {
			s.w.AddWatches(-1)
		}
		hit = append(hit, s)
	}
	if len(keep) == 0 {
		delete(o.m, k)
	} else {
		o.m[k] = keep
	}
	o.mu.Unlock()
	if len(hit) == 0 {
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
	for _, s := range hit {
		if s.mine == nil {
			select {
			case s.out <- ev:
			default:
				c.logger.Warn("framework: a watch event found its Into channel full: dropped", "path", ev.Path, "type", ev.Type.String())
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
