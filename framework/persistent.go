package framework

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/queue"
)

// ErrUnimplemented reports a request the server does not know: addWatch
// on a ZooKeeper older than 3.6. Fall back to one-shot watches there
// ([Client.Watch] needs none of 3.6).
var ErrUnimplemented = errors.New("framework: the server does not implement the request (ZooKeeper before 3.6)")

// PersistentEventType is the kind of a [PersistentEvent].
type PersistentEventType int

// The kinds of persistent watch events.
const (
	// PersistentCreated: the node was created.
	PersistentCreated PersistentEventType = iota + 1
	// PersistentDeleted: the node was deleted.
	PersistentDeleted
	// PersistentDataChanged: the node's data was set.
	PersistentDataChanged
	// PersistentChildrenChanged: a child of the watched node was created
	// or deleted (a watch that is not recursive only).
	PersistentChildrenChanged
	// PersistentResync: events may have been missed (a reconnect, a new
	// session, or a watch set later than asked, see
	// [AddWatchBuilder.ForPath]); the watch is set on the server again.
	// Read what you follow again: every change after that read is
	// reported.
	PersistentResync

	// persistentEnd tells an internal sink that the client closed; it
	// never reaches a PersistentWatch's channel.
	persistentEnd PersistentEventType = -1
)

var persistentEventNames = [...]string{"", "CREATED", "DELETED", "DATA_CHANGED", "CHILDREN_CHANGED", "RESYNC"}

// String returns the type's name, such as "CREATED", or "UNKNOWN".
func (t PersistentEventType) String() string {
	if t > 0 && int(t) < len(persistentEventNames) {
		return persistentEventNames[t]
	}
	return "UNKNOWN"
}

// PersistentEvent is one event of a persistent watch.
type PersistentEvent struct {
	Type PersistentEventType
	// Path is the node's path, relative to the namespace; for
	// PersistentChildrenChanged the parent's, for PersistentResync the
	// watched path.
	Path string
}

// AddWatchBuilder sets a persistent watch, ZooKeeper 3.6's addWatch: a
// cheap value, like the other operation builders.
type AddWatchBuilder struct {
	c         *Client
	recursive bool
}

// AddWatch starts building a persistent watch. Without options it
// watches one node (mode PERSISTENT).
func (c *Client) AddWatch() AddWatchBuilder { return AddWatchBuilder{c: c} }

// Recursive makes the watch follow the node and all its descendants (mode
// PERSISTENT_RECURSIVE): their creation, data changes and deletion, but
// no PersistentChildrenChanged.
func (b AddWatchBuilder) Recursive() AddWatchBuilder { b.recursive = true; return b }

// ForPath sets the watch on path and returns it once the server has it:
// every change after ForPath returns is reported, in the server's order.
// It waits for a connection while ctx lasts. It returns an error, and
// leaves nothing set, for a bad path, a nil or done ctx, a client that is
// not started or is closed, ctx ending first, or a server without
// addWatch (an error matching [ErrUnimplemented]).
//
// If the client holds a one-shot watch on path itself (a ForPathW read's,
// or a lasting watch's), the server watch is set only once that one fires
// (see "Persistent watches" in the package doc); ForPath then returns at
// once, and the channel gets PersistentResync when the watch is set.
func (b AddWatchBuilder) ForPath(ctx context.Context, path string) (*PersistentWatch, error) {
	full, err := b.c.prepare(ctx, path)
	if err != nil {
		return nil, err
	}
	w := &PersistentWatch{c: b.c, path: path, out: make(chan PersistentEvent), stop: make(chan struct{})}
	w.q = queue.New(w.deliver)
	in, err := b.c.watchPersistent(ctx, full, b.recursive, w.post)
	if err != nil {
		w.end()
		return nil, errtext.Errorf("framework: addWatch %s: %w", path, err)
	}
	w.in = in
	return w, nil
}

