package leaderlatch

import (
	"sync"
	"sync/atomic"

	"github.com/go-curator/curator/internal/goid"
)

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
	go q.run()
	return func() {
		l.mu.Lock()
		delete(l.listeners, q)
		l.mu.Unlock()
		q.stop()
	}
}

// listener delivers events to one Listener on its own goroutine, from an
// unbounded queue.
type listener struct {
	ln   Listener
	gid  atomic.Int64 // the goroutine that runs the callbacks
	wake chan struct{}
	done chan struct{} // closed when run returns

	mu       sync.Mutex
	queue    []event
	draining bool // finish: deliver what is queued, then end
	stopped  bool // stop: end now
}

func newListener(ln Listener) *listener {
	return &listener{ln: ln, wake: make(chan struct{}, 1), done: make(chan struct{})}
}

func (q *listener) post(e event) {
	q.mu.Lock()
	if !q.stopped && !q.draining {
		q.queue = append(q.queue, e)
	}
	q.mu.Unlock()
	q.poke()
}

func (q *listener) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// finish makes run deliver what is queued and then return.
func (q *listener) finish() {
	q.mu.Lock()
	q.draining = true
	q.mu.Unlock()
	q.poke()
}

// stop makes run return without delivering more.
func (q *listener) stop() {
	q.mu.Lock()
	q.stopped, q.queue = true, nil
	q.mu.Unlock()
	q.poke()
}

func (q *listener) run() {
	defer close(q.done)
	q.gid.Store(goid.Get())
	for {
		q.mu.Lock()
		switch {
		case q.stopped:
			q.mu.Unlock()
			return
		case len(q.queue) > 0:
			e := q.queue[0]
			q.queue[0] = event{}
			q.queue = q.queue[1:]
			q.mu.Unlock()
			e.deliver(q.ln)
			continue
		case q.draining:
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		<-q.wake
	}
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
