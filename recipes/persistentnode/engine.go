package persistentnode

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/goid"
	"github.com/go-curator/curator/internal/queue"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// errZero is the error of a nil or zero Node or TTLNode.
var errZero = recipe.BadArg(ErrInvalidArgument, "nil or zero Node or TTLNode: make one with New or NewTTL")

func badArg(format string, args ...any) error {
	return recipe.BadArg(ErrInvalidArgument, format, args...)
}

// checkName checks a single path segment.
func checkName(name string) error {
	if name == "" {
		return recipe.Invalid(ErrInvalidArgument, fmt.Errorf("%w: empty node name", framework.ErrInvalidPath))
	}
	if err := framework.ValidatePath("/" + name); err != nil {
		return recipe.Invalid(ErrInvalidArgument, err)
	}
	if _, n := framework.SplitPath("/" + name); n != name {
		return recipe.Invalid(ErrInvalidArgument, fmt.Errorf("%w %q: a node name, not a path", framework.ErrInvalidPath, name))
	}
	return nil
}

type lifecycle int

const (
	latent lifecycle = iota
	started
	closed
)

// engine keeps one node: the state the Node's methods read, and the one
// goroutine (run, in keep.go) that creates and watches the node.
type engine struct {
	client      *framework.Client
	base        string // the path given to New
	mode        framework.CreateMode
	protect     bool
	plain       bool   // an unprotected EphemeralSequential node (WithoutProtection)
	takeOver    bool   // the first creation replaces another session's node (WithTakeOver)
	keepOnClose bool   // TTLNode: Close deletes nothing
	onCreated   func() // TTLNode: called (without e.mu) after each creation

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	done   chan struct{} // closed when run returns
	poke   chan struct{} // SetData asks run to write
	wlock  chan struct{} // one write of the data at a time

	mu        sync.Mutex
	state     lifecycle
	running   bool   // run was started; Close waits for done
	buf       []byte // the data to keep
	gen       int64  // bumped by each SetData
	written   int64  // the gen known to be on the node; -1: unknown
	last      string // the node's path, as last created or adopted
	present   bool   // last is there, on the current session
	tried     bool   // a create of the fixed path was sent
	unsure    int64  // plain: the session on which a create's outcome was unknown
	ours      map[int64]bool
	lastErr   error         // the latest error of run, for WaitForInitialCreate
	failed    error         // why the node cannot be created (matches ErrCannotCreate); run has stopped
	failedCh  chan struct{} // closed when failed is set
	initial   chan struct{} // closed at the first creation
	listeners map[*queue.Queue[Event]]struct{}
	closeOnce sync.Once
	closeErr  error
}

// MaxDataSize is the largest data a Node takes: ZooKeeper's default
// jute.maxbuffer (1 MiB) less 1 KiB for the rest of the request.
const MaxDataSize = 1<<20 - 1<<10

func newEngine(client *framework.Client, path string, data []byte, opts []Option) (*engine, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	if path == "/" {
		return nil, recipe.Invalid(ErrInvalidArgument, fmt.Errorf("%w %q: the root cannot be a persistent node", framework.ErrInvalidPath, path))
	}
	if len(data) > MaxDataSize {
		return nil, badArg("%d bytes of data for %s; at most %d", len(data), path, MaxDataSize)
	}
	o := options{mode: framework.Ephemeral}
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	if o.plain && (o.mode != framework.EphemeralSequential || o.protect) {
		return nil, badArg("WithoutProtection needs the mode EphemeralSequential and no WithProtection")
	}
	if o.takeOver && o.mode != framework.Ephemeral {
		return nil, badArg("WithTakeOver needs the mode Ephemeral")
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &engine{
		client: client, base: path, mode: o.mode, protect: (o.protect || o.mode.IsSequential()) && !o.plain,
		plain: o.plain, takeOver: o.takeOver, failedCh: make(chan struct{}),
		ctx: ctx, cancel: cancel,
		done: make(chan struct{}), poke: make(chan struct{}, 1), wlock: make(chan struct{}, 1),
		buf: clone(data), ours: make(map[int64]bool), initial: make(chan struct{}),
		listeners: make(map[*queue.Queue[Event]]struct{}),
	}, nil
}

func clone(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return append([]byte{}, b...)
}

func (e *engine) start(ctx context.Context) error {
	if e == nil {
		return errZero
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch e.state {
	case closed:
		return ErrClosed
	case started:
		return ErrAlreadyStarted
	}
	if err := e.client.Check(); err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "persistentnode: start %s: %w", e.base, err)
	}
	e.state, e.running = started, true
	go e.run()
	return nil
}

