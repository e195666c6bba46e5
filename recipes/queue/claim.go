package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// lost reports an error that means another consumer got there first.
func lost(err error) bool {
	return errors.Is(err, zk.ErrNoNode) || errors.Is(err, zk.ErrNodeExists) || errors.Is(err, zk.ErrBadVersion)
}

// claim takes the item node name and consumes it, plain or lock-safe.
// again says the item is retried after its lock went.
func (w *worker) claim(ctx context.Context, name string, again bool) {
	if w.c.cfg.lockPath != "" {
		w.claimLocked(ctx, name, again)
		return
	}
	w.claimPlain(ctx, name)
}

// claimPlain is Curator's plain mode: read, delete, then consume. An item
// that does not decode is reported and left in place.
func (w *worker) claimPlain(ctx context.Context, name string) {
	c := w.c
	node := framework.JoinPath(c.path, name)
	data, stat, err := c.client.GetData().ForPath(ctx, node)
	if err != nil {
		w.failed(ctx, name, "read", err)
		return
	}
	items, derr := decode(data)
	if derr != nil {
		w.badItem(name, data, derr)
		return
	}
	if err := c.client.Delete().WithVersion(stat.Version).ForPath(ctx, node); err != nil {
		// Also a lost reply (ErrIndeterminate): at most once, so skip.
		w.failed(ctx, name, "delete", err)
		return
	}
	w.line.leave(ctx)
	for i, b := range items {
		it := c.item(name, stat, i, b)
		if err := w.deliver(ctx, ctx, it, false); err != nil && ctx.Err() == nil {
			c.report(fmt.Errorf("queue: %s/%s: consumer: %w (plain mode: the item is gone)", c.path, name, err))
		}
	}
}

// claimLocked is Curator's lock-safe mode: lock, read, consume, then
// delete (or requeue) the item and the lock in one multi.
func (w *worker) claimLocked(ctx context.Context, name string, again bool) {
	c := w.c
	node := framework.JoinPath(c.path, name)
	lock := framework.JoinPath(c.cfg.lockPath, name)
	if again {
		// The lock we waited for went: most often with its item.
		if st, err := c.client.CheckExists().ForPath(ctx, node); err != nil || st == nil {
			return
		}
	}
	sess, err := c.client.CurrentSession(ctx)
	if err != nil {
		w.failed(ctx, name, "session", err)
		return
	}
	_, err = c.client.Create().WithMode(framework.Ephemeral).ForPath(ctx, lock, c.client.DefaultData())
	if errors.Is(err, zk.ErrNoNode) {
		// The lock directory went (a container, or deleted): make it again.
		_, err = c.client.Create().CreatingParentContainersIfNeeded().WithMode(framework.Ephemeral).
			ForPath(ctx, lock, c.client.DefaultData())
	}
	if errors.Is(err, framework.ErrIndeterminate) {
		// A lost reply: the lock is ours if our session owns it.
		if st, serr := c.client.CheckExists().ForPath(ctx, lock); serr == nil && st != nil && st.EphemeralOwner == sess.ID() {
			err = nil
		}
	}
	if errors.Is(err, zk.ErrNodeExists) {
		w.collide()
		w.refuse(ctx, name)
		return
	}
	if err != nil {
		w.failed(ctx, name, "lock", err)
		return
	}
	// unlock drops our lock, on our session only: a delete that ran on a
	// later session (a guaranteed delete retrying in the background)
	// would drop the lock another consumer holds by then. Once our
	// session is gone, the lock goes with it.
	unlock := func() {
		dctx, cancel := recipe.Detached(ctx)
		defer cancel()
		_, err := c.client.Transaction().Delete(lock, -1).InSession(sess).Commit(dctx)
		if err != nil && !errors.Is(err, framework.ErrSessionLost) && !errors.Is(err, zk.ErrNoNode) {
			c.report(fmt.Errorf("queue: unlock %s: %w", lock, err))
		}
	}
	data, stat, err := c.client.GetData().ForPath(ctx, node)
	if err != nil {
		unlock()
		w.failed(ctx, name, "read", err)
		return
	}
	items, derr := decode(data)
	if derr != nil {
		unlock()
		w.badItem(name, data, derr)
		return
	}
	w.line.leave(ctx)

	ictx, cancel := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	go func() {
		select {
		case <-sess.Lost():
			cancel(ErrSessionLost)
		case <-stop:
		}
	}()
	var cerr error
	for i, b := range items {
		if cerr = w.deliver(ctx, ictx, c.item(name, stat, i, b), true); cerr != nil {
			if c.cfg.errorMode == ErrorModeRequeue || ictx.Err() != nil {
				break
			}
		}
	}
	close(stop)
	cancel(nil)
	switch {
	case !sess.Valid() && cerr == nil:
		// Consumed, but our lock went with the session. Finish on the new
		// session if nobody has taken the item meanwhile: one multi that
		// takes the lock again, deletes the item and drops the lock fails
		// as a whole when another consumer holds it.
		c.finishAnew(ctx, name, node, lock)
		return
	case !sess.Valid():
		// Our lock went with the session: the item is another's now.
		c.report(fmt.Errorf("queue: %s/%s: %w: left for redelivery", c.path, name, ErrSessionLost))
		return
	case cerr != nil && ctx.Err() != nil:
		// Failed because we are closing: leave it in place for another.
		unlock()
		return
	}
	dctx, dcancel := recipe.Detached(ctx)
	defer dcancel()
	txn := c.client.Transaction().Delete(node, -1)
	if cerr != nil && c.cfg.errorMode == ErrorModeRequeue {
		txn = txn.Create(c.requeuePath(name), data, framework.PersistentSequential)
	}
	// Bound to our session: sent on a later one (a retry after the
	// connection dropped, or a request queued while the session changed),
	// the multi would delete the lock another consumer holds by then, and
	// the item it works on.
	txn = txn.Delete(lock, -1).InSession(sess)
	if !sess.Valid() {
		if cerr == nil {
			c.finishAnew(ctx, name, node, lock)
		}
		return
	}
	_, err = txn.Commit(dctx)
	if errors.Is(err, framework.ErrIndeterminate) && sess.Valid() {
		// The reply was lost. The multi was applied if and only if the item
		// is gone (our lock keeps any other consumer from it): if it is
		// still there, commit again, or our lock would hold it until our
		// session ends.
		if st, serr := c.client.CheckExists().ForPath(dctx, node); serr == nil {
			if st == nil {
				return
			}
			if sess.Valid() {
				_, err = txn.Commit(dctx)
			}
		}
	}
	if errors.Is(err, framework.ErrSessionLost) {
		// Our session ended before the multi could run on it (or, with
		// ErrIndeterminate, after it may have): our lock went with it.
		if cerr == nil {
			c.finishAnew(ctx, name, node, lock)
		} else {
			c.report(fmt.Errorf("queue: %s/%s: %w: left for redelivery", c.path, name, ErrSessionLost))
		}
		return
	}
	if err != nil {
		c.report(fmt.Errorf("queue: %s/%s: finish: %w", c.path, name, err))
		if !errors.Is(err, framework.ErrIndeterminate) {
			unlock()
		}
	}
}

