package semaphorev2

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-zookeeper/zk"
)

// contendedFor is how long the fast path is skipped after it last found
// contention: under contention its first read would be wasted.
const contendedFor = time.Second

// fastPath takes a lease without the internal lock when nobody is queued
// on it: it creates a lease node and keeps it if the read that follows
// grants it. Otherwise it deletes the node and returns a nil lease and a
// nil error, and the caller queues on the lock.
func (s *Semaphore) fastPath(ctx context.Context) (*Lease, error) {
	if time.Since(time.Unix(0, s.contended.Load())) < contendedFor {
		return nil, nil
	}
	queued, err := s.client.GetChildren().ForPath(ctx, s.locks)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return nil, err
	}
	if len(queued) > 0 {
		s.contended.Store(time.Now().UnixNano())
		return nil, nil
	}
	node, err := s.client.Create().CreatingParentContainersIfNeeded().WithProtection().
		WithMode(framework.EphemeralSequential).ForPath(ctx, framework.JoinPath(s.leases, leaseName), s.data)
	if err != nil {
		return nil, err
	}
	l, err := s.grantRead(ctx, node)
	if err == nil {
		return l, nil
	}
	s.deleteNode(ctx, node)
	if errors.Is(err, errNotGranted) || errors.Is(err, errVanished) {
		s.contended.Store(time.Now().UnixNano())
		return nil, nil
	}
	return nil, err
}

// slowPath takes the internal lock, waits while it holds the lock until
// the leases leave room, then in one transaction creates its lease node
// and releases the lock, and finally reads the leases to confirm the
// grant. On any error it deletes what it made.
func (s *Semaphore) slowPath(ctx context.Context, once bool) (*Lease, error) {
	wait := time.Duration(-1)
	if once {
		wait = 0
	}
	h, err := s.lock.Acquire(ctx, s.lockData, wait)
	if errors.Is(err, lockcore.ErrTimeout) {
		return nil, errTimeout
	}
	if err != nil {
		return nil, err
	}
	node, err := s.createWhenRoom(ctx, h.Node(), once)
	if err != nil {
		s.deleteNode(ctx, h.Node())
		return nil, err
	}
	l, err := s.grantRead(ctx, node)
	if err != nil {
		s.deleteNode(ctx, node)
		return nil, err
	}
	return l, nil
}

// createWhenRoom waits, holding the internal lock whose node is lockNode,
// until fewer than the maximum lease nodes exist, then creates ours. It
// wakes on a change of the leases, of the maximum, or on session loss.
func (s *Semaphore) createWhenRoom(ctx context.Context, lockNode string, once bool) (string, error) {
	changed, stop := s.max.watch()
	defer stop()
	for {
		sessionLost := s.client.LossSignal(framework.SessionErrorPolicy)
		kids, watch, err := s.client.GetChildren().ForPathW(ctx, s.leases)
		if errors.Is(err, zk.ErrNoNode) {
			kids, watch, err = nil, nil, nil
		}
		if err != nil {
			return "", err
		}
		if len(kids) < s.max.get() {
			return s.createUnderLock(ctx, lockNode)
		}
		if once {
			return "", errTimeout
		}
		select {
		case <-watch:
		case <-changed:
		case <-sessionLost:
			st, err := s.client.CheckExists().ForPath(ctx, lockNode)
			if err == nil && st == nil {
				return "", fmt.Errorf("%w: lock node %s", errVanished, lockNode)
			}
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// createUnderLock creates our lease node and deletes our lock node in one
// multi that first checks the lock node: it commits only while we still
// hold the lock. The lease node's name is protected, so that after a
// connection loss we can tell whether the multi committed.
func (s *Semaphore) createUnderLock(ctx context.Context, lockNode string) (string, error) {
	prefix := framework.NewProtectedPrefix()
	want := framework.JoinPath(s.leases, prefix+leaseName)
	for i := 0; ; i++ {
		res, err := s.client.Transaction().
			Check(lockNode, -1).
			Create(want, s.data, framework.EphemeralSequential).
			Delete(lockNode, -1).
			Commit(ctx)
		if err == nil {
			return res[1].Path, nil
		}
		node, ferr := s.findOwn(ctx, prefix)
		if node != "" {
			if ctx.Err() != nil {
				s.deleteNode(ctx, node)
				return "", ctx.Err()
			}
			return node, nil
		}
		switch {
		case ferr != nil:
			return "", errors.Join(err, ferr)
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
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupBound)
	defer cancel()
	return s.client.FindProtected(dctx, s.leases, prefix)
}

// grantRead reads the leases and decides whether our node holds a lease:
// it does when fewer than the maximum nodes precede it in sequence order.
// The loss signal is taken before the read, so a suspension after it is
// never missed.
func (s *Semaphore) grantRead(ctx context.Context, node string) (*Lease, error) {
	lost := s.client.LossSignal(s.client.ErrorPolicy())
	kids, stat, err := s.client.GetChildren().ForPathStat(ctx, s.leases)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, fmt.Errorf("%w: %s", errVanished, node)
	}
	if err != nil {
		return nil, err
	}
	_, name := framework.SplitPath(node)
	ahead, found := rank(kids, name)
	if !found {
		return nil, fmt.Errorf("%w: %s", errVanished, node)
	}
	if ahead >= s.max.get() {
		return nil, errNotGranted
	}
	return &Lease{client: s.client, sem: s.path, node: node, token: stat.Pzxid, lost: lost}, nil
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
