package sharedcount

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// VersionedValue is a value with the node's data version and the zxid of
// the change that wrote it (the node's Mzxid). Pass one you got from
// VersionedValue, or from a listener, to TrySetCount or TrySetValue.
type VersionedValue[T int32 | []byte] struct {
	Value   T
	Version int32
	Mzxid   int64
}

// errZero is the error of a nil or zero Count or Value, which New makes:
// a bad argument, never started.
var errZero = errtext.Also(recipe.Zero(ErrInvalidArgument, "Count or Value"), ErrNotStarted)

type lifecycle int

const (
	latent lifecycle = iota
	started
	closed
)

// shared is the engine behind Count and Value: the cache, the watch loop
// and the listeners.
type shared[T int32 | []byte] struct {
	client *framework.Client
	path   string
	seed   []byte
	codec  codec[T]

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	reread chan struct{}  // poked at Reconnected
	done   chan struct{}  // closed when the watch loop ends
	lwg    sync.WaitGroup // one per listener added, done when its queue ends

	mu         sync.Mutex
	state      lifecycle
	loop       bool // the watch loop runs; Close waits for done
	cur        VersionedValue[T]
	advanced   chan struct{} // closed and replaced at each change of cur
	listeners  map[*listener[T]]struct{}
	removeConn func()
	closeOnce  sync.Once
}

func newShared[T int32 | []byte](client *framework.Client, path string, seed T, cd codec[T]) (*shared[T], error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	if path == "/" {
		return nil, recipe.Invalid(ErrInvalidArgument,
			fmt.Errorf("%w %q: the root cannot hold a value", framework.ErrInvalidPath, path))
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &shared[T]{
		client: client, path: path, seed: cd.encode(seed), codec: cd,
		ctx: ctx, cancel: cancel,
		reread: make(chan struct{}, 1), done: make(chan struct{}), advanced: make(chan struct{}),
		cur:       VersionedValue[T]{Value: cd.clone(seed), Version: -1},
		listeners: make(map[*listener[T]]struct{}),
	}, nil
}

// start creates the node if missing, reads and watches it, and starts the
// watch loop. A failed start closes s.
func (s *shared[T]) start(ctx context.Context) error {
	if s == nil {
		return errZero
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
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
	if err := s.client.Check(); err != nil {
		s.mu.Unlock()
		s.Close()
		return recipe.Wrapf(ErrInvalidArgument, "sharedcount: start %s: %w", s.path, err)
	}
	s.state = started
	s.removeConn = s.client.AddListener(s.onState)
	s.mu.Unlock()

	// Close during Start ends its I/O.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()

	v, stat, watch, err := s.createAndRead(ctx)
	if err == nil {
		s.mu.Lock()
		if s.state == closed {
			err = ErrClosed
		} else {
			s.cur = VersionedValue[T]{Value: v, Version: stat.Version, Mzxid: stat.Mzxid}
			s.loop = true
			go s.run(watch)
		}
		s.mu.Unlock()
	}
	if err != nil {
		s.Close()
		return recipe.Wrapf(ErrInvalidArgument, "sharedcount: start %s: %w", s.path, err)
	}
	return nil
}

// createAndRead creates the node with the seed unless it exists (the first
// writer wins), then reads it with a watch. A node deleted in between is
// created again, a few times.
func (s *shared[T]) createAndRead(ctx context.Context) (T, *zk.Stat, <-chan zk.Event, error) {
	var zero T
	for i := 0; ; i++ {
		// An indeterminate NodeExists (our own create whose reply was
		// lost, or another's) is fine: the first writer wins either way.
		_, err := s.client.Create().CreatingParentContainersIfNeeded().ForPath(ctx, s.path, s.seed)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return zero, nil, nil, err
		}
		data, stat, watch, err := s.client.GetData().ForPathW(ctx, s.path)
		if errors.Is(err, zk.ErrNoNode) && i < 3 {
			continue
		}
		if err != nil {
			return zero, nil, nil, err
		}
		v, err := s.codec.decode(s.path, data)
		if err != nil {
			return zero, nil, nil, err
		}
		return v, stat, watch, nil
	}
}

// Close stops the watch loop and the listeners and waits for them. It is
// idempotent and returns nil; after it, writes return ErrClosed and reads
// return the last cached value.
func (s *shared[T]) Close() error {
	if s == nil {
		return nil
	}
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.state = closed
		ls := s.listeners
		s.listeners = nil
		remove, loop := s.removeConn, s.loop
		s.mu.Unlock()
		if remove != nil {
			remove()
		}
		s.cancel()
		if loop {
			<-s.done
		}
		for l := range ls {
			l.q.Stop()
		}
		s.lwg.Wait()
	})
	return nil
}

// onState forwards a connection state to the listeners and, on
// Reconnected, asks the loop to re-read. It runs on the client's listener
// goroutine.
func (s *shared[T]) onState(st framework.ConnectionState) {
	s.mu.Lock()
	if s.state != started {
		s.mu.Unlock()
		return
	}
	for l := range s.listeners {
		l.post(event[T]{state: st})
	}
	s.mu.Unlock()
	if st == framework.Reconnected {
		select {
		case s.reread <- struct{}{}:
		default:
		}
	}
}

// addListener adds l and returns its remover.
func (s *shared[T]) addListener(l Listener[T]) (remove func()) {
	if s == nil {
		return func() {}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == closed {
		return func() {}
	}
	q := newListener(l, s.codec.clone)
	s.listeners[q] = struct{}{}
	s.lwg.Add(1)
	go func() {
		defer s.lwg.Done()
		<-q.q.Done()
	}()
	return func() {
		s.mu.Lock()
		delete(s.listeners, q)
		s.mu.Unlock()
		q.q.Stop()
	}
}

// versioned returns a copy of the cached value.
func (s *shared[T]) versioned() VersionedValue[T] {
	if s == nil {
		return VersionedValue[T]{Version: -1}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.cur
	v.Value = s.codec.clone(v.Value)
	return v
}

// update caches v unless the cache already holds the same or a newer
// change, and tells the listeners. It reports whether v was cached.
func (s *shared[T]) update(v T, stat *zk.Stat) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stat.Mzxid <= s.cur.Mzxid {
		return false
	}
	s.cur = VersionedValue[T]{Value: v, Version: stat.Version, Mzxid: stat.Mzxid}
	close(s.advanced)
	s.advanced = make(chan struct{})
	if s.state == started {
		for l := range s.listeners {
			l.post(event[T]{value: &s.cur})
		}
	}
	return true
}

// waitNewer waits until the cache holds a change newer than zxid, for at
// most d, and reports whether it does.
func (s *shared[T]) waitNewer(ctx context.Context, zxid int64, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		s.mu.Lock()
		newer, ch := s.cur.Mzxid > zxid, s.advanced
		s.mu.Unlock()
		if newer {
			return true
		}
		select {
		case <-ch:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// report tells the listeners of a background error.
func (s *shared[T]) report(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != started {
		return
	}
	for l := range s.listeners {
		l.post(event[T]{err: err})
	}
}

// usable returns nil if s is started and not closed.
func (s *shared[T]) usable() error {
	if s == nil {
		return errZero
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case latent:
		return ErrNotStarted
	case closed:
		return ErrClosed
	}
	return nil
}