// requeuePath is where a failed item goes back: the tail, with its
// priority, due time or id kept (Curator keeps the id; we keep all three).
func (c *core) requeuePath(name string) string {
	suffix := ""
	switch c.kind {
	case priorityKind:
		if e, canonical, _ := c.kind.parse(name); canonical {
			suffix = priorityString(int32(e.key))
		}
	case delayKind:
		if e, canonical, _ := c.kind.parse(name); canonical {
			suffix = epochString(e.key)
		}
	case idKind:
		if id, ok := idOf(name); ok {
			suffix = separator + id + separator
		}
	}
	return framework.JoinPath(c.path, itemPrefix+suffix)
}

// item builds the Item at index i of node name.
func (c *core) item(name string, stat *zk.Stat, i int, b []byte) Item {
	it := Item{Data: b, Token: Token{Zxid: stat.Czxid, Index: i}, Node: name}
	if c.kind == idKind {
		it.ID, _ = idOf(name)
	}
	return it
}

// deliver hands it to the consumer func or the Items channel. ctx is the
// loop's, ictx the item's. With wait (lock-safe) a channel delivery waits
// for Done.
func (w *worker) deliver(ctx, ictx context.Context, it Item, wait bool) error {
	c := w.c
	if c.cfg.consumer != nil {
		return c.cfg.consumer(ictx, it)
	}
	d := Delivery{Item: it, ctx: ictx, done: &doneOnce{ch: make(chan error, 1)}}
	select {
	case c.items <- d:
	case <-ictx.Done():
		return context.Cause(ictx)
	}
	if !wait {
		return nil
	}
	select {
	case err := <-d.done.ch:
		return err
	case <-ictx.Done():
		select {
		case err := <-d.done.ch: // Done came first, or with the end
			return err
		default:
			return context.Cause(ictx)
		}
	}
}

// failed handles a claim that did not get the item.
func (w *worker) failed(ctx context.Context, name, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	if lost(err) {
		w.collide()
		return
	}
	w.c.report(fmt.Errorf("queue: %s/%s: %s: %w", w.c.path, name, what, err))
}

// badItem reports an item that does not decode and leaves it in place.
func (w *worker) badItem(name string, data []byte, err error) {
	w.bad[name] = true
	w.c.report(fmt.Errorf("%w: %s/%s: %v (%d bytes: %s); left in place",
		ErrBadItem, w.c.path, name, err, len(data), recipe.Hex(data)))
}

// finishAnew deletes a consumed item whose lock went with its session, on
// the client's new session, unless another consumer holds its lock now.
func (c *core) finishAnew(ctx context.Context, name, node, lock string) {
	dctx, cancel := recipe.Detached(ctx)
	defer cancel()
	_, err := c.client.Transaction().Create(lock, c.client.DefaultData(), framework.Ephemeral).
		Delete(node, -1).Delete(lock, -1).Commit(dctx)
	if err != nil {
		// Another consumer holds it (redelivered), or has finished it too,
		// or (a lost reply) our multi was applied: say so in any case.
		c.report(fmt.Errorf("queue: %s/%s: %w after it was consumed: left for redelivery, or finished by another consumer too (%v)",
			c.path, name, ErrSessionLost, err))
	}
}
