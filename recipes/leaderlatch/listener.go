package leaderlatch

import "github.com/go-curator/curator/internal/queue"

// Listener is told of the changes of one candidate's leadership, as
// Curator's LeaderLatchListener. Either field may be nil.
type Listener struct {
	// IsLeader is called when the candidate becomes the leader, with the
	// new leadership.
	IsLeader func(*Leadership)
	// NotLeader is called when that leadership ends: it is lost or
	// released, or the latch closes in the NotifyLeader mode.
	NotLeader func()
}

// event is one call to make on a Listener: IsLeader with leadership, or
// NotLeader when leadership is nil.
type event struct {
	leadership *Leadership
}

// AddListener adds a listener and returns a function that removes it. The
// listener gets the changes from now on, in order, on its own goroutine
// and from an unbounded queue: a slow listener delays only itself and
// never loses an event. After remove returns, no new call starts; a call
// already running finishes. Adding a listener to a closed latch does
// nothing.
func (l *Latch) AddListener(ln Listener) (remove func()) {
	if l == nil || l.client == nil {
		return func() {}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state == closed {
		return func() {}
	}
	q := newListener(ln)
	l.listeners[q] = struct{}{}
	return func() {
		l.mu.Lock()
		delete(l.listeners, q)
		l.mu.Unlock()
		q.Stop()
	}
}

// newListener starts delivering events to ln on a goroutine of its own,
// from an unbounded queue.
func newListener(ln Listener) *queue.Queue[event] {
	return queue.New(func(e event) { e.deliver(ln) })
}

func (e event) deliver(ln Listener) {
	switch {
	case e.leadership != nil:
		if ln.IsLeader != nil {
			ln.IsLeader(e.leadership)
		}
	default:
		if ln.NotLeader != nil {
			ln.NotLeader()
		}
	}
}
