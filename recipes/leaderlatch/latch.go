package leaderlatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/goid"
	"github.com/go-curator/curator/internal/observe"
	"github.com/go-curator/curator/internal/queue"
	"github.com/go-curator/curator/internal/recipe"
)

// Errors of the latch. A bad argument matches ErrInvalidArgument and, for
// a nil client or a bad path, framework.ErrNilClient or
// framework.ErrInvalidPath as well.
var (
	ErrInvalidArgument = errors.New("leaderlatch: invalid argument")
	ErrAlreadyStarted  = errors.New("leaderlatch: already started")
	ErrNotStarted      = errors.New("leaderlatch: not started")
	ErrClosed          = errors.New("leaderlatch: closed")
	// ErrNoLeader reports that the election has no candidate.
	ErrNoLeader = errors.New("leaderlatch: no leader")
	// ErrSessionLost reports, from Leadership.Check, a leadership that can
	// no longer be trusted: its Lost() closed (on Suspended under the
	// standard error policy, with its session, or at its end), or its
	// session's lease ended on the client's clock. It matches
	// framework.ErrSessionLost.
	ErrSessionLost = errtext.Sentinel("leaderlatch: the leadership is lost", framework.ErrSessionLost)
)

// MaxIDSize is the largest participant ID, in bytes: ZooKeeper's default
// jute.maxbuffer (1 MiB) less 1 KiB for the rest of the request and of
// the reply a reader gets. A longer ID is refused by New.
const MaxIDSize = 1<<20 - 1<<10

// latchName is Curator's node name for LeaderLatch.
const latchName = "latch-"

// CloseMode says whether closing a leading latch tells its listeners, as
// Curator's LeaderLatch.CloseMode.
type CloseMode int

const (
	// Silent closes without telling the listeners (Curator's default).
	Silent CloseMode = iota
	// NotifyLeader tells the listeners NotLeader when a leading latch
	// closes.
	NotifyLeader
)

// String returns Curator's name of the mode: "SILENT" or "NOTIFY_LEADER".
func (m CloseMode) String() string {
	switch m {
	case Silent:
		return "SILENT"
	case NotifyLeader:
		return "NOTIFY_LEADER"
	}
	return fmt.Sprintf("CloseMode(%d)", int(m))
}

// Option configures a Latch. An option given a bad value returns an error
// matching [ErrInvalidArgument], which [New] returns.
type Option func(*options) error

// options are what the Options set.
type options struct {
	id   string
	mode CloseMode
}

// WithID sets the participant ID, written as the candidate's node data and
// reported by Participants and Leader. The default is empty, as in
// Curator. An ID longer than [MaxIDSize] bytes is an error.
func WithID(id string) Option {
	return func(o *options) error {
		if len(id) > MaxIDSize {
			return recipe.BadArg(ErrInvalidArgument, "participant ID of %d bytes, more than %d", len(id), MaxIDSize)
		}
		o.id = id
		return nil
	}
}

// WithCloseMode sets the mode Close uses; the default is Silent. A mode
// other than Silent and NotifyLeader is an error.
func WithCloseMode(m CloseMode) Option {
	return func(o *options) error {
		if m != Silent && m != NotifyLeader {
			return recipe.BadArg(ErrInvalidArgument, "close mode %v", m)
		}
		o.mode = m
		return nil
	}
}

type lifecycle int

const (
	latent lifecycle = iota
	started
	closed
)

// Latch is one candidate in a leader election. It is safe for concurrent
// use. The zero Latch is not usable: make one with New. A Latch must not
// be copied.
type Latch struct {
	client *framework.Client
	path   string
	id     string
	mode   CloseMode

	ctx    context.Context // ends at Close; the election goroutine runs under it
	cancel context.CancelFunc
	done   chan struct{} // closed when the election goroutine ends

	leader    atomic.Pointer[Leadership] // the published leadership, nil when none
	closeOnce sync.Once

	mu        sync.Mutex
	state     lifecycle
	running   bool      // the election goroutine was started
	closeMode CloseMode // the mode Close was called with
	node      string    // our node, "" while we have none
	current   *Leadership
	changed   chan struct{} // closed and replaced at each change of current and at Close
	listeners map[*queue.Queue[event]]struct{}
}

