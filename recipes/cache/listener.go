package cache

import (
	"sync"
	"sync/atomic"

	"github.com/go-curator/curator/internal/goid"
)

// listener delivers events to one listener function on its own goroutine,
// from an unbounded queue: a slow listener delays only itself, never the
// cache, its view or the other listeners, and never loses an event; its
// queue grows while it is slow, by one Event (which shares the node's
// data with the view) per change.
type listener struct {
	fn    func(Event)
	gid   atomic.Int64 // the goroutine that runs fn
	mu    sync.Mutex
	queue []Event
	wake  chan struct{}
	stop  chan struct{}
	done  chan struct{}
}

func newListener(fn func(Event)) *listener {
	l := &listener{fn: fn, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go l.run()
	return l
}

func (l *listener) post(ev Event) {
	l.mu.Lock()
	l.queue = append(l.queue, ev)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *listener) run() {
	defer close(l.done)
	l.gid.Store(goid.Get())
	for {
		select {
		case <-l.wake:
		case <-l.stop:
			return
		}
		for {
			l.mu.Lock()
			if len(l.queue) == 0 {
				l.mu.Unlock()
				break
			}
			ev := l.queue[0]
			l.queue[0] = Event{}
			l.queue = l.queue[1:]
			l.mu.Unlock()
			select {
			case <-l.stop:
				return
			default:
			}
			l.fn(ev)
		}
	}
}

// close stops delivery; a call already running finishes.
func (l *listener) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.stop:
	default:
		close(l.stop)
		l.queue = nil
	}
}
