package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// core is what every queue kind shares: the put path and the consuming loop.
type core struct {
	client *framework.Client
	path   string
	kind   kind
	cfg    config
	log    *slog.Logger

	mu      sync.Mutex
	state   int // stateNew, stateStarted, stateClosed
	loopOn  bool
	items   chan Delivery
	itemsX  bool // items is closed
	runCtx  context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	closing bool
}

const (
	stateNew = iota
	stateStarted
	stateClosed
)

// newCore checks the arguments shared by every constructor.
func newCore(client *framework.Client, path string, k kind, opts []Option) (*core, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	if path == "/" {
		return nil, recipe.Invalid(ErrInvalidArgument,
			fmt.Errorf("%w %q: the root cannot be a queue", framework.ErrInvalidPath, path))
	}
	var cfg config
	if err := recipe.Apply(ErrInvalidArgument, &cfg, opts); err != nil {
		return nil, err
	}
	if cfg.maxBytes == 0 {
		cfg.maxBytes = DefaultMaxBytes
	}
	if !cfg.lineSet {
		cfg.linePath = path + "-line"
	}
	for _, p := range []string{cfg.lockPath, cfg.linePath} {
		if p == path || (p != "" && (hasPrefixDir(p, path))) {
			return nil, recipe.BadArg(ErrInvalidArgument,
				"%s: the lock and line paths must not be the queue path or below it (Java consumers would see their nodes)", p)
		}
	}
	if cfg.lockPath != "" && cfg.lockPath == cfg.linePath {
		return nil, recipe.BadArg(ErrInvalidArgument, "%s: the lock and line paths must differ", cfg.lockPath)
	}
	return &core{client: client, path: path, kind: k, cfg: cfg, log: client.Logger()}, nil
}

func hasPrefixDir(p, dir string) bool {
	return len(p) > len(dir) && p[:len(dir)] == dir && p[len(dir)] == '/'
}

// check returns an error if c cannot run a call with ctx.
func (c *core) check(ctx context.Context, typ string) error {
	if c == nil || c.client == nil {
		return recipe.Zero(ErrInvalidArgument, typ)
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	c.mu.Lock()
	closed := c.state == stateClosed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.client.Check(); err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "queue: %s: %w", c.path, err)
	}
	return nil
}

// start creates the queue's directories and, with a consumer, starts the
// consuming loop.
func (c *core) start(ctx context.Context, typ string) error {
	if err := c.check(ctx, typ); err != nil {
		return err
	}
	c.mu.Lock()
	if c.state != stateNew {
		c.mu.Unlock()
		return recipe.BadArg(ErrInvalidArgument, "%s %s: already started", typ, c.path)
	}
	c.mu.Unlock()
	dirs := []string{c.path}
	if c.cfg.lockPath != "" {
		dirs = append(dirs, c.cfg.lockPath)
	}
	for _, d := range dirs {
		_, err := c.client.Create().CreatingParentContainersIfNeeded().ForPath(ctx, d, nil)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return recipe.Wrapf(ErrInvalidArgument, "queue: start %s: create %s: %w", c.path, d, err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateNew {
		if c.state == stateClosed {
			return ErrClosed
		}
		return recipe.BadArg(ErrInvalidArgument, "%s %s: already started", typ, c.path)
	}
	c.state = stateStarted
	c.runCtx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if c.cfg.consumer != nil || c.items != nil {
		c.startLoopLocked()
	}
	return nil
}

// closeItemsLocked closes the Items channel once; c.mu is held.
func (c *core) closeItemsLocked() {
	if c.items != nil && !c.itemsX {
		c.itemsX = true
		close(c.items)
	}
}

// startLoopLocked starts the consuming loop once; c.mu is held.
func (c *core) startLoopLocked() {
	if c.loopOn {
		return
	}
	c.loopOn = true
	c.done = make(chan struct{})
	go func() {
		defer close(c.done)
		c.run(c.runCtx)
	}()
}

// itemsChan returns the channel of deliveries, starting the loop.
func (c *core) itemsChan() <-chan Delivery {
	if c == nil || c.client == nil {
		ch := make(chan Delivery)
		close(ch)
		return ch
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.items = make(chan Delivery)
	}
	if c.state == stateClosed || c.cfg.consumer != nil {
		c.closeItemsLocked() // nothing will come: closed, or consumed by the func
		return c.items
	}
	if c.state == stateStarted {
		c.startLoopLocked()
	}
	return c.items
}

// close stops the loop and waits for it until ctx ends.
func (c *core) close(ctx context.Context, typ string) error {
	if c == nil || c.client == nil {
		return recipe.Zero(ErrInvalidArgument, typ)
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	c.mu.Lock()
	c.state = stateClosed
	done, cancel := c.done, c.cancel
	if !c.loopOn {
		c.closeItemsLocked()
	}
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("queue: close %s: waiting for the consumer: %w", c.path, ctx.Err())
	}
}

// put writes one item node of name prefix (under the queue path) holding
// items.
func (c *core) put(ctx context.Context, typ, suffix string, items [][]byte) error {
	if err := c.check(ctx, typ); err != nil {
		return err
	}
	if len(items) == 0 {
		return recipe.BadArg(ErrInvalidArgument, "no items")
	}
	node := framework.JoinPath(c.path, itemPrefix+suffix)
	if n := encodedLen(items); n > c.cfg.maxBytes {
		return fmt.Errorf("%w: %s: %d bytes encoded, limit %d", ErrTooLarge, c.path, n, c.cfg.maxBytes)
	}
	_, err := c.client.Create().CreatingParentContainersIfNeeded().
		WithMode(framework.PersistentSequential).ForPath(ctx, node, encode(items))
	if err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "queue: put %s: %w", c.path, err)
	}
	return nil
}

// report tells the error handler and the log of err.
func (c *core) report(err error) {
	if c.cfg.onError != nil {
		c.cfg.onError(err)
	}
	if c.log != nil {
		c.log.Error("queue: consumer", "path", c.path, "err", err)
	}
}
