package semaphorev2

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/observe"
	"github.com/go-curator/curator/internal/recipe"
)

// Internal outcomes of one attempt at a lease.
var (
	errTimeout    = errors.New("semaphorev2: timed out")     // a bounded acquire ran out of time
	errVanished   = errors.New("semaphorev2: node vanished") // start again, if the retry policy allows
	errNotGranted = errors.New("semaphorev2: not granted")   // start again at once
)

// Acquire waits until it holds one lease, or ctx ends. The caller must
// Close the lease when done. A cancelled or failed Acquire leaves no node
// behind (one it could not confirm during an outage goes once the client
// reconnects) and returns the error (the ctx error when ctx ends). A lease
// lost before Acquire can return it is returned to the pool, and the error
// matches ErrSessionLost.
func (s *Semaphore) Acquire(ctx context.Context) (*Lease, error) {
	leases, _, err := s.acquire(ctx, 1, -1)
	if err != nil {
		return nil, err
	}
	return leases[0], nil
}

// AcquireN waits until it holds qty leases, or ctx ends: all of them, or
// none. As in Curator, the leases are taken one after the other, so
// callers that each hold some while waiting for more can wait for each
// other; keep the sum of what concurrent callers may hold short of their
// total below the maximum. On any error the leases already taken are
// returned and no node is left behind. If a lease taken is lost (its
// Lost() closes) before the last one is granted, the wait ends and the
// error matches ErrSessionLost: no acquire returns a lost lease. qty < 1,
// or qty above a fixed maximum, is ErrInvalidArgument.
func (s *Semaphore) AcquireN(ctx context.Context, qty int) ([]*Lease, error) {
	leases, _, err := s.acquire(ctx, qty, -1)
	return leases, err
}

// TryAcquire is Acquire bounded by wait, as Curator's acquire(time, unit):
// when wait passes first it returns a nil lease, false and no error.
// wait == 0 tries once without waiting; a negative wait is
// ErrInvalidArgument.
func (s *Semaphore) TryAcquire(ctx context.Context, wait time.Duration) (*Lease, bool, error) {
	if wait < 0 {
		return nil, false, recipe.BadArg(ErrInvalidArgument, "negative wait %v", wait)
	}
	leases, ok, err := s.acquire(ctx, 1, wait)
	if !ok {
		return nil, false, err
	}
	return leases[0], true, nil
}

// TryAcquireN is AcquireN bounded by wait, as Curator's acquire(qty, time,
// unit): when wait passes before all qty leases are held, it gives back
// the ones it took and returns nil, false and no error.
func (s *Semaphore) TryAcquireN(ctx context.Context, qty int, wait time.Duration) ([]*Lease, bool, error) {
	if wait < 0 {
		return nil, false, recipe.BadArg(ErrInvalidArgument, "negative wait %v", wait)
	}
	return s.acquire(ctx, qty, wait)
}

// acquire takes qty leases. wait < 0 waits until ctx ends; wait == 0 tries
// each lease once; wait > 0 bounds the whole call. It reports false with a
// nil error when the bound passed.
func (s *Semaphore) acquire(ctx context.Context, qty int, wait time.Duration) ([]*Lease, bool, error) {
	if err := s.check(); err != nil {
		return nil, false, err
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return nil, false, err
	}
	if qty < 1 {
		return nil, false, recipe.BadArg(ErrInvalidArgument, "qty %d < 1", qty)
	}
	if m, ok := s.max.(fixedMax); ok && qty > int(m) {
		return nil, false, recipe.BadArg(ErrInvalidArgument, "qty %d > maxLeases %d", qty, int(m))
	}
	if err := s.client.Check(); err != nil {
		return nil, false, recipe.Wrapf(ErrInvalidArgument, "semaphorev2: acquire %s: %w", s.path, err)
	}
	parent := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	w := observe.Begin(s.client, framework.KindSemaphore)
	leases := make([]*Lease, 0, qty)
	for len(leases) < qty {
		l, err := s.acquireAfter(ctx, leases, wait == 0)
		if l != nil {
			leases = append(leases, l)
		}
		if err == nil {
			err = lostLease(leases)
		}
		if err != nil {
			s.returnQuietly(parent, leases)
			if !errors.Is(err, ErrSessionLost) && (errors.Is(err, errTimeout) || (parent.Err() == nil && ctx.Err() != nil)) {
				w.End(false, nil)
				return nil, false, nil
			}
			w.End(false, err)
			return nil, false, recipe.Wrapf(ErrInvalidArgument, "semaphorev2: acquire %s: %w", s.path, err)
		}
	}
	w.End(true, nil)
	return leases, true, nil
}

// acquireAfter takes one more lease after the leases taken, under a ctx
// that ends as soon as one of them is lost: the call would fail then
// anyway (see lostLease).
func (s *Semaphore) acquireAfter(ctx context.Context, taken []*Lease, once bool) (*Lease, error) {
	lost := make([]<-chan struct{}, len(taken))
	for i, l := range taken {
		lost[i] = l.Lost()
	}
	actx, stop := recipe.CancelOnClose(ctx, lost...)
	defer stop()
	l, err := s.acquireOne(actx, once)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		if lerr := lostLease(taken); lerr != nil {
			return l, lerr // a lease taken was lost: that is the error
		}
	}
	return l, err
}

// lostLease returns an error matching ErrSessionLost if one of leases has
// lost its Lost() signal: an acquire never returns a lost lease.
func lostLease(leases []*Lease) error {
	for _, l := range leases {
		if chans.IsClosed(l.Lost()) {
			return fmt.Errorf("%w: lease %s lost (Suspended, or its session lost) before the acquire could return", ErrSessionLost, l.node)
		}
	}
	return nil
}

// acquireOne takes one lease: at once without the internal lock when
// nobody is queued (fastPath), else through the lock (slowPath). When our
// node vanishes (session expiry), the client's retry policy decides whether
// to start again, as in Curator.
func (s *Semaphore) acquireOne(ctx context.Context, once bool) (*Lease, error) {
	l, err := s.fastPath(ctx)
	if l != nil || err != nil {
		return l, err
	}
	l, err = recipe.Restart(ctx, s.client.RetryPolicy(), func(err error) bool { return errors.Is(err, errVanished) },
		func() (*Lease, error) {
			for {
				l, err := s.slowPath(ctx, once)
				if !errors.Is(err, errNotGranted) {
					return l, err
				}
				if once {
					return nil, errTimeout
				}
				// Another contender took the room: queue again.
			}
		})
	if errors.Is(err, errVanished) {
		return nil, fmt.Errorf("%w: %w", ErrNodeVanished, err)
	}
	return l, err
}
