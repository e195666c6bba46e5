package barrier

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-curator/curator/framework"
	"github.com/go-zookeeper/zk"
)

// Errors of the barrier.
var (
	// ErrInvalidArgument reports a bad argument to New. The error also
	// matches the framework's sentinel for the problem
	// (framework.ErrNilClient, framework.ErrInvalidPath).
	ErrInvalidArgument = errors.New("barrier: invalid argument")
)

// Barrier is a distributed barrier at one path. It holds no state of its
// own beyond the client and the path, so it is safe for concurrent use and
// needs no Close.
type Barrier struct {
	client *framework.Client
	path   string
}

// New returns a barrier at path. It checks its arguments and does no I/O;
// the client may be started later, before the first call.
func New(client *framework.Client, path string) (*Barrier, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, framework.ErrNilClient)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	if path == "/" {
		return nil, fmt.Errorf("%w: %w %q: the root cannot be a barrier",
			ErrInvalidArgument, framework.ErrInvalidPath, path)
	}
	return &Barrier{client: client, path: path}, nil
}

// Path returns the barrier's path.
func (b *Barrier) Path() string { return b.path }

// Set raises the barrier: it creates the barrier node, and its missing
// parents as containers. A barrier that is already set is not an error.
func (b *Barrier) Set(ctx context.Context) error {
	if err := b.client.Check(); err != nil {
		return fmt.Errorf("barrier: set %s: %w", b.path, err)
	}
	_, err := b.client.Create().CreatingParentContainersIfNeeded().
		WithMode(framework.Persistent).ForPath(ctx, b.path, b.client.DefaultData())
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("barrier: set: %w", err)
	}
	return nil
}

// Remove lowers the barrier: it deletes the barrier node, which releases
// every waiter. A barrier that is not set is not an error.
func (b *Barrier) Remove(ctx context.Context) error {
	if err := b.client.Check(); err != nil {
		return fmt.Errorf("barrier: remove %s: %w", b.path, err)
	}
	if err := b.client.Delete().Quietly().ForPath(ctx, b.path); err != nil {
		return fmt.Errorf("barrier: remove: %w", err)
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
	if err := b.client.Check(); err != nil {
		return fmt.Errorf("barrier: wait %s: %w", b.path, err)
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
			return fmt.Errorf("barrier: wait: %w", err)
		}
		select {
		case <-watch:
		case <-lost:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