// usable returns nil if e is started and not closed.
func (e *engine) usable() error {
	if e == nil {
		return errZero
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch e.state {
	case latent:
		return ErrNotStarted
	case closed:
		return ErrClosed
	}
	return nil
}

func (e *engine) waitInitial(ctx context.Context) error {
	if e == nil {
		return errZero
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	e.mu.Lock()
	st, initial := e.state, e.initial
	e.mu.Unlock()
	if st == latent {
		return ErrNotStarted
	}
	select {
	case <-initial:
		return nil
	default:
	}
	if err := e.failure(); err != nil {
		return err
	}
	if st == closed {
		return ErrClosed
	}
	select {
	case <-initial:
		return nil
	case <-e.failedCh:
		return e.failure()
	case <-e.ctx.Done():
		select {
		case <-initial:
			return nil
		default:
			return ErrClosed
		}
	case <-ctx.Done():
		e.mu.Lock()
		last := e.lastErr
		e.mu.Unlock()
		if last != nil {
			return fmt.Errorf("persistentnode: waiting for %s: %w (last error: %w)", e.base, ctx.Err(), last)
		}
		return ctx.Err()
	}
}

// failure returns why the node cannot be created, or nil.
func (e *engine) failure() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.failed
}

func (e *engine) path() (string, bool) {
	if e == nil {
		return "", false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.last, e.present
}

func (e *engine) data() []byte {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return clone(e.buf)
}

func (e *engine) setData(ctx context.Context, b []byte) error {
	if e == nil {
		return errZero
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if len(b) > MaxDataSize {
		return badArg("%d bytes of data for %s; at most %d", len(b), e.base, MaxDataSize)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.usable(); err != nil {
		return err
	}
	e.mu.Lock()
	e.buf = clone(b)
	e.gen++
	e.mu.Unlock()
	err := e.writeLatest(ctx)
	if err != nil {
		// The loop writes it once it can.
		select {
		case e.poke <- struct{}{}:
		default:
		}
		return fmt.Errorf("persistentnode: set data of %s: %w", e.base, err)
	}
	return nil
}

// writeLatest writes the latest data to the node if it is there and may
// not hold it. Writes are taken one at a time, each with the latest data,
// so the last one to land is the latest.
func (e *engine) writeLatest(ctx context.Context) error {
	select {
	case e.wlock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-e.wlock }()
	e.mu.Lock()
	p, present, gen, buf := e.last, e.present, e.gen, e.buf
	need := present && e.written != gen
	e.mu.Unlock()
	if !need {
		return nil
	}
	if _, err := e.client.SetData().ForPath(ctx, p, buf); err != nil {
		if errors.Is(err, zk.ErrNoNode) {
			// Gone (its session expired, or someone deleted it), and the
			// Node has not seen it yet: its watch on the node fires, and
			// the next creation takes the latest data.
			return nil
		}
		return err
	}
	e.mu.Lock()
	if e.last == p && e.written < gen {
		e.written = gen
	}
	e.mu.Unlock()
	return nil
}

func (e *engine) addListener(fn func(Event)) func() {
	if e == nil || fn == nil {
		return func() {}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state == closed {
		return func() {}
	}
	q := queue.New(fn)
	e.listeners[q] = struct{}{}
	return func() {
		e.mu.Lock()
		delete(e.listeners, q)
		e.mu.Unlock()
		q.Stop()
	}
}

// post tells every listener of ev. It runs with e.mu held.
func (e *engine) post(ev Event) {
	for q := range e.listeners {
		q.Post(ev)
	}
}

func (e *engine) close(ctx context.Context, del bool) error {
	if e == nil {
		return errZero
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	e.closeOnce.Do(func() {
		e.mu.Lock()
		e.state = closed
		running := e.running
		ls := e.listeners
		e.listeners = nil
		e.mu.Unlock()
		e.cancel()
		if running {
			<-e.done
		}
		if del && !e.keepOnClose {
			e.closeErr = e.deleteNode(ctx)
		}
		e.mu.Lock()
		e.present = false
		e.mu.Unlock()
		me := goid.Get()
		for q := range ls {
			q.Stop()
		}
		for q := range ls {
			if q.GoroutineID() != me {
				<-q.Done()
			}
		}
	})
	return e.closeErr
}