// New returns a candidate for the election at path. It does no I/O.
func New(client *framework.Client, path string, opts ...Option) (*Latch, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	var o options
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	l := &Latch{
		client: client, path: path, id: o.id, mode: o.mode, ctx: ctx, cancel: cancel,
		done: make(chan struct{}), changed: make(chan struct{}),
		listeners: make(map[*queue.Queue[event]]struct{}),
	}
	return l, nil
}

func (l *Latch) check() error {
	if l == nil || l.client == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil or zero Latch (use New)")
	}
	return nil
}

func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil context")
	}
	return ctx.Err()
}

// Start joins the election: it creates the candidate's node, then keeps
// the candidate in the election on a goroutine of its own until Close.
// Start returns once the node exists; it does not wait for the leadership
// (see Await). ctx bounds only that first create.
//
// A Start that fails (a done ctx, a client that is not started or is
// closed, a create that fails) closes the latch and leaves no node behind.
// Start on a started latch returns ErrAlreadyStarted, on a closed one
// ErrClosed.
func (l *Latch) Start(ctx context.Context) error {
	if err := l.check(); err != nil {
		return err
	}
	if ctx == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil context")
	}
	l.mu.Lock()
	switch l.state {
	case closed:
		l.mu.Unlock()
		return ErrClosed
	case started:
		l.mu.Unlock()
		return ErrAlreadyStarted
	}
	l.state = started
	l.mu.Unlock()

	node, sess, err := l.firstJoin(ctx)
	if err == nil {
		l.mu.Lock()
		if l.state == closed {
			err = ErrClosed // Close came during the create
		} else {
			l.node, l.running = node, true
			go l.run(node, sess)
			node = ""
		}
		l.mu.Unlock()
	}
	if err != nil {
		if node != "" {
			l.deleteNode(ctx, node)
		}
		l.Close(context.WithoutCancel(ctx))
		return recipe.Wrapf(ErrInvalidArgument, "leaderlatch: start %s: %w", l.path, err)
	}
	return nil
}

// firstJoin is Start's create: under ctx, and ended by Close as well.
func (l *Latch) firstJoin(ctx context.Context) (string, framework.Session, error) {
	if err := ctx.Err(); err != nil {
		return "", framework.Session{}, err
	}
	if err := l.client.Check(); err != nil {
		return "", framework.Session{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(l.ctx, cancel)
	defer stop()
	return l.join(ctx)
}

// join creates a new node for the candidate, under the session current
// before the create: the node belongs to that session while it is valid.
func (l *Latch) join(ctx context.Context) (string, framework.Session, error) {
	sess, err := l.client.CurrentSession(ctx)
	if err != nil {
		return "", framework.Session{}, err
	}
	node, err := l.client.Create().CreatingParentContainersIfNeeded().WithProtection().
		WithMode(framework.EphemeralSequential).ForPath(ctx, framework.JoinPath(l.path, latchName), []byte(l.id))
	if err != nil {
		return "", framework.Session{}, err
	}
	return node, sess, nil
}

// deleteNode deletes one of our nodes with a detached, bounded ctx and a
// guaranteed delete, which goes on in the background if it fails.
func (l *Latch) deleteNode(ctx context.Context, node string) error {
	if err := recipe.Delete(ctx, l.client, node); err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "leaderlatch: delete %s: %w", node, err)
	}
	return nil
}

// Close is CloseWith with the latch's close mode (WithCloseMode, Silent by
// default).
func (l *Latch) Close(ctx context.Context) error {
	if err := l.check(); err != nil {
		return err
	}
	return l.CloseWith(ctx, l.mode)
}

