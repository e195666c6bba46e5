package semaphorev2

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/internal/observe"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// contendedFor is how long the fast path is skipped after it last found
// contention: under contention its first read would be wasted.
const contendedFor = time.Second

// monoBase anchors the monotonic readings kept in Semaphore.contended: a
// wall clock that steps must not pin the semaphore to one path.
var monoBase = time.Now()

// sinceBase returns the time since monoBase, on the monotonic clock, and
// never 0 (0 in contended means "never").
func sinceBase() int64 { return int64(time.Since(monoBase)) + 1 }

// recentlyContended reports whether the fast path found contention within
// contendedFor.
func (s *Semaphore) recentlyContended() bool {
	at := s.contended.Load()
	return at != 0 && time.Duration(sinceBase()-at) < contendedFor
}

// fastPath takes a lease without the internal lock when nobody is queued
// on it: it creates a lease node and keeps it if the read that follows
// grants it. Otherwise it deletes the node and returns a nil lease and a
// nil error, and the caller queues on the lock.
func (s *Semaphore) fastPath(ctx context.Context) (*Lease, error) {
	if s.recentlyContended() {
		return nil, nil
	}
	queued, err := s.client.GetChildren().ForPath(ctx, s.locks)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, err
	}
	if len(queued) > 0 {
		s.contended.Store(sinceBase())
		return nil, nil
	}
	sess, err := s.client.CurrentSession(ctx) // the owner of the node we make
	if err != nil {
		return nil, err
	}
	node, err := s.client.Create().CreatingParentContainersIfNeeded().WithProtection().
		WithMode(framework.EphemeralSequential).ForPath(ctx, framework.JoinPath(s.leases, leaseName), s.data)
	if err != nil {
		return nil, err
	}
	l, err := s.grantRead(ctx, sess, node)
	if err == nil {
		return l, nil
	}
	s.deleteNode(ctx, node)
	if errors.Is(err, errNotGranted) || errors.Is(err, errVanished) {
		s.contended.Store(sinceBase())
		return nil, nil
	}
	return nil, err
}

// slowPath takes the internal lock, waits while it holds the lock until
// the leases leave room, then in one transaction creates its lease node
// and releases the lock, and finally reads the leases to confirm the
// grant. Every step must run on the session taken before the lock: after
// a session change neither node is trusted (errVanished). On any error it
// deletes what it made.
func (s *Semaphore) slowPath(ctx context.Context, once bool) (*Lease, error) {
	wait := time.Duration(-1)
	if once {
		wait = 0
	}
	sess, err := s.client.CurrentSession(ctx)
	if err != nil {
		return nil, err
	}
	h, err := s.lock.Acquire(ctx, s.lockData, wait)
	if errors.Is(err, lockcore.ErrTimeout) {
		return nil, errTimeout
	}
	if err != nil {
		return nil, err
	}
	node, err := s.createWhenRoom(ctx, sess, h.Node(), once)
	if err != nil {
		s.deleteNode(ctx, h.Node())
		return nil, err
	}
	l, err := s.grantRead(ctx, sess, node)
	if err != nil {
		s.deleteNode(ctx, node)
		return nil, err
	}
	return l, nil
}

