package leaderselector

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/internal/observe"
	"github.com/go-curator/curator/internal/recipe"
)

// Errors of the package. A bad argument matches ErrInvalidArgument and,
// for a nil client or a bad path, framework.ErrNilClient or
// framework.ErrInvalidPath as well.
var (
	ErrInvalidArgument = errors.New("leaderselector: invalid argument")
	ErrAlreadyStarted  = errors.New("leaderselector: already started")
	ErrNotStarted      = errors.New("leaderselector: not started")
	ErrClosed          = errors.New("leaderselector: closed")
	// ErrNotLeader reports a Resign by a candidate that does not lead.
	ErrNotLeader = errors.New("leaderselector: not the leader")
	// ErrNoLeader reports that the election has no candidate.
	ErrNoLeader = errors.New("leaderselector: no leader")
	// ErrCampaigning reports a Campaign while another Campaign of the same
	// Election is waiting.
	ErrCampaigning = errors.New("leaderselector: a campaign is already waiting")
	// ErrNodeVanished reports that the candidate's node kept vanishing
	// while it waited (its session expired) until the client's retry
	// policy gave up, or that a leader's node is gone when its fencing
	// token is read.
	ErrNodeVanished = errors.New("leaderselector: node vanished (session expired?)")
	// ErrSessionLost reports that the session the candidate's node belongs
	// to is no longer the client's, so the node is not trusted even if the
	// server still lists it: a waiting candidate's session kept being lost
	// until the retry policy gave up, a leader's fencing token was asked
	// after the loss, or a leadership was lost before Campaign could
	// return it.
	ErrSessionLost = errtext.Sentinel("leaderselector: the node's session is lost", framework.ErrSessionLost)
	// ErrResigned is the cause (context.Cause) of a leader function's ctx,
	// and of a Leadership's, once the leadership was released or resigned.
	ErrResigned = errors.New("leaderselector: resigned")
	// ErrInterrupted is the cause of a leader function's ctx ended by
	// Selector.InterruptLeadership.
	ErrInterrupted = errors.New("leaderselector: interrupted")
	// ErrLeaderNodeDeleted is the cause of a leadership's end when its node
	// was deleted by another client (Curator's revocation by delete).
	ErrLeaderNodeDeleted = errors.New("leaderselector: the leader's node was deleted")
)

// MaxIDSize is the largest participant ID, in bytes: ZooKeeper's default
// jute.maxbuffer (1 MiB) less 1 KiB for the rest of the request and of
// the reply a reader gets. A longer ID is refused.
const MaxIDSize = 1<<20 - 1<<10

// lockName is Curator's node name for InterProcessMutex, which
// LeaderSelector uses.
const lockName = "lock-"

// Option configures a Selector or an Election. An option given a bad
// value returns an error matching [ErrInvalidArgument], which the
// constructor returns.
type Option func(*config) error

type config struct {
	id          string
	autoRequeue bool
}

// WithID sets the participant ID, written as the candidate's node data and
// reported by Participants, Leader and Observe. Without it the node holds
// the client's default data, as in Curator. An ID longer than [MaxIDSize]
// bytes is an error.
func WithID(id string) Option {
	return func(c *config) error {
		if len(id) > MaxIDSize {
			return recipe.BadArg(ErrInvalidArgument, "participant ID of %d bytes, more than %d", len(id), MaxIDSize)
		}
		c.id = id
		return nil
	}
}

// WithAutoRequeue makes a Selector queue again each time its function
// returns, or its campaign fails, as Curator's autoRequeue. It is an error
// for an Election.
func WithAutoRequeue() Option {
	return func(c *config) error { c.autoRequeue = true; return nil }
}

// Election is one candidate in a leader election, driven by its caller, as
// etcd's concurrency.Election. It is safe for concurrent use. The zero
// Election is not usable: make one with NewElection. An Election must not
// be copied.
type Election struct {
	core   *lockcore.Core
	client *framework.Client
	path   string
	id     string
	data   []byte

	ctx    context.Context // ends at Close: campaigns and observers stop
	cancel context.CancelFunc
	wg     sync.WaitGroup // leadership watchers and observers

	closeOnce sync.Once
	mu        sync.Mutex
	closed    bool
	waiting   bool // a Campaign waits
	current   *Leadership
}

// NewElection returns a candidate for the election at path. It does no
// I/O.
func NewElection(client *framework.Client, path string, opts ...Option) (*Election, error) {
	cfg, err := configure(opts)
	if err != nil {
		return nil, err
	}
	if cfg.autoRequeue {
		return nil, recipe.BadArg(ErrInvalidArgument, "WithAutoRequeue applies to a Selector, not an Election")
	}
	return newElection(client, path, cfg)
}

func configure(opts []Option) (config, error) {
	var cfg config
	err := recipe.Apply(ErrInvalidArgument, &cfg, opts)
	return cfg, err
}

func newElection(client *framework.Client, path string, cfg config) (*Election, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	core, err := lockcore.NewExclusive(client, path, lockName)
	if err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	data := []byte(cfg.id)
	if cfg.id == "" {
		data = client.DefaultData()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Election{core: core, client: client, path: path, id: cfg.id, data: data, ctx: ctx, cancel: cancel}, nil
}

func (e *Election) check() error {
	if e == nil || e.core == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil or zero Election (use NewElection)")
	}
	return nil
}

func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil context")
	}
	return ctx.Err()
}

