package framework

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-zookeeper/zk"
)

// DeleteBuilder deletes a node. It is a cheap value.
type DeleteBuilder struct {
	c          *Client
	guaranteed bool
	quietly    bool
	children   bool
	version    int32
	ns         *nsNode // a NamespaceView's namespace; nil: the client's
}

// Delete starts a delete operation, of any version by default.
func (c *Client) Delete() DeleteBuilder { return DeleteBuilder{c: c, version: -1} }

// Guaranteed keeps trying in the background when the delete fails on a
// connection problem, until it succeeds or the client closes. The caller
// still gets the error. A missing node is not retried.
func (b DeleteBuilder) Guaranteed() DeleteBuilder { b.guaranteed = true; return b }

// Quietly turns a missing node into success.
func (b DeleteBuilder) Quietly() DeleteBuilder { b.quietly = true; return b }

// DeletingChildrenIfNeeded deletes the node's descendants first.
func (b DeleteBuilder) DeletingChildrenIfNeeded() DeleteBuilder { b.children = true; return b }

// WithVersion deletes only if the node's data version is v.
func (b DeleteBuilder) WithVersion(v int32) DeleteBuilder { b.version = v; return b }

// ForPath deletes the node.
func (b DeleteBuilder) ForPath(ctx context.Context, path string) error {
	full, err := b.c.prepareIn(ctx, b.ns, path)
	if err != nil {
		return err
	}
	if full == "/" || full == b.c.nsPath(b.ns) {
		return fmt.Errorf("%w %q: cannot delete the root (or the namespace node)", ErrInvalidPath, path)
	}
	c := b.c
	maybe, err := c.retryOp(ctx, OpNameDelete, func(bool) error { return c.deleteOnce(full, b.version, b.children) })
	if err == nil || (b.quietly && errors.Is(err, zk.ErrNoNode)) {
		return nil
	}
	if maybe && errors.Is(err, zk.ErrNoNode) && !IsRetryable(err) {
		if b.version == -1 {
			return nil // gone, whether by our first attempt or not: done
		}
		// A versioned delete cannot tell its own first attempt from
		// another client's delete.
		err = Indeterminate(err)
	}
	if maybe && IsRetryable(err) {
		err = Indeterminate(err)
	}
	if b.guaranteed && (IsRetryable(err) || ctx.Err() != nil) && !errors.Is(err, zk.ErrNoNode) {
		c.background(func() error {
			err := c.deleteOnce(full, b.version, b.children)
			if errors.Is(err, zk.ErrNoNode) {
				return nil
			}
			return err
		})
	}
	return errtext.Errorf("framework: delete %s: %w", path, c.explainNoNode(err))
}

func (c *Client) deleteOnce(full string, version int32, children bool) error {
	if children {
		if err := c.deleteChildren(full); err != nil {
			return err
		}
	}
	return c.zkConn().Delete(full, version)
}

func (c *Client) deleteChildren(full string) error {
	kids, _, err := c.zkConn().Children(full)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		err := c.deleteOnce(JoinPath(full, k), -1, true)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
	}
	return nil
}

// background runs op after each reconnection until it returns nil or an
// error that is not retryable, or the client closes. Close waits for it.
func (c *Client) background(op func() error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		for {
			if err := c.BlockUntilConnected(c.ctx); err != nil {
				return
			}
			err := op()
			if err == nil {
				return
			}
			if !IsRetryable(err) {
				c.logger.Warn("framework: background operation gave up", "err", err)
				return
			}
			select {
			case <-c.ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
}
