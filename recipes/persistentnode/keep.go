package persistentnode

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

// The pace of run's retries after an error: from minPause, doubling, up to
// maxPause, with jitter.
const (
	minPause = 50 * time.Millisecond
	maxPause = 5 * time.Second
)

// run creates the node and keeps it until Close: each round takes the
// current session, makes sure the node is there and ours on it, and
// watches it until it goes or the session ends.
func (e *engine) run() {
	defer close(e.done)
	pause := minPause
	for e.ctx.Err() == nil {
		err := e.round(e.ctx)
		if e.ctx.Err() != nil {
			return
		}
		if err == nil {
			pause = minPause
			continue
		}
		if cannotCreate(err) {
			e.fail(err)
			<-e.ctx.Done() // no retry can help: stop, and report
			return
		}
		e.mu.Lock()
		e.lastErr = err
		e.mu.Unlock()
		e.client.Logger().Debug("persistentnode: will try again", "path", e.base, "err", err)
		if retry.Sleep(e.ctx, pause/2+recipe.Jitter(pause, pause)) != nil {
			return
		}
		pause = min(2*pause, maxPause)
	}
}

// cannotCreate reports whether err is a refusal of the server that no
// retry changes.
func cannotCreate(err error) bool {
	for _, s := range []error{zk.ErrNoChildrenForEphemerals, zk.ErrNoAuth, zk.ErrInvalidACL, zk.ErrBadArguments, framework.ErrInvalidPath} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// fail records that the node cannot be created, tells WaitForInitialCreate
// and the listeners, and logs it once.
func (e *engine) fail(err error) {
	err = errtext.Errorf("%w: %s: %w", ErrCannotCreate, e.base, err)
	e.client.Logger().Warn("persistentnode: the node cannot be created; not trying again", "path", e.base, "err", err)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failed, e.lastErr, e.present = err, err, false
	close(e.failedCh)
	e.post(Event{Type: Failed, Path: e.base, Err: err})
}

// round is one session's worth of keeping the node. It returns nil when
// the node went or the session ended, to start again at once.
func (e *engine) round(ctx context.Context) error {
	sess, err := e.client.CurrentSession(ctx)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.ours[sess.ID()] = true
	e.mu.Unlock()
	p, err := e.ensure(ctx, sess)
	if err != nil {
		return err
	}
	return e.watch(ctx, sess, p)
}

// ensure makes sure the node is there, made by this Node, and returns its
// path. It records each path it makes at once, so that Close deletes it
// whatever comes next.
func (e *engine) ensure(ctx context.Context, sess framework.Session) (string, error) {
	e.mu.Lock()
	last := e.last
	e.mu.Unlock()
	if e.plain {
		return e.ensurePlain(ctx, sess, last)
	}
	if e.protect {
		if last != "" {
			// Keep the node we made if it is still there and ours: a
			// persistent node outlives its session, and a round may end on
			// an error with the node in place. An ephemeral node of a
			// session given up on may live on in the server until its own
			// timeout: it goes before another is made.
			_, stat, err := e.client.GetData().ForPath(ctx, last)
			switch {
			case errors.Is(err, zk.ErrNoNode):
			case err != nil:
				return "", err
			case !e.mode.IsEphemeral() || stat.EphemeralOwner == sess.ID():
				return last, nil
			default:
				if err := e.client.Delete().Guaranteed().Quietly().ForPath(ctx, last); err != nil {
					return "", err
				}
			}
		}
		buf, gen := e.snapshot()
		p, err := e.creator().WithProtection().ForPath(ctx, e.base, buf)
		if err != nil {
			return "", err
		}
		e.created(p, gen)
		return p, nil
	}
	e.mu.Lock()
	e.tried = true // a create whose reply is lost may have made it: Close looks
	e.mu.Unlock()
	for {
		buf, gen := e.snapshot()
		p, err := e.creator().ForPath(ctx, e.base, buf)
		if err == nil {
			e.created(p, gen)
			return p, nil
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return "", err
		}
		// Ours (a create whose reply was lost, or a node of an earlier
		// session of this Node), or another client's.
		_, stat, err := e.client.GetData().ForPath(ctx, e.base)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			continue
		case err != nil:
			return "", err
		}
		owner := stat.EphemeralOwner
		e.mu.Lock()
		mine := e.ours[owner]
		e.mu.Unlock()
		switch {
		case !e.mode.IsEphemeral() || owner == sess.ID():
			e.adopted(e.base)
			return e.base, nil
		case mine:
			err := e.client.Delete().WithVersion(stat.Version).ForPath(ctx, e.base)
			if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
				return "", err
			}
		case e.takeOver && !e.createdOnce():
			// A node of an earlier process with our ID (its session not
			// yet expired), or of another live one: the first creation
			// replaces it, as Curator's ServiceDiscovery does.
			e.client.Logger().Info("persistentnode: replacing another session's node at the path",
				"path", e.base, "owner", fmt.Sprintf("%#x", owner))
			err := e.client.Delete().WithVersion(stat.Version).ForPath(ctx, e.base)
			if err != nil && !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
				return "", err
			}
		default:
			e.mu.Lock()
			e.lastErr = fmt.Errorf("%w: %s is owned by session %#x, not this client's; waiting for it to go", zk.ErrNodeExists, e.base, owner)
			e.mu.Unlock()
			if err := e.waitGone(ctx, sess); err != nil {
				return "", err
			}
		}
	}
}

