package framework

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/retry"
)

// waitConnected waits for a connection up to the connection timeout and
// ctx. Its timeout error is retryable, as Curator's ConnectionLoss is.
func (c *Client) waitConnected(ctx context.Context) error {
	c.mu.Lock()
	if err := c.checkLocked(); err != nil {
		c.mu.Unlock()
		return err
	}
	if c.state.IsConnected() {
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	tctx, cancel := context.WithTimeout(ctx, c.connectionTimeout)
	defer cancel()
	err := c.BlockUntilConnected(tctx)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w after %v", ErrConnectionTimeout, c.connectionTimeout)
	}
	return err
}

// Retry runs op inside the retry loop: it waits for a connection, runs op,
// and on a retryable error asks the client's retry policy whether to sleep
// and try again. Other errors return at once. It never runs past ctx.
// Recipes use it for their own multi-step operations.
func (c *Client) Retry(ctx context.Context, op func() error) error {
	if c == nil {
		return ErrNilClient
	}
	return c.retryWith(ctx, c.policy, op)
}

func (c *Client) retryWith(ctx context.Context, policy retry.Policy, op func() error) error {
	start := time.Now()
	var last error
	for n := 0; ; n++ {
		err := c.waitConnected(ctx)
		if err != nil && last != nil && ctx.Err() != nil {
			return fmt.Errorf("%w (last error: %w)", err, last)
		}
		if err == nil {
			if err = op(); err == nil {
				return nil
			}
		}
		last = err
		if !IsRetryable(err) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		}
		sleep, ok := policy.AllowRetry(n, time.Since(start))
		if !ok {
			return err
		}
		c.logger.Debug("framework: retrying", "attempt", n+1, "sleep", sleep, "err", err)
		if serr := retry.Sleep(ctx, sleep); serr != nil {
			return fmt.Errorf("%w (last error: %w)", serr, err)
		}
	}
}

// prepare validates the client and a path, and applies the namespace.
func (c *Client) prepare(p string) (string, error) {
	if err := c.Check(); err != nil {
		return "", err
	}
	if err := ValidatePath(p); err != nil {
		return "", err
	}
	return fixPath(c.ns, p), nil
}
