package leaderselector

import (
	"context"
	"errors"
	"sync"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/goid"
	"github.com/go-curator/curator/internal/recipe"
)

// Selector is a candidate that runs a function while it leads: Curator's
// LeaderSelector. It is safe for concurrent use. The zero Selector is not
// usable: make one with New. A Selector must not be copied.
type Selector struct {
	e           *Election
	fn          func(ctx context.Context, l *Leadership) error
	autoRequeue bool

	ctx    context.Context // ends at Close
	cancel context.CancelCauseFunc

	closeOnce sync.Once
	mu        sync.Mutex
	state     lifecycle
	turnDone  chan struct{} // closed when the running turn ends; nil when none runs
	queued    bool          // the candidate campaigns, or will: Requeue has nothing to do
	turnGID   int64         // the goroutine of the running turn
	orphaned  bool          // Close left the Election for the running turn to close
	leading   *Leadership   // while fn runs
	interrupt context.CancelCauseFunc
}

type lifecycle int

const (
	latent lifecycle = iota
	started
	closed
)

// New returns a candidate for the election at path that runs fn each time
// it leads. It does no I/O.
//
// fn runs on a goroutine of the Selector. Its ctx is cancelled when the
// leadership is lost (see Leadership.Lost), on InterruptLeadership and on
// Close; context.Cause(ctx) says which: ErrSessionLost (the connection
// was suspended or the session lost, per the client's error policy),
// ErrLeaderNodeDeleted, ErrInterrupted or ErrClosed. fn must then return promptly, since the candidate keeps its node,
// and so the leadership, until fn returns. When fn returns, the leadership
// is released (its node deleted) and, with WithAutoRequeue, the candidate
// queues again at the back of the line; otherwise call Requeue to run
// again. An error from fn is logged with the client's logger, as Curator
// logs an exception from takeLeadership; a ctx error is not.
func New(client *framework.Client, path string, fn func(ctx context.Context, l *Leadership) error, opts ...Option) (*Selector, error) {
	cfg, err := configure(opts)
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, recipe.BadArg(ErrInvalidArgument, "nil leader function")
	}
	e, err := newElection(client, path, cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Selector{e: e, fn: fn, autoRequeue: cfg.autoRequeue, ctx: ctx, cancel: cancel}, nil
}

func (s *Selector) check() error {
	if s == nil || s.e == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil or zero Selector (use New)")
	}
	return nil
}

// Start queues the candidate, as Curator's start: it returns at once, and
// the campaign and the leader function run on the Selector's goroutine
// until Close. Start returns ErrAlreadyStarted on a started Selector and
// ErrClosed on a closed one; a client that is not started, or is closed,
// fails the Start and closes the Selector. ctx is only checked: a done ctx
// is an error.
func (s *Selector) Start(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	switch s.state {
	case closed:
		s.mu.Unlock()
		return ErrClosed
	case started:
		s.mu.Unlock()
		return ErrAlreadyStarted
	}
	if err := s.e.client.Check(); err != nil {
		s.mu.Unlock()
		s.Close(ctx)
		return recipe.Wrapf(ErrInvalidArgument, "leaderselector: start %s: %w", s.e.path, err)
	}
	s.state = started
	s.queueLocked()
	s.mu.Unlock()
	return nil
}

// Requeue queues the candidate again after its leader function returned
// without WithAutoRequeue, or after a campaign failed, as Curator's
// requeue. It reports false if the candidate is already queued or
// leading. It returns ErrNotStarted before Start and ErrClosed after
// Close.
func (s *Selector) Requeue() (bool, error) {
	if err := s.check(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state == closed:
		return false, ErrClosed
	case s.state == latent:
		return false, ErrNotStarted
	case s.queued:
		return false, nil
	}
	s.queueLocked()
	return true, nil
}

// queueLocked queues the candidate: the running turn campaigns again when
// it is done with its leadership, or a new turn starts. Called with s.mu
// held.
func (s *Selector) queueLocked() {
	s.queued = true
	if s.turnDone == nil {
		done := make(chan struct{})
		s.turnDone = done
		go s.turn(done)
	}
}

// turn campaigns and runs fn, again while the candidate stays queued
// (WithAutoRequeue, or a Requeue meanwhile), until Close.
func (s *Selector) turn(done chan struct{}) {
	s.mu.Lock()
	s.turnGID = goid.Get()
	s.mu.Unlock()
	var wait backoff
	for {
		if s.ctx.Err() == nil {
			s.round(&wait)
		}
		s.mu.Lock()
		if s.state == closed || !s.queued {
			s.turnDone, s.turnGID, s.queued = nil, 0, false
			orphaned := s.orphaned
			s.mu.Unlock()
			if orphaned {
				s.e.Close(context.Background())
			}
			close(done)
			return
		}
		s.mu.Unlock()
	}
}

