package queue

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// maxRefused bounds the lock watches a lock-safe consumer keeps for items
// it was refused; past it a refused item waits for the next listing.
const maxRefused = 1024

// worker is the state of one queue value's consuming loop.
type worker struct {
	c        *core
	list     *listing
	pos      int
	bad      map[string]bool // items reported bad, left in place
	refused  map[string]bool // items whose lock we watch
	lockEvs  chan zk.Event   // the refused locks' watches (Into)
	retry    []string        // items whose lock went: claim them first
	collided int             // claims lost to another consumer in this listing
	line     lineMember
	ctx      context.Context
}

// run is the consuming loop: claim the listed items in order, list again
// when the list is exhausted, and wait in the line when there is nothing.
func (c *core) run(ctx context.Context) {
	w := &worker{c: c, list: &listing{kind: c.kind}, bad: map[string]bool{},
		refused: map[string]bool{}, lockEvs: make(chan zk.Event, maxRefused+16), ctx: ctx}
	w.line.w = w
	defer func() {
		w.line.leave(ctx)
		c.mu.Lock()
		c.closeItemsLocked()
		c.mu.Unlock()
	}()
	fails := 0
	for ctx.Err() == nil {
		w.drainLockEvents()
		if n := len(w.retry); n > 0 {
			name := w.retry[0]
			w.retry = w.retry[1:]
			w.claim(ctx, name, true)
			continue
		}
		if w.pos >= len(w.list.entries) {
			kids, err := c.client.GetChildren().ForPath(ctx, c.path)
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				if ctx.Err() != nil {
					return
				}
				fails++
				c.report(fmt.Errorf("queue: list %s: %w", c.path, err))
				sleep(ctx, recipe.Jitter(time.Duration(fails)*50*time.Millisecond, 2*time.Second))
				continue
			}
			fails = 0
			w.setList(kids)
		}
		e, due, ok := w.next()
		if !ok {
			w.idle(ctx, due) // returns with the list set when it found work
			continue
		}
		w.claim(ctx, w.list.nameOf(e), false)
	}
}

// setList replaces the pending list with the items of children.
func (w *worker) setList(children []string) {
	seenBad := map[string]bool{}
	l, _ := newListing(w.c.kind, children, func(name string) bool {
		if w.bad[name] {
			seenBad[name] = true
			return true
		}
		return w.refused[name] // its lock's watch brings it back
	})
	w.bad = seenBad // forget bad items that are gone
	w.list, w.pos, w.collided = l, 0, 0
}

// next returns the next due entry. With none, due is when the earliest
// pending one falls due (zero: nothing pending).
func (w *worker) next() (e entry, due time.Time, ok bool) {
	if w.pos >= len(w.list.entries) {
		return entry{}, time.Time{}, false
	}
	e = w.list.entries[w.pos]
	if w.c.kind == delayKind {
		if ms := time.Now().UnixMilli(); e.key > ms {
			// Sorted by due time: nothing after it is due either.
			w.list.entries, w.pos = nil, 0
			return entry{}, time.UnixMilli(e.key), false
		}
	}
	w.pos++
	return e, time.Time{}, true
}

// collide notes a claim lost to another consumer and jumps ahead by a
// random few entries, so that consumers working from the same listing
// spread out instead of racing for each next item. One consumer alone
// never collides, so it keeps the queue's order.
func (w *worker) collide() {
	w.collided++
	left := len(w.list.entries) - w.pos
	if left <= 1 {
		return
	}
	w.pos += rand.IntN(min(left, 1+4*w.collided, 64))
}

// drainLockEvents moves the items whose refused lock went to retry.
func (w *worker) drainLockEvents() {
	for {
		select {
		case ev := <-w.lockEvs:
			w.lockEvent(ev)
		default:
			return
		}
	}
}

func (w *worker) lockEvent(ev zk.Event) {
	name := path.Base(ev.Path)
	if !w.refused[name] {
		return
	}
	if ev.Type == zk.EventNodeDataChanged {
		// Not gone: watch again.
		delete(w.refused, name)
		w.refuse(w.ctx, name)
		return
	}
	delete(w.refused, name)
	w.retry = append(w.retry, name)
}

// refuse watches the lock of an item another consumer holds, to take the
// item up as soon as the lock goes.
func (w *worker) refuse(ctx context.Context, name string) {
	if w.refused[name] || len(w.refused) >= maxRefused || ctx.Err() != nil {
		return
	}
	stat, _, err := w.c.client.CheckExists().Into(w.lockEvs).
		ForPathW(ctx, framework.JoinPath(w.c.cfg.lockPath, name))
	if err != nil {
		return // the next listing finds the item
	}
	if stat == nil {
		w.retry = append(w.retry, name) // gone already
		return
	}
	w.refused[name] = true
}

// sleep waits for d or ctx.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
