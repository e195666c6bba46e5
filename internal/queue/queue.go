// Package queue owns the per-listener delivery queue: one goroutine that
// calls one function with items, in the order they were posted, from an
// unbounded queue. A slow function delays only itself, never the poster,
// and never loses an item; the queue grows while it is slow.
package queue

import (
	"sync"
	"sync/atomic"

	"github.com/go-curator/curator/internal/goid"
)

// Queue delivers items of type T to one function on a goroutine of its
// own. Make one with New; the zero value is not usable, and a Queue must
// not be copied. Its methods are safe for concurrent use, including from
// the function it calls.
type Queue[T any] struct {
	fn   func(T)
	gid  atomic.Int64 // the delivering goroutine, 0 until it starts
	wake chan struct{}
	done chan struct{} // closed when the goroutine returns

	mu       sync.Mutex
	items    []T
	draining bool // Finish: deliver what is queued, then end
	stopped  bool // Stop: end now
}

// New starts a goroutine that calls fn with each item posted, one call at
// a time, until Stop or Finish.
func New[T any](fn func(T)) *Queue[T] {
	q := &Queue[T]{fn: fn, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go q.run()
	return q
}

// Post queues v. It never blocks. After Stop or Finish it does nothing.
func (q *Queue[T]) Post(v T) {
	q.mu.Lock()
	if !q.stopped && !q.draining {
		q.items = append(q.items, v)
	}
	q.mu.Unlock()
	q.poke()
}

// Stop ends delivery: what is queued is dropped and no further item is
// taken. A call already running, or already handed its item, finishes on
// its own; wait for it with Done (but not from that call). Stop is
// idempotent, and may follow Finish.
func (q *Queue[T]) Stop() {
	q.mu.Lock()
	q.stopped, q.items = true, nil
	q.mu.Unlock()
	q.poke()
}

// Finish makes the goroutine deliver what is queued and then end; Done
// closes after the last call returns. Later posts are dropped.
func (q *Queue[T]) Finish() {
	q.mu.Lock()
	q.draining = true
	q.mu.Unlock()
	q.poke()
}

// Done returns a channel that closes when the delivering goroutine has
// returned, after Stop or Finish.
func (q *Queue[T]) Done() <-chan struct{} { return q.done }

// GoroutineID returns the ID (as goid.Get reports it) of the goroutine
// that calls the function, or 0 before it has started. A caller that finds
// its own ID here is running inside the function and must not wait on
// Done.
func (q *Queue[T]) GoroutineID() int64 { return q.gid.Load() }

func (q *Queue[T]) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *Queue[T]) run() {
	defer close(q.done)
	q.gid.Store(goid.Get())
	var zero T
	for {
		q.mu.Lock()
		switch {
		case q.stopped:
			q.mu.Unlock()
			return
		case len(q.items) > 0:
			v := q.items[0]
			q.items[0] = zero // let the item go once delivered
			q.items = q.items[1:]
			q.mu.Unlock()
			q.fn(v)
			continue
		case q.draining:
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		<-q.wake
	}
}