// round is one campaign and, if it wins, one run of fn. Without
// WithAutoRequeue it leaves the candidate unqueued.
func (s *Selector) round(wait *backoff) {
	ld, err := s.e.Campaign(s.ctx)
	if err != nil {
		if s.ctx.Err() != nil {
			return
		}
		s.e.client.Logger().Warn("leaderselector: campaign failed", "path", s.e.path, "err", err)
		if s.autoRequeue {
			wait.sleep(s.ctx)
		} else {
			s.mu.Lock()
			s.queued = false
			s.mu.Unlock()
		}
		return
	}
	wait.reset()
	if err := s.lead(ld); err != nil {
		s.e.client.Logger().Warn("leaderselector: the leader function failed", "path", s.e.path, "err", err)
	}
}

// lead runs fn while ld lasts, then releases ld. It returns fn's error
// unless it is a ctx error, joined with the release's.
func (s *Selector) lead(ld *Leadership) error {
	ctx, cancel := context.WithCancelCause(s.ctx)
	stop := context.AfterFunc(ld.ctx, func() { cancel(context.Cause(ld.ctx)) })
	s.mu.Lock()
	s.leading, s.interrupt = ld, cancel
	s.mu.Unlock()
	err := s.fn(ctx, ld)
	s.mu.Lock()
	s.leading, s.interrupt = nil, nil
	if !s.autoRequeue {
		s.queued = false // a Requeue from now on queues again
	}
	s.mu.Unlock()
	stop()
	cancel(ErrResigned) // fn returned of itself, unless ctx had a cause already
	cause := context.Cause(ctx)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	return errors.Join(err, ld.release(context.Background(), cause))
}

// InterruptLeadership cancels the leader function's ctx if this candidate
// leads, as Curator's interruptLeadership; the turn then ends as if the
// function had returned (with WithAutoRequeue the candidate queues again).
// It does nothing otherwise.
func (s *Selector) InterruptLeadership() {
	if s == nil {
		return
	}
	s.mu.Lock()
	interrupt := s.interrupt
	s.mu.Unlock()
	if interrupt != nil {
		interrupt(ErrInterrupted)
	}
}

// HasLeadership reports whether the leader function runs with a
// leadership that is not lost.
func (s *Selector) HasLeadership() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	ld := s.leading
	s.mu.Unlock()
	return ld != nil && ld.trusted()
}

// ID returns the participant ID ("" when none was set).
func (s *Selector) ID() string {
	if s == nil || s.e == nil {
		return ""
	}
	return s.e.id
}

// Participants reads the election's candidates in line order; see
// Election.Participants.
func (s *Selector) Participants(ctx context.Context) ([]Participant, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.e.Participants(ctx)
}

// Leader reads the current leader; see Election.Leader.
func (s *Selector) Leader(ctx context.Context) (Participant, error) {
	if err := s.check(); err != nil {
		return Participant{}, err
	}
	return s.e.Leader(ctx)
}

// Observe follows the election's leader until ctx ends or the Selector
// closes; see Election.Observe.
func (s *Selector) Observe(ctx context.Context) <-chan LeaderInfo {
	if s.check() != nil {
		ch := make(chan LeaderInfo)
		close(ch)
		return ch
	}
	return s.e.Observe(ctx)
}

// Close leaves the election: it cancels the leader function's ctx, waits
// for the function to return (until ctx ends), releases the leadership
// (its Lost() closes, then its node is deleted) or ends the campaign
// (deleting its node), and stops every Observe.
//
// The node goes only after the function returns: if ctx ends first, Close
// returns an error and the Selector finishes closing when the function
// returns. Called from the leader function, Close does not wait for it;
// the Selector finishes closing when it returns. Closing again does
// nothing and returns nil; after Close every method returns ErrClosed.
func (s *Selector) Close(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	if ctx == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil context")
	}
	first := false
	s.closeOnce.Do(func() { first = true })
	if !first {
		return nil
	}
	s.mu.Lock()
	s.state = closed
	done, own := s.turnDone, s.turnGID == goid.Get()
	s.mu.Unlock()
	s.cancel(ErrClosed)
	if done != nil && !own {
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	s.mu.Lock()
	if s.turnDone != nil {
		// The turn still runs (Close from the leader function, or ctx
		// ended first): it closes the Election when it ends.
		s.orphaned = true
		s.mu.Unlock()
		if own {
			return nil
		}
		return recipe.Wrapf(ErrInvalidArgument, "leaderselector: close %s: the leader function has not returned: %w", s.e.path, ctx.Err())
	}
	s.mu.Unlock()
	return s.e.Close(ctx)
}