// exported makes the lock core's conditions match this package's
// sentinels.
func exported(err error) error { return lockcore.Export(err, ErrNodeVanished, ErrSessionLost) }

// Campaign queues this candidate and waits until it leads, then returns
// its Leadership. If it leads already, Campaign returns that leadership at
// once; if its last leadership was lost but not released, Campaign
// releases it (deleting its node) and queues again.
//
// When ctx ends first, or the Election closes, Campaign deletes the
// candidate's node (on a detached, bounded ctx) and returns ctx's error
// or ErrClosed: a cancelled Campaign leaves no node behind. A second
// Campaign while one waits returns ErrCampaigning. If the candidate's
// node vanishes or its session is lost while it waits, it queues again
// with a new node as the client's retry policy allows; when the policy
// gives up the error matches ErrNodeVanished or ErrSessionLost. A
// leadership lost (Suspended, or its session lost) before Campaign can
// return it is not returned: its node is deleted and the error matches
// ErrSessionLost. From the moment Campaign returns, Lost() follows the
// client's state and session, whatever I/O the leadership still does.
func (e *Election) Campaign(ctx context.Context) (*Leadership, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	for {
		e.mu.Lock()
		cur := e.current
		switch {
		case e.closed:
			e.mu.Unlock()
			return nil, ErrClosed
		case e.waiting:
			e.mu.Unlock()
			return nil, ErrCampaigning
		case cur != nil && cur.trusted():
			e.mu.Unlock()
			return cur, nil
		case cur != nil:
			e.mu.Unlock()
			// A failed delete goes on in the background; the new node
			// waits behind the old one until it is gone.
			if err := cur.Release(ctx); err != nil && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		e.waiting = true
		e.mu.Unlock()
		break
	}
	defer func() {
		e.mu.Lock()
		e.waiting = false
		e.mu.Unlock()
	}()

	actx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(e.ctx, cancel)
	w := observe.Begin(e.core.Client(), framework.KindLeaderSelector)
	h, err := e.core.Acquire(actx, e.data, -1)
	stop()
	cancel()
	if err != nil {
		if e.ctx.Err() != nil && ctx.Err() == nil {
			err = ErrClosed
		}
		w.End(false, err)
		return nil, recipe.Wrapf(ErrInvalidArgument, "leaderselector: campaign %s: %w", e.path, exported(err))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		e.core.Delete(ctx, h.Node())
		w.End(false, ErrClosed)
		return nil, recipe.Wrapf(ErrInvalidArgument, "leaderselector: campaign %s: %w", e.path, ErrClosed)
	}
	if chans.IsClosed(h.Lost()) || chans.IsClosed(h.Session().Lost()) {
		// Lost between the grant and now: never hand out a leadership
		// whose Lost() is already closed.
		e.core.Delete(ctx, h.Node())
		err := lockcore.LostError(h.Node())
		w.End(false, err)
		return nil, recipe.Wrapf(ErrInvalidArgument, "leaderselector: campaign %s: %w", e.path, exported(err))
	}
	w.End(true, nil)
	ld := newLeadership(e, h)
	ld.term = observe.Held(e.core.Client(), framework.KindLeaderSelector)
	e.current = ld
	e.wg.Add(1)
	go ld.watch()
	return ld, nil
}

// Resign gives up this candidate's leadership, as Leadership.Release: its
// Lost() closes, then its node is deleted, so the next candidate leads. A
// leadership that was lost but not yet released is released too. Resign
// returns ErrNotLeader if this candidate has no leadership to give up, and
// ErrClosed after Close.
func (e *Election) Resign(ctx context.Context) error {
	if err := e.check(); err != nil {
		return err
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	e.mu.Lock()
	cur, closed := e.current, e.closed
	e.mu.Unlock()
	switch {
	case closed:
		return ErrClosed
	case cur == nil:
		return fmt.Errorf("%w at %s", ErrNotLeader, e.path)
	}
	return cur.Release(ctx)
}

// Leadership returns this candidate's current leadership, or nil. The
// leadership may have been lost already; check its Lost channel.
func (e *Election) Leadership() *Leadership {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.current
}

// ID returns the participant ID ("" when none was set).
func (e *Election) ID() string {
	if e == nil {
		return ""
	}
	return e.id
}

// Path returns the election's path.
func (e *Election) Path() string {
	if e == nil {
		return ""
	}
	return e.path
}

// Close gives up the leadership if this candidate has one (its Lost()
// closes, then its node is deleted on a detached ctx bounded by 10 s, and
// in the background after that if the connection is down), ends a waiting
// Campaign (which deletes its node and returns ErrClosed) and every
// Observe, and waits for the goroutines the Election started. It returns
// the delete's error. Closing again does nothing and returns nil; after
// Close every method returns ErrClosed.
func (e *Election) Close(ctx context.Context) error {
	if err := e.check(); err != nil {
		return err
	}
	if ctx == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil context")
	}
	var err error
	e.closeOnce.Do(func() {
		e.mu.Lock()
		e.closed = true
		cur := e.current
		e.mu.Unlock()
		e.cancel()
		if cur != nil {
			err = cur.release(context.WithoutCancel(ctx), ErrClosed)
		}
		e.wg.Wait()
	})
	return err
}

// usable returns ErrClosed after Close.
func (e *Election) usable() error {
	if err := e.check(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	return nil
}

// dropped forgets ld once it is released.
func (e *Election) dropped(ld *Leadership) {
	e.mu.Lock()
	if e.current == ld {
		e.current = nil
	}
	e.mu.Unlock()
}