// CloseWith leaves the election, as Curator's close(CloseMode): a leader's
// Lost() closes first, then its node is deleted, so the next candidate is
// elected only after this one has stopped trusting its leadership. With
// NotifyLeader a leading latch's listeners get NotLeader. Close then
// delivers what the listeners have queued and waits for them to return
// (not for a listener that Close is called from), until ctx ends.
//
// The delete runs on a detached ctx bounded by 10 s, so it happens even
// when ctx is done; if it fails (the connection is down) it goes on in the
// background until it succeeds or the client closes, and CloseWith returns
// its error. Closing again does nothing and returns nil; a Latch that was
// never started just becomes closed. After Close every method returns
// ErrClosed, and HasLeadership reports false.
func (l *Latch) CloseWith(ctx context.Context, mode CloseMode) error {
	if err := l.check(); err != nil {
		return err
	}
	if ctx == nil {
		return recipe.BadArg(ErrInvalidArgument, "nil context")
	}
	if mode != Silent && mode != NotifyLeader {
		return recipe.BadArg(ErrInvalidArgument, "close mode %v", mode)
	}
	first := false
	l.closeOnce.Do(func() { first = true })
	if !first {
		return nil
	}
	l.mu.Lock()
	l.state, l.closeMode = closed, mode
	running := l.running
	l.mu.Unlock()
	l.cancel()
	if running {
		<-l.done // it ends the leadership: Lost() closes, NotLeader is queued per mode
	}
	l.mu.Lock()
	node := l.node
	l.node = ""
	close(l.changed) // wake every Await
	l.changed = make(chan struct{})
	ls := l.listeners
	l.listeners = nil
	l.mu.Unlock()
	var err error
	if node != "" {
		err = l.deleteNode(ctx, node)
	}
	return errors.Join(err, l.joinListeners(ctx, ls))
}

// joinListeners lets each listener deliver what it has queued, then waits
// for it, except for the listener Close is called from, until ctx ends.
func (l *Latch) joinListeners(ctx context.Context, ls map[*queue.Queue[event]]struct{}) error {
	me := goid.Get()
	for q := range ls {
		q.Finish()
	}
	for q := range ls {
		if q.GoroutineID() == me {
			continue
		}
		select {
		case <-q.Done():
		case <-ctx.Done():
			return recipe.Wrapf(ErrInvalidArgument, "leaderlatch: close %s: waiting for a listener: %w", l.path, ctx.Err())
		}
	}
	return nil
}

// Await waits until this candidate leads and returns its leadership. If it
// leads already, Await returns at once. When ctx ends first, Await returns
// ctx's error and the candidate stays in the election: only Close takes it
// out (and deletes its node). Await returns ErrNotStarted before Start and
// ErrClosed after Close, including when Close ends the wait.
func (l *Latch) Await(ctx context.Context) (*Leadership, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	w := observe.Begin(l.client, framework.KindLeaderLatch)
	for {
		l.mu.Lock()
		st, cur, ch := l.state, l.current, l.changed
		l.mu.Unlock()
		switch {
		case st == closed:
			w.End(false, ErrClosed)
			return nil, ErrClosed
		case st == latent:
			w.End(false, ErrNotStarted)
			return nil, ErrNotStarted
		case cur != nil && cur.trusted():
			w.End(true, nil)
			return cur, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			w.End(false, ctx.Err())
			return nil, ctx.Err()
		}
	}
}

// HasLeadership reports whether this candidate leads now. It reports false
// from the moment the leadership's Lost() closes, and after Close.
func (l *Latch) HasLeadership() bool {
	if l == nil {
		return false
	}
	ld := l.leader.Load()
	return ld != nil && ld.trusted()
}

// Leadership returns the current leadership, or nil if this candidate does
// not lead now.
func (l *Latch) Leadership() *Leadership {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	cur := l.current
	l.mu.Unlock()
	if cur == nil || !cur.trusted() {
		return nil
	}
	return cur
}

// ID returns the participant ID.
func (l *Latch) ID() string {
	if l == nil {
		return ""
	}
	return l.id
}

// Path returns the election's path.
func (l *Latch) Path() string {
	if l == nil {
		return ""
	}
	return l.path
}

// Node returns the path of the candidate's node, as Curator's getOurPath,
// or "" while it has none (before Start, between a lost session and the
// next node, after Close). Having a node does not mean leading.
func (l *Latch) Node() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.node
}

// usable returns ErrClosed after Close.
func (l *Latch) usable() error {
	if err := l.check(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state == closed {
		return ErrClosed
	}
	return nil
}
