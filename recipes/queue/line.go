package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// lineName is the name of a consumer's node in the line, before the
// protection prefix and after it the server's sequence number.
const lineName = "c-"

// lineMember is a consumer's place in the line of idle consumers.
type lineMember struct {
	w    *worker
	node string            // our node's path, "" when out of the line
	sess framework.Session // the session that made it
	head bool              // we were the head: nobody can come before us
}

// idle waits for work. Only the head of the line watches the queue's
// directory; the others each watch their predecessor in the line. When the
// head finds work due, it returns with the pending list set (so the loop
// need not read the directory again); it also returns for a refused lock
// that went, a session change or ctx's end. due, when not zero, is when
// the earliest pending delayed item falls due (the head's timer).
func (w *worker) idle(ctx context.Context, due time.Time) {
	c := w.c
	lost := c.client.LossSignal(framework.StandardErrorPolicy)
	var timer <-chan time.Time
	if !due.IsZero() {
		t := time.NewTimer(max(time.Until(due), time.Millisecond))
		defer t.Stop()
		timer = t.C
	}
	var watch <-chan zk.Event
	head := c.cfg.noLine
	if !head {
		var err error
		head, watch, err = w.line.wait(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.report(fmt.Errorf("queue: line %s: %w", c.cfg.linePath, err))
				sleep(ctx, recipe.Jitter(100*time.Millisecond, time.Second))
			}
			return
		}
		if !head {
			timer = nil // only the head keeps the delay queue's time
		}
	}
	if head {
		kids, qwatch, err := c.client.GetChildren().ForPathW(ctx, c.path)
		if errors.Is(err, zk.ErrNoNode) {
			var st *zk.Stat
			st, qwatch, err = c.client.CheckExists().CreatingParentContainersIfNeeded().ForPathW(ctx, c.path)
			if err == nil && st != nil {
				return // made meanwhile: list it
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				c.report(fmt.Errorf("queue: watch %s: %w", c.path, err))
				sleep(ctx, recipe.Jitter(100*time.Millisecond, time.Second))
			}
			return
		}
		w.setList(kids)
		if _, d, ok := w.next(); ok {
			w.pos-- // work is there: the loop takes it
			return
		} else if !d.IsZero() {
			t := time.NewTimer(max(time.Until(d), time.Millisecond))
			defer t.Stop()
			timer = t.C
		}
		watch = qwatch
	}
	select {
	case <-watch:
	case <-timer:
	case ev := <-w.lockEvs:
		w.lockEvent(ev)
	case <-lost:
	case <-ctx.Done():
	}
	return
}

// wait puts us in the line (at the tail, if we are not in it) and reports
// whether we are its head; if not, it returns the watch on our
// predecessor's node.
func (l *lineMember) wait(ctx context.Context) (bool, <-chan zk.Event, error) {
	c := l.w.c
	for ctx.Err() == nil {
		if l.node != "" && !l.sess.Valid() {
			l.leave(ctx) // our node went, or will, with its session
		}
		if l.node == "" {
			sess, err := c.client.CurrentSession(ctx)
			if err != nil {
				return false, nil, err
			}
			node, err := c.client.Create().CreatingParentContainersIfNeeded().WithProtection().
				WithMode(framework.EphemeralSequential).ForPath(ctx, framework.JoinPath(c.cfg.linePath, lineName), nil)
			if err != nil {
				return false, nil, err
			}
			l.node, l.sess, l.head = node, sess, false
		}
		if l.head {
			return true, nil, nil
		}
		kids, err := c.client.GetChildren().ForPath(ctx, c.cfg.linePath)
		if err != nil {
			return false, nil, err
		}
		slices.SortFunc(kids, func(a, b string) int {
			sa, _ := seqOf(a)
			sb, _ := seqOf(b)
			return int(sa - sb)
		})
		me := l.node[len(c.cfg.linePath)+1:]
		i := slices.Index(kids, me)
		switch {
		case i < 0:
			l.node = "" // gone (the session changed): join again
			continue
		case i == 0:
			l.head = true
			return true, nil, nil
		}
		st, watch, err := c.client.CheckExists().ForPathW(ctx, framework.JoinPath(c.cfg.linePath, kids[i-1]))
		if err != nil {
			return false, nil, err
		}
		if st == nil {
			continue // it left meanwhile: look again
		}
		return false, watch, nil
	}
	return false, nil, ctx.Err()
}

// leave takes us out of the line, if we are in it.
func (l *lineMember) leave(ctx context.Context) {
	if l.node == "" {
		return
	}
	node := l.node
	l.node, l.head = "", false
	if err := recipe.Delete(ctx, l.w.c.client, node); err != nil {
		l.w.c.report(fmt.Errorf("queue: leave line %s: %w", node, err))
	}
}