// PersistentWatch is a persistent watch set with [Client.AddWatch]. Its
// methods are safe for concurrent use. The zero value is a watch that is
// closed: Events returns nil and Close does nothing. Do not copy one.
type PersistentWatch struct {
	c    *Client
	in   *persistentInterest
	path string
	q    *queue.Queue[PersistentEvent]
	out  chan PersistentEvent
	stop chan struct{}
	once sync.Once
}

// Path returns the watched path, as given to ForPath.
func (w *PersistentWatch) Path() string {
	if w == nil {
		return ""
	}
	return w.path
}

// Events returns the watch's events, in the order the server sent them,
// with PersistentResync after each reconnect and session change. It is
// closed at Close or at the client's Close; events not taken by then are
// dropped. A slow receiver never blocks the client or loses an event:
// they wait in an unbounded queue.
func (w *PersistentWatch) Events() <-chan PersistentEvent {
	if w == nil {
		return nil
	}
	return w.out
}

// Close ends the watch: Events is closed at once, and the server watch
// is removed, unless another watch of the client still needs that path
// (it is then removed once none does). It waits for the removal while ctx
// lasts (the removal goes on after ctx ends) and returns ctx's error if
// it ends first. While the client is disconnected it returns at once: the
// server dropped the connection's watches, and this one is not set again.
// Close is idempotent; a nil ctx is an error, after the watch is closed.
func (w *PersistentWatch) Close(ctx context.Context) error {
	if w == nil || w.c == nil {
		return nil
	}
	w.end()
	if w.in == nil {
		return nil
	}
	if ctx == nil {
		w.c.pers.remove(context.Background(), w.in, false)
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	return w.c.unwatchPersistent(ctx, w.in)
}

// post is the watch's sink: it never blocks.
func (w *PersistentWatch) post(ev PersistentEvent) {
	if ev.Type == persistentEnd {
		w.end()
		return
	}
	w.q.Post(ev)
}

func (w *PersistentWatch) deliver(ev PersistentEvent) {
	select {
	case w.out <- ev:
	case <-w.stop:
	}
}

// end stops the delivery and closes the channel, once.
func (w *PersistentWatch) end() {
	w.once.Do(func() {
		if w.q == nil {
			return
		}
		w.q.Stop()
		close(w.stop)
		<-w.q.Done()
		close(w.out)
	})
}

// watchPersistent sets a persistent watch on the server path full (the
// namespace applied), recursive or not, for an interest of the client's
// own, and returns once the server has it (or it is deferred, see
// persistents), as AddWatchBuilder.ForPath does. sink gets the watch's
// events, each with its Path relative to the namespace:
//
//   - for a recursive watch, PersistentCreated, PersistentDeleted and
//     PersistentDataChanged of full and every node below it; for one that
//     is not, those of full and PersistentChildrenChanged;
//   - PersistentResync after every reconnect and session change, and
//     after a deferred watch is set, once the watch is set again: read
//     again then (ZOOKEEPER-4698: events missed meanwhile are not
//     replayed);
//   - a last event of type persistentEnd when the client closes.
//
// sink is called in the server's order, one call at a time, with the
// client's persistent registry locked: it must not block and must not
// call the client. It is never called after unwatchPersistent begins.
func (c *Client) watchPersistent(ctx context.Context, full string, recursive bool, sink func(PersistentEvent)) (*persistentInterest, error) {
	in := &persistentInterest{mode: pPersistent, sink: sink}
	if recursive {
		in.mode = pRecursive
	}
	if err := c.pers.add(ctx, full, in); err != nil {
		c.pers.remove(context.Background(), in, false)
		return nil, err
	}
	return in, nil
}

// unwatchPersistent ends an interest of watchPersistent, and removes its
// server watch when no other interest of the client needs the path,
// waiting for that while ctx lasts (see PersistentWatch.Close).
func (c *Client) unwatchPersistent(ctx context.Context, in *persistentInterest) error {
	if in == nil {
		return nil
	}
	return c.pers.remove(ctx, in, true)
}