// createWhenRoom waits, holding the internal lock whose node is lockNode,
// until fewer than the maximum lease nodes exist, then creates ours. It
// wakes on a change of the leases, of the maximum, or on the loss of
// sess, the session the lock node must belong to: once that session is
// lost the lock node is not ours to trust, even if the server still lists
// it (it keeps an abandoned session alive until its own timeout).
func (s *Semaphore) createWhenRoom(ctx context.Context, sess framework.Session, lockNode string, once bool) (string, error) {
	changed, stop := s.max.watch()
	defer stop()
	for {
		kids, watch, err := s.client.GetChildren().ForPathW(ctx, s.leases)
		if errors.Is(err, zk.ErrNoNode) {
			kids, watch, err = nil, nil, nil
		}
		if err != nil {
			return "", err
		}
		if !sess.Valid() {
			// The read may have run on a later session: it proves nothing.
			return "", fmt.Errorf("%w: session of lock node %s lost", errVanished, lockNode)
		}
		if len(kids) < s.max.get() {
			return s.createUnderLock(ctx, sess, lockNode)
		}
		if once {
			return "", errTimeout
		}
		select {
		case <-watch:
		case <-changed:
		case <-sess.Lost():
			return "", fmt.Errorf("%w: session of lock node %s lost", errVanished, lockNode)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// createUnderLock creates our lease node and deletes our lock node in one
// multi that first checks the lock node: it commits only while we still
// hold the lock. The lease node's name is protected, so that after a
// connection loss we can tell whether the multi committed; when we cannot
// tell and give up, the client deletes it in the background.
func (s *Semaphore) createUnderLock(ctx context.Context, sess framework.Session, lockNode string) (string, error) {
	prefix := framework.NewProtectedPrefix()
	want := framework.JoinPath(s.leases, prefix+leaseName)
	for i := 0; ; i++ {
		res, err := s.client.Transaction().
			Check(lockNode, -1).
			Create(want, s.data, framework.EphemeralSequential).
			Delete(lockNode, -1).
			Commit(ctx)
		if err == nil {
			return s.owned(ctx, sess, res[1].Path)
		}
		if !settled(err) {
			// The multi may have committed, its reply lost. With a live
			// ctx, look for its lease node; otherwise, or if the look
			// fails, leave the node (if any) to the client's background
			// cleanup: it stays on a live session and would hold a lease
			// of the pool for ever (a one-lease semaphore would be dead
			// for every process, Curator's included).
			if ctx.Err() != nil {
				return "", s.abandon(prefix, err)
			}
			node, ferr := s.findOwn(ctx, prefix)
			if ferr != nil {
				return "", s.abandon(prefix, errors.Join(err, ferr))
			}
			if node != "" {
				return s.owned(ctx, sess, node)
			}
			// Not committed (FindProtected removed a node of an earlier
			// session, if there was one). The retry's own failure says why.
		}
		switch {
		case opFailed(res, 0, zk.ErrNoNode):
			return "", fmt.Errorf("%w: lock node %s", errVanished, lockNode)
		case opFailed(res, 1, zk.ErrNoNode) && i < 3:
			if err := s.ensureLeasesParent(ctx); err != nil {
				return "", err
			}
			continue
		}
		return "", err
	}
}

// settled reports whether err is a definite failure of a write, which
// the server answered without applying it: neither an indeterminate
// outcome nor a connection loss or an end of ctx that may have come after
// the request was sent.
func settled(err error) bool {
	return !errors.Is(err, framework.ErrIndeterminate) && !framework.IsRetryable(err) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// abandon asks the client to delete, in the background, the lease node
// with prefix that a multi of unknown outcome may have made, and returns
// err.
func (s *Semaphore) abandon(prefix string, err error) error {
	if cerr := s.client.CleanupProtected(s.leases, prefix); cerr != nil {
		return errors.Join(err, cerr)
	}
	return err
}

// owned returns node if it belongs to sess, which must still be the
// client's session; otherwise, or if ctx has ended, it deletes node.
func (s *Semaphore) owned(ctx context.Context, sess framework.Session, node string) (string, error) {
	switch {
	case !sess.Valid():
		s.deleteNode(ctx, node)
		return "", fmt.Errorf("%w: session of %s lost", errVanished, node)
	case ctx.Err() != nil:
		s.deleteNode(ctx, node)
		return "", ctx.Err()
	}
	return node, nil
}

func opFailed(res []framework.OpResult, i int, target error) bool {
	return i < len(res) && errors.Is(res[i].Err, target)
}

func (s *Semaphore) ensureLeasesParent(ctx context.Context) error {
	_, err := s.client.Create().CreatingParentContainersIfNeeded().WithMode(framework.Container).
		ForPath(ctx, s.leases, nil)
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	return nil
}

// findOwn looks, with a detached bounded context, for the lease node whose
// name starts with prefix. One owned by another session (left from before
// an expiry) is deleted. It returns the node's path, or "".
func (s *Semaphore) findOwn(ctx context.Context, prefix string) (string, error) {
	dctx, cancel := recipe.Detached(ctx)
	defer cancel()
	return s.client.FindProtected(dctx, s.leases, prefix)
}

// grantRead reads the leases and decides whether our node, made on sess,
// holds a lease: it does when fewer than the maximum nodes precede it in
// sequence order, and the read ran on sess. A read made after sess was
// lost is refused (errVanished): the node may be an abandoned session's,
// which the server deletes at its own timeout, and the new session's loss
// signals would never tell the holder. The loss signal is taken before
// the read, so a suspension after it is never missed; under either error
// policy it closes when sess is lost. If it closed during the read (the
// read waited for the connection to come back on the same session), the
// lease would be lost at once: it reads again with a fresh signal.
func (s *Semaphore) grantRead(ctx context.Context, sess framework.Session, node string) (*Lease, error) {
	for {
		lost := sess.Lost()
		if s.client.ErrorPolicy() != framework.SessionErrorPolicy {
			// Closed at the next Suspended or Lost: if sess is still valid
			// after the read, this is a channel of a connection of sess,
			// and the Lost of sess closes it.
			lost = s.client.LossSignal(framework.StandardErrorPolicy)
		}
		kids, stat, err := s.client.GetChildren().ForPathStat(ctx, s.leases)
		if errors.Is(err, zk.ErrNoNode) {
			return nil, fmt.Errorf("%w: %s", errVanished, node)
		}
		if err != nil {
			return nil, err
		}
		if !sess.Valid() {
			return nil, fmt.Errorf("%w: session of %s lost", errVanished, node)
		}
		_, name := framework.SplitPath(node)
		ahead, found := rank(kids, name)
		if !found {
			return nil, fmt.Errorf("%w: %s", errVanished, node)
		}
		if ahead >= s.max.get() {
			return nil, errNotGranted
		}
		if chans.IsClosed(lost) {
			continue
		}
		return &Lease{client: s.client, sem: s.path, node: node, sess: sess, token: stat.Pzxid, lost: lost,
			obs: observe.Held(s.client, framework.KindSemaphore)}, nil
	}
}

// rank counts the nodes of kids that precede name: those with a lower
// lease sequence, and, to be safe, any without one. It also reports
// whether name is among kids.
func rank(kids []string, name string) (ahead int, found bool) {
	seq, ok := lockcore.Sequence(name, leaseName)
	for _, k := range kids {
		if k == name {
			found = true
			continue
		}
		ks, kok := lockcore.Sequence(k, leaseName)
		if !ok || !kok || ks < seq {
			ahead++
		}
	}
	return ahead, found
}
