package semaphorev2

import (
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/recipes/sharedcount"
)

// NewWithCount returns a semaphore on path whose maximum is the value of a
// shared count, as Curator's InterProcessSemaphoreV2(client, path,
// SharedCountReader). Every process then agrees on the maximum, and a
// waiter looks again as soon as the count changes, so raising it lets
// waiters in. The caller starts and closes the count; before Start it
// reads as its seed. A count below 1 grants nothing until it grows. New
// does no I/O.
func NewWithCount(client *framework.Client, path string, count *sharedcount.Count, opts ...Option) (*Semaphore, error) {
	if count == nil {
		return nil, recipe.BadArg(ErrInvalidArgument, "nil shared count")
	}
	return newSemaphore(client, path, countMax{count}, opts)
}

type countMax struct{ c *sharedcount.Count }

func (m countMax) get() int { return int(m.c.Count()) }

// watch listens to the count for the length of one wait; the listener's
// goroutine belongs to the count, and the returned function removes it.
func (m countMax) watch() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	remove := m.c.AddListener(sharedcount.Listener[int32]{
		Changed: func(sharedcount.VersionedValue[int32]) {
			select {
			case ch <- struct{}{}:
			default:
			}
		},
	})
	return ch, remove
}
