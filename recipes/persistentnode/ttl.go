package persistentnode

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// ttlEngine is a TTLNode: a Node of mode Container that Close does not
// delete, and a goroutine that touches its child.
type ttlEngine struct {
	n     *engine
	child string
	ttl   time.Duration
	every time.Duration

	wake    chan struct{} // the container was created (again): touch now
	done    chan struct{} // closed when touch returns
	touched chan struct{} // closed at the first touch that succeeded, or failed for good

	mu       sync.Mutex
	touchErr error // why the first touch failed for good
}

// DefaultTouchName and DefaultTouchFactor are Curator's: the child
// "touch", touched every TTL/2.
const (
	DefaultTouchName   = "touch"
	DefaultTouchFactor = 2
)

func newTTLEngine(client *framework.Client, path string, ttl time.Duration, data []byte, opts []TTLOption) (*ttlEngine, error) {
	if ttl < time.Millisecond || ttl > framework.MaxTTL {
		return nil, badArg("TTL %v is outside [1ms, %v]", ttl, framework.MaxTTL)
	}
	o := ttlOptions{child: DefaultTouchName, factor: DefaultTouchFactor}
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	n, err := newEngine(client, path, data, []Option{WithMode(framework.Container)})
	if err != nil {
		return nil, err
	}
	t := &ttlEngine{
		n: n, child: framework.JoinPath(path, o.child), ttl: ttl, every: max(ttl/time.Duration(o.factor), time.Millisecond),
		wake: make(chan struct{}, 1), done: make(chan struct{}), touched: make(chan struct{}),
	}
	n.keepOnClose = true
	n.onCreated = func() {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
	return t, nil
}

func (t *ttlEngine) node() *engine {
	if t == nil {
		return nil
	}
	return t.n
}

func (t *ttlEngine) start(ctx context.Context) error {
	if t == nil {
		return errZero
	}
	if err := t.n.start(ctx); err != nil {
		return err
	}
	go t.touch()
	return nil
}

// touch sets the child's data, or creates it with its TTL, right after
// each creation of the container and every t.every, until Close.
func (t *ttlEngine) touch() {
	defer close(t.done)
	ctx := t.n.ctx
	timer := time.NewTimer(t.every)
	defer timer.Stop()
	for {
		select {
		case <-t.wake:
		case <-timer.C:
		case <-ctx.Done():
			return
		}
		timer.Reset(t.every)
		if _, present := t.n.path(); !present {
			continue
		}
		err := t.touchOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil:
			t.first(nil)
		case errors.Is(err, framework.ErrTTLNotEnabled) || recipe.IsBadArg(err):
			t.first(err)
		default:
			t.n.client.Logger().Debug("persistentnode: touch failed; will try again", "path", t.child, "err", err)
		}
	}
}

func (t *ttlEngine) touchOnce(ctx context.Context) error {
	_, err := t.n.client.SetData().ForPath(ctx, t.child, nil)
	if !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	_, err = t.n.client.Create().WithMode(framework.PersistentWithTTL).WithTTL(t.ttl).ForPath(ctx, t.child, nil)
	switch {
	case errors.Is(err, zk.ErrNodeExists):
		return nil // ours, whose reply was lost, or another TTLNode's: touched either way
	case errors.Is(err, zk.ErrNoNode):
		return nil // the container went: it is made again, and touched then
	}
	return err
}

// first records the outcome of the first touch that settles.
func (t *ttlEngine) first(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.touched:
	default:
		t.touchErr = err
		close(t.touched)
	}
}

func (t *ttlEngine) waitInitial(ctx context.Context) error {
	if t == nil {
		return errZero
	}
	if err := t.n.waitInitial(ctx); err != nil {
		return err
	}
	select {
	case <-t.touched:
	case <-t.n.ctx.Done():
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.touchErr != nil {
		return fmt.Errorf("persistentnode: touch %s: %w", t.child, t.touchErr)
	}
	return nil
}

func (t *ttlEngine) path() (string, bool)                        { return t.node().path() }
func (t *ttlEngine) data() []byte                                { return t.node().data() }
func (t *ttlEngine) setData(ctx context.Context, b []byte) error { return t.node().setData(ctx, b) }

func (t *ttlEngine) close(ctx context.Context) error {
	if t == nil {
		return errZero
	}
	n := t.n
	n.mu.Lock()
	running := n.running
	n.mu.Unlock()
	err := n.close(ctx, false)
	if running && err == nil {
		<-t.done
	}
	return err
}
