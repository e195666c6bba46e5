package sharedcount

import (
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/queue"
)

// Listener receives a shared value's changes, connection states and
// background errors. Any field may be nil. Each listener gets its own
// goroutine and an unbounded queue, so its calls come in order and never
// overlap.
type Listener[T int32 | []byte] struct {
	// Changed is called with each new value, in the order of their changes
	// (by Mzxid). A change that another client made and overwrote before
	// this client could read it is not seen; every value this client reads
	// or writes is.
	Changed func(VersionedValue[T])
	// StateChanged is called with each connection state of the client.
	StateChanged func(framework.ConnectionState)
	// Error is called when the background re-read fails in a way that
	// retrying will not fix, such as corrupt data (ErrCorrupt). The cache
	// keeps its last good value.
	Error func(error)
}

// event is one call to make on a Listener.
type event[T int32 | []byte] struct {
	value *VersionedValue[T]
	state framework.ConnectionState
	err   error
}

func (e event[T]) deliver(l Listener[T]) {
	switch {
	case e.value != nil:
		if l.Changed != nil {
			l.Changed(*e.value)
		}
	case e.err != nil:
		if l.Error != nil {
			l.Error(e.err)
		}
	default:
		if l.StateChanged != nil {
			l.StateChanged(e.state)
		}
	}
}

// listener delivers events to one Listener on its own goroutine, from an
// unbounded queue: a slow listener delays only itself.
type listener[T int32 | []byte] struct {
	q     *queue.Queue[event[T]]
	clone func(T) T
}

func newListener[T int32 | []byte](l Listener[T], clone func(T) T) *listener[T] {
	return &listener[T]{q: queue.New(func(e event[T]) { e.deliver(l) }), clone: clone}
}

// post queues an event; a value is copied so each listener owns its own.
func (q *listener[T]) post(e event[T]) {
	if e.value != nil {
		v := *e.value
		v.Value = q.clone(v.Value)
		e.value = &v
	}
	q.q.Post(e)
}
