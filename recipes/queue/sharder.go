package queue

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// Shard is a queue a Sharder manages: any of this package's queue types.
type Shard interface {
	Start(ctx context.Context) error
	Close(ctx context.Context) error
}

// SharderOption configures a Sharder (Curator's QueueSharderPolicies).
type SharderOption func(*sharderConfig) error

type sharderConfig struct {
	threshold int
	interval  time.Duration
	maxQueues int
}

// WithNewQueueThreshold sets the item count at which the leader adds a
// queue (Curator's newQueueThreshold, 10,000 by default).
func WithNewQueueThreshold(n int) SharderOption {
	return func(c *sharderConfig) error {
		if n < 1 {
			return fmt.Errorf("threshold %d: want at least 1", n)
		}
		c.threshold = n
		return nil
	}
}

// WithThresholdCheck sets how often the queues' sizes are checked
// (Curator's thresholdCheckMs, 30 s by default).
func WithThresholdCheck(d time.Duration) SharderOption {
	return func(c *sharderConfig) error {
		if d <= 0 {
			return fmt.Errorf("threshold check interval %v: want > 0", d)
		}
		c.interval = d
		return nil
	}
}

// WithMaxQueues caps the number of queues (Curator's maxQueues, 10 by
// default).
func WithMaxQueues(n int) SharderOption {
	return func(c *sharderConfig) error {
		if n < 1 {
			return fmt.Errorf("max queues %d: want at least 1", n)
		}
		c.maxQueues = n
		return nil
	}
}

// Sharder is Curator's QueueSharder: several queues behind one, at
// <path>/queue-<uuid>, each made by the alloc func given to NewSharder.
// Every sharder checks the queues' sizes periodically; the leader (a
// Curator LeaderLatch layout at leaderPath: _c_<uuid>-latch-<seq>,
// EPHEMERAL_SEQUENTIAL, the lowest leads) adds a queue when one reaches
// the threshold, up to the maximum. Queues under half the threshold are
// preferred by Queue. Items are never moved between queues. Safe for
// concurrent use; the zero Sharder is not usable (make one with
// NewSharder).
type Sharder[Q Shard] struct {
	client     *framework.Client
	path       string
	leaderPath string
	alloc      func(path string, opts ...Option) (Q, error)
	cfg        sharderConfig

	mu        sync.Mutex
	queues    map[string]Q
	preferred map[string]bool
	latch     string
	latchSess framework.Session
	state     int
	cancel    context.CancelFunc
	done      chan struct{}
}

// NewSharder returns a sharder of the queues under path, led from
// leaderPath (which must differ from path and not lie below it). alloc
// makes the queue at a shard's path, unstarted (the sharder starts and
// closes it), and must pass opts on: they put the shard's line of idle
// consumers at <path>-lines/<shard>, out of the sharder's directory, where
// a Java QueueSharder would take it for a queue. For example:
//
//	func(p string, opts ...queue.Option) (*queue.Queue, error) {
//		return queue.New(c, p, append(opts, queue.WithConsumer(fn))...)
//	}
func NewSharder[Q Shard](c *framework.Client, path, leaderPath string, alloc func(path string, opts ...Option) (Q, error), opts ...SharderOption) (*Sharder[Q], error) {
	k, err := newCore(c, path, plainKind, nil)
	if err != nil {
		return nil, err
	}
	if err := framework.ValidatePath(leaderPath); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	if leaderPath == path || hasPrefixDir(leaderPath, path) || leaderPath == "/" {
		return nil, recipe.BadArg(ErrInvalidArgument, "leader path %s: must differ from the queues' path and lie outside it", leaderPath)
	}
	if alloc == nil {
		return nil, recipe.BadArg(ErrInvalidArgument, "nil queue allocator")
	}
	cfg := sharderConfig{threshold: 10000, interval: 30 * time.Second, maxQueues: 10}
	if err := recipe.Apply(ErrInvalidArgument, &cfg, opts); err != nil {
		return nil, err
	}
	return &Sharder[Q]{client: k.client, path: path, leaderPath: leaderPath, alloc: alloc, cfg: cfg,
		queues: map[string]Q{}, preferred: map[string]bool{}}, nil
}

// Start makes the queues' path, starts a queue for each one there (or a
// new one when there is none), joins the leader election and starts the
// periodic check. Start twice is ErrInvalidArgument; after Close,
// ErrClosed.
func (s *Sharder[Q]) Start(ctx context.Context) error {
	if s == nil || s.client == nil {
		return recipe.Zero(ErrInvalidArgument, "Sharder")
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	s.mu.Lock()
	if s.state != stateNew {
		st := s.state
		s.mu.Unlock()
		if st == stateClosed {
			return ErrClosed
		}
		return recipe.BadArg(ErrInvalidArgument, "sharder %s: already started", s.path)
	}
	s.state = stateStarted
	s.mu.Unlock()
	_, err := s.client.Create().CreatingParentContainersIfNeeded().ForPath(ctx, s.path, nil)
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return recipe.Wrapf(ErrInvalidArgument, "queue: sharder start %s: %w", s.path, err)
	}
	kids, err := s.client.GetChildren().ForPath(ctx, s.path)
	if err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "queue: sharder start %s: %w", s.path, err)
	}
	kids = slices.DeleteFunc(kids, func(k string) bool { return !hasItemPrefix(k) })
	for _, k := range kids {
		if err := s.add(ctx, framework.JoinPath(s.path, k)); err != nil {
			return err
		}
	}
	if len(kids) == 0 {
		if err := s.add(ctx, ""); err != nil {
			return err
		}
	}
	s.elect(ctx)
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.mu.Lock()
	s.cancel, s.done = cancel, make(chan struct{})
	s.mu.Unlock()
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.cfg.interval)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				s.check(rctx)
			}
		}
	}()
	return nil
}

