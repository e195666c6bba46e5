package leaderlatch

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/internal/observe"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

// Bounds of the wait before the election goroutine tries again after a
// failed request.
const (
	minRetryWait = 50 * time.Millisecond
	maxRetryWait = 5 * time.Second
)

// backoff is a growing wait between failed attempts.
type backoff struct{ d time.Duration }

func (b *backoff) sleep(ctx context.Context) {
	b.d = min(max(2*b.d, minRetryWait), maxRetryWait)
	_ = retry.Sleep(ctx, b.d)
}

func (b *backoff) reset() { b.d = 0 }

// run keeps the candidate in the election until Close. It owns the
// candidate's node: the one made by Start, then each new one.
//
// Each round takes the loss signal, reads the children (and the path's
// pzxid with them), and, if the node's session is still valid, sorts them:
// the first leads, every other one watches the one just ahead of it. A
// node of a session that is no longer valid is never trusted: it is
// deleted and the candidate joins again; so is a candidate whose node is
// gone.
func (l *Latch) run(node string, sess framework.Session) {
	defer close(l.done)
	ctx := l.ctx
	var wait backoff
	for ctx.Err() == nil {
		if node == "" || !sess.Valid() {
			if node != "" {
				l.deleteNode(ctx, node)
			}
			l.setNode("")
			var err error
			if node, sess, err = l.join(ctx); err != nil {
				node = ""
				if l.parkIfClientClosed(ctx, err) {
					return
				}
				l.client.Logger().Warn("leaderlatch: cannot join the election; trying again", "path", l.path, "err", err)
				wait.sleep(ctx)
				continue
			}
			l.setNode(node)
		}
		// Take the loss signal before the read that may elect us, so that
		// a suspension after it is never missed.
		lost := l.client.LossSignal(l.client.ErrorPolicy())
		kids, stat, err := l.client.GetChildren().ForPathStat(ctx, l.path)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, zk.ErrNoNode):
			node = "" // the path is gone, and our node with it
			continue
		case err != nil:
			if l.parkIfClientClosed(ctx, err) {
				return
			}
			wait.sleep(ctx)
			continue
		case !sess.Valid():
			continue // the read may have run on a later session: it proves nothing
		}
		wait.reset()
		_, ours := framework.SplitPath(node)
		lockcore.Sort(kids, latchName)
		switch i := slices.Index(kids, ours); {
		case i < 0:
			node = "" // deleted under us: join again, as Curator does
		case i > 0:
			l.waitFor(ctx, sess, kids[i-1])
		case chans.IsClosed(lost):
			// The connection dropped under the error policy: a leadership
			// granted now would be lost at once. Wait for the connection,
			// then read again.
			if err := l.client.BlockUntilConnected(ctx); err != nil && l.parkIfClientClosed(ctx, err) {
				return
			}
		default:
			if l.lead(ctx, node, sess, lost, stat.Pzxid) {
				node = ""
			}
		}
	}
}

// parkIfClientClosed waits for Close if err says the client is closed, and
// then reports true: nothing can be done until the latch closes too.
func (l *Latch) parkIfClientClosed(ctx context.Context, err error) bool {
	if !errors.Is(err, framework.ErrClosed) {
		return false
	}
	<-ctx.Done()
	return true
}

// waitFor watches the node ahead of ours until it changes or goes, our
// session is lost, or the latch closes.
func (l *Latch) waitFor(ctx context.Context, sess framework.Session, ahead string) {
	_, _, ch, err := l.client.GetData().ForPathW(ctx, framework.JoinPath(l.path, ahead))
	if errors.Is(err, zk.ErrNoNode) {
		return // it went while we looked: read again
	}
	if err != nil {
		return // the next read waits for the connection or fails and backs off
	}
	select {
	case <-ch:
	case <-sess.Lost():
	case <-ctx.Done():
	}
}

// lead makes the candidate the leader with node, elected by a read whose
// loss signal was lost and whose pzxid is token, until the leadership
// ends. It reports whether the candidate must join again with a new node
// (its node is gone, or the leadership was released and the node
// deleted).
//
// The leadership is published only while lost and the session are still
// open, and from then on its end follows them: the watch on the leader's
// own node is set on a goroutine of its own, so no I/O of the latch stands
// between a Suspended (or a lost session) and Lost().
func (l *Latch) lead(ctx context.Context, node string, sess framework.Session, lost <-chan struct{}, token int64) (rejoin bool) {
	ld := newLeadership(l, node, sess, lost, token)
	if !l.setLeader(ld, lost) {
		return false // the signal closed before the publication: read again
	}
	term := observe.Held(l.client, framework.KindLeaderLatch)
	own := recipe.WatchNode(ctx, l.client, node)
	gone := l.holdUntilEnd(ctx, ld, lost, own)
	released := ld.released()
	term.End(!released && ctx.Err() == nil) // lost, not released or closed
	l.endLeader(ld)
	own.Stop() // after the end: the read may wait for a dead connection
	if released {
		ld.releaseErr = l.deleteNode(ctx, node)
	}
	close(ld.ended)
	return gone || released
}

// holdUntilEnd waits while ld lasts, with own watching the leader's own
// node. It reports whether that node is gone.
func (l *Latch) holdUntilEnd(ctx context.Context, ld *Leadership, lost <-chan struct{}, own *recipe.NodeWatch) (gone bool) {
	var events <-chan zk.Event
	for {
		select {
		case <-lost:
			return false
		case <-ld.sess.Lost():
			return false
		case <-ctx.Done():
			return false
		case <-ld.release:
			return false
		case r := <-own.Result():
			if errors.Is(r.Err, zk.ErrNoNode) {
				return true
			}
			events = r.Events // nil after another error: the other signals still end the term
		case ev := <-events:
			switch ev.Type {
			case zk.EventNodeDeleted:
				return true
			case zk.EventNotWatching:
				return false // its session ended: sess.Lost() says so too
			}
			events = nil
			own.Again()
		}
	}
}

// setLeader publishes ld as the current leadership and tells the
// listeners and Await, unless lost or ld's session has closed already: a
// leadership is never visible with its loss signal closed. It reports
// whether it published ld.
func (l *Latch) setLeader(ld *Leadership, lost <-chan struct{}) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !ld.trusted() {
		return false
	}
	l.current = ld
	l.leader.Store(ld)
	l.wakeLocked()
	for q := range l.listeners {
		q.Post(event{leadership: ld})
	}
	return true
}

// endLeader ends ld: HasLeadership turns false, Lost() closes, and the
// listeners are told, unless the latch is closing in the Silent mode.
func (l *Latch) endLeader(ld *Leadership) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.leader.Store(nil)
	close(ld.lost)
	l.current = nil
	l.wakeLocked()
	if l.state == closed && l.closeMode == Silent {
		return
	}
	for q := range l.listeners {
		q.Post(event{})
	}
}

// wakeLocked wakes every Await. Called with l.mu held.
func (l *Latch) wakeLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *Latch) setNode(node string) {
	l.mu.Lock()
	l.node = node
	l.mu.Unlock()
}
