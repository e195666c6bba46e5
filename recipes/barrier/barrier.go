package barrier

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// Errors of the barrier.
var (
	// ErrInvalidArgument reports a bad argument: a nil client, an invalid
	// path or the root, a nil option, a nil ctx, a nil or zero Barrier.
	// The error also matches the framework's specific sentinel
	// (framework.ErrNilClient, framework.ErrInvalidPath or
	// framework.ErrInvalidArgument).
	ErrInvalidArgument = errors.New("barrier: invalid argument")
)

// Barrier is a distributed barrier at one path. It holds no state of its
// own beyond the client, the path and the node data, so it is safe for
// concurrent use and needs no Close.
//
// The zero Barrier is not usable: make one with [New]. Its methods, and
// those of a nil *Barrier, return an error matching [ErrInvalidArgument]
// (Path returns ""); none panics. A Barrier may be copied.
type Barrier struct {
	client *framework.Client
	path   string
	data   []byte
}

// Option configures a Barrier. An option given a bad value returns an
// error matching [ErrInvalidArgument], which [New] returns.
type Option func(*options) error

// options are what the Options set.
type options struct {
	data []byte
}

// WithData sets the data of the barrier node that Set creates, instead of
// the client's default data.
func WithData(b []byte) Option {
	return func(o *options) error { o.data = append([]byte{}, b...); return nil }
}

// New returns a barrier at path. It checks its arguments and does no I/O;
// the client may be started later, before the first call. A nil client,
// an invalid path, the root, or a nil option is an error matching
// [ErrInvalidArgument].
func New(client *framework.Client, path string, opts ...Option) (*Barrier, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	if path == "/" {
		return nil, recipe.Invalid(ErrInvalidArgument,
			fmt.Errorf("%w %q: the root cannot be a barrier", framework.ErrInvalidPath, path))
	}
	var o options
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	b := &Barrier{client: client, path: path, data: o.data}
	if b.data == nil {
		b.data = client.DefaultData()
	}
	return b, nil
}

// Path returns the barrier's path, or "" for a nil or zero Barrier.
func (b *Barrier) Path() string {
	if b == nil {
		return ""
	}
	return b.path
}

// check returns an error if b cannot run op with ctx.
func (b *Barrier) check(ctx context.Context, op string) error {
	if b == nil || b.client == nil {
		return recipe.Zero(ErrInvalidArgument, "Barrier")
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if err := b.client.Check(); err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "barrier: %s %s: %w", op, b.path, err)
	}
	return nil
}

// Set raises the barrier: it creates the barrier node, and its missing
// parents as containers. A barrier that is already set is not an error.
func (b *Barrier) Set(ctx context.Context) error {
	if err := b.check(ctx, "set"); err != nil {
		return err
	}
	_, err := b.client.Create().CreatingParentContainersIfNeeded().
		WithMode(framework.Persistent).ForPath(ctx, b.path, b.data)
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return recipe.Wrapf(ErrInvalidArgument, "barrier: set %s: %w", b.path, err)
	}
	return nil
}

// Remove lowers the barrier: it deletes the barrier node, which releases
// every waiter. A barrier that is not set is not an error.
func (b *Barrier) Remove(ctx context.Context) error {
	if err := b.check(ctx, "remove"); err != nil {
		return err
	}
	if err := b.client.Delete().Quietly().ForPath(ctx, b.path); err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "barrier: remove %s: %w", b.path, err)
	}
	return nil
}

// Wait blocks until the barrier node is absent, and returns nil at once if
// it is not set. It re-reads the node after every wake-up, so it never
// returns nil while the node exists.
//
// When ctx ends first, Wait returns ctx.Err(). When the connection drops,
// Wait re-reads through the client's retry loop; if the retry policy gives
// up, Wait returns that error. A cancelled Wait leaves no node behind; its
// data watch stays on the server until the node changes or the session
// ends.
func (b *Barrier) Wait(ctx context.Context) error {
	if err := b.check(ctx, "wait"); err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Take the loss signal before the read, so a suspension after it
		// wakes us and we read again through the retry loop.
		lost := b.client.LossSignal(framework.StandardErrorPolicy)
		_, _, watch, err := b.client.GetData().ForPathW(ctx, b.path)
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return recipe.Wrapf(ErrInvalidArgument, "barrier: wait %s: %w", b.path, err)
		}
		select {
		case <-watch:
		case <-lost:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