// add starts a queue at p ("" for a new queue-<uuid>) if it has none.
func (s *Sharder[Q]) add(ctx context.Context, p string) error {
	if p == "" {
		p = framework.JoinPath(s.path, itemPrefix+uuid.NewString())
	}
	s.mu.Lock()
	_, ok := s.queues[p]
	s.mu.Unlock()
	if ok {
		return nil
	}
	q, err := s.alloc(p, WithLinePath(s.path+"-lines/"+p[len(s.path)+1:]))
	if err != nil {
		return fmt.Errorf("queue: sharder %s: allocate %s: %w", s.path, p, err)
	}
	if err := q.Start(ctx); err != nil {
		return fmt.Errorf("queue: sharder %s: start %s: %w", s.path, p, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.queues[p]; dup || s.state == stateClosed {
		dctx, cancel := recipe.Detached(ctx)
		defer cancel()
		_ = q.Close(dctx)
		return nil
	}
	s.queues[p], s.preferred[p] = q, true
	return nil
}

// elect makes sure we have a latch node, and reports whether it is the
// lowest: whether we lead.
func (s *Sharder[Q]) elect(ctx context.Context) bool {
	s.mu.Lock()
	latch, sess := s.latch, s.latchSess
	s.mu.Unlock()
	if latch == "" || !sess.Valid() {
		if latch != "" {
			_ = recipe.Delete(ctx, s.client, latch)
		}
		ns, err := s.client.CurrentSession(ctx)
		if err != nil {
			return false
		}
		latch, err = s.client.Create().CreatingParentContainersIfNeeded().WithProtection().
			WithMode(framework.EphemeralSequential).ForPath(ctx, framework.JoinPath(s.leaderPath, "latch-"), s.client.DefaultData())
		if err != nil {
			return false
		}
		s.mu.Lock()
		s.latch, s.latchSess = latch, ns
		s.mu.Unlock()
	}
	kids, err := s.client.GetChildren().ForPath(ctx, s.leaderPath)
	if err != nil || len(kids) == 0 {
		return false
	}
	lowest := slices.MinFunc(kids, func(a, b string) int {
		sa, _ := seqOf(a)
		sb, _ := seqOf(b)
		return int(sa - sb)
	})
	return framework.JoinPath(s.leaderPath, lowest) == latch
}

// check is Curator's checkThreshold.
func (s *Sharder[Q]) check(ctx context.Context) {
	kids, err := s.client.GetChildren().ForPath(ctx, s.path)
	if err != nil {
		return
	}
	over := false
	for _, k := range kids {
		if !hasItemPrefix(k) {
			continue
		}
		p := framework.JoinPath(s.path, k)
		if s.add(ctx, p) != nil {
			continue
		}
		st, err := s.client.CheckExists().ForPath(ctx, p)
		if err != nil || st == nil {
			continue
		}
		s.mu.Lock()
		switch n := int(st.NumChildren); {
		case n >= s.cfg.threshold:
			over = true
			delete(s.preferred, p)
		case n <= s.cfg.threshold/2:
			s.preferred[p] = true
		}
		s.mu.Unlock()
	}
	leader := s.elect(ctx)
	if over && leader && s.ShardQty() < s.cfg.maxQueues {
		_ = s.add(ctx, "")
	}
}

// Queue returns one of the queues, at random, preferring those under half
// the threshold; the zero Q before Start or after Close.
func (s *Sharder[Q]) Queue() Q {
	var zero Q
	if s == nil {
		return zero
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.preferred))
	for k := range s.preferred {
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		for k := range s.queues {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return zero
	}
	return s.queues[keys[rand.IntN(len(keys))]]
}

// ShardQty returns the number of queues this sharder manages.
func (s *Sharder[Q]) ShardQty() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queues)
}

// QueuePaths returns the paths of the queues, sorted.
func (s *Sharder[Q]) QueuePaths() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var ps []string
	for p := range s.queues {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}

// Close stops the check, leaves the election and closes every queue,
// waiting for them until ctx ends; it returns their errors joined.
// Closing again returns nil.
func (s *Sharder[Q]) Close(ctx context.Context) error {
	if s == nil || s.client == nil {
		return recipe.Zero(ErrInvalidArgument, "Sharder")
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	s.mu.Lock()
	if s.state == stateClosed {
		s.mu.Unlock()
		return nil
	}
	s.state = stateClosed
	cancel, done, latch := s.cancel, s.done, s.latch
	qs := s.queues
	s.queues, s.preferred, s.latch = map[string]Q{}, map[string]bool{}, ""
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	var errs []error
	if latch != "" {
		errs = append(errs, recipe.Delete(ctx, s.client, latch))
	}
	for _, q := range qs {
		errs = append(errs, q.Close(ctx))
	}
	return errors.Join(errs...)
}