// createdOnce reports whether the node was ever created (or adopted).
func (e *engine) createdOnce() bool {
	select {
	case <-e.initial:
		return true
	default:
		return false
	}
}

// waitGone waits until the node at the base path, another client's, is
// deleted, or the session ends.
func (e *engine) waitGone(ctx context.Context, sess framework.Session) error {
	stat, watch, err := e.client.CheckExists().ForPathW(ctx, e.base)
	if err != nil || stat == nil {
		return err
	}
	e.client.Logger().Debug("persistentnode: another session's node is at the path; waiting for it to go",
		"path", e.base, "owner", fmt.Sprintf("0x%x", stat.EphemeralOwner))
	select {
	case <-watch:
	case <-sess.Lost():
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (e *engine) creator() framework.CreateBuilder {
	return e.client.Create().CreatingParentContainersIfNeeded().WithMode(e.mode)
}

// snapshot returns the data to create the node with, and its gen.
func (e *engine) snapshot() ([]byte, int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.buf, e.gen
}

// created records the node made at p with the data of gen.
func (e *engine) created(p string, gen int64) {
	e.mu.Lock()
	e.last, e.written = p, gen
	e.mu.Unlock()
}

// adopted records a node found at p, whose data is unknown.
func (e *engine) adopted(p string) {
	e.mu.Lock()
	e.last, e.written = p, -1
	e.mu.Unlock()
}

// markPresent records that the node at p is there and tells the
// listeners if that is news.
func (e *engine) markPresent(p string) {
	e.mu.Lock()
	news := !e.present
	e.last, e.present = p, true
	select {
	case <-e.initial:
	default:
		close(e.initial)
	}
	e.lastErr = nil
	if news {
		e.post(Event{Type: Created, Path: p})
	}
	hook := e.onCreated
	e.mu.Unlock()
	if news && hook != nil {
		hook()
	}
}

// markGone records that the node is no longer there (or no longer ours).
func (e *engine) markGone() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.present {
		e.present = false
		e.post(Event{Type: Gone, Path: e.last})
	}
}

// watch checks that the node at p is there and ours on sess, then keeps
// watching it, writing the latest data when SetData asks, until it goes or
// sess ends.
func (e *engine) watch(ctx context.Context, sess framework.Session, p string) error {
	for {
		_, stat, ev, err := e.client.GetData().ForPathW(ctx, p)
		if errors.Is(err, zk.ErrNoNode) {
			e.markGone()
			return nil
		}
		if err != nil {
			return err
		}
		if e.mode.IsEphemeral() && stat.EphemeralOwner != sess.ID() {
			// Made on another session (ours that just ended, or another
			// client's after ours was deleted): not ours to keep.
			e.markGone()
			return nil
		}
		if !sess.Valid() {
			if e.mode.IsEphemeral() {
				e.markGone()
			}
			return nil
		}
		e.markPresent(p)
		if err := e.writeLatest(ctx); err != nil {
			return err
		}
		twin, stopTwin := e.twinCheck(sess)
		defer stopTwin()
	wait:
		for {
			select {
			case <-twin:
				// A late request of a create of unknown outcome may have
				// made a second node: ours is p.
				twin = nil
				if _, err := e.sweepOwn(ctx, func(o int64) bool { return o == sess.ID() }, p); err != nil {
					return err
				}
			case <-ev:
				break wait
			case <-sess.Lost():
				if e.mode.IsEphemeral() {
					e.markGone()
				}
				return nil
			case <-e.poke:
				if err := e.writeLatest(ctx); err != nil {
					return err
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// deleteNode deletes the node at Close, with a detached bounded context; a
// delete that fails on a connection problem goes on in the background.
func (e *engine) deleteNode(ctx context.Context) error {
	e.mu.Lock()
	p, present := e.last, e.present
	if p == "" && e.tried {
		p = e.base
	}
	e.mu.Unlock()
	if p == "" {
		return nil
	}
	dctx, cancel := recipe.Detached(ctx)
	defer cancel()
	if e.plain {
		// Every node of the pattern that one of our sessions made, a twin
		// of a create of unknown outcome included.
		_, err := e.sweepOwn(dctx, func(o int64) bool {
			e.mu.Lock()
			defer e.mu.Unlock()
			return e.ours[o]
		}, "-")
		if err != nil {
			return fmt.Errorf("persistentnode: delete %s: %w", p, err)
		}
		return nil
	}
	del := e.client.Delete().Guaranteed().Quietly()
	if !e.protect && e.mode.IsEphemeral() {
		// A fixed path may hold another client's node: delete only ours.
		_, stat, err := e.client.GetData().ForPath(dctx, p)
		switch {
		case errors.Is(err, zk.ErrNoNode):
			return nil
		case err != nil && !present:
			return fmt.Errorf("persistentnode: delete %s: %w", p, err)
		case err == nil:
			e.mu.Lock()
			mine := e.ours[stat.EphemeralOwner]
			e.mu.Unlock()
			if !mine {
				return nil
			}
			del = del.WithVersion(stat.Version)
		}
	}
	err := del.ForPath(dctx, p)
	if err != nil && !errors.Is(err, zk.ErrBadVersion) {
		return fmt.Errorf("persistentnode: delete %s: %w", p, err)
	}
	return nil
}
