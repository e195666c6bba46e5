package framework

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

// waitConnected waits for a connection up to the connection timeout and
// ctx. Its timeout error is retryable, as Curator's ConnectionLoss is.
func (c *Client) waitConnected(ctx context.Context) error { return c.waitSession(ctx, nil) }

// errSessionEnded is waitSession's report that sess closed first. It never
// leaves the retry loop.
var errSessionEnded = errors.New("framework: the session ended during the wait")

// waitSession is waitConnected that also returns errSessionEnded if sess
// (a session's loss signal, or nil) closes first.
func (c *Client) waitSession(ctx context.Context, sess <-chan struct{}) error {
	var timeout <-chan time.Time
	for {
		c.mu.Lock()
		if err := c.checkLocked(); err != nil {
			c.mu.Unlock()
			return err
		}
		if c.state.IsConnected() {
			c.mu.Unlock()
			return nil
		}
		ch := c.connected
		c.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(c.connectionTimeout)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-ch:
		case <-sess:
			return errSessionEnded
		case <-ctx.Done():
			return ctx.Err()
		case <-c.ctx.Done():
			return ErrClosed
		case <-timeout:
			return connTimeoutError{c.connectionTimeout}
		}
	}
}

// connTimeoutError is waitConnected's timeout: it matches
// ErrConnectionTimeout and, as Curator's CuratorConnectionLossException is a
// ConnectionLossException, zk.ErrConnectionClosed, so that a policy's
// [retry.Classifier] (and [retry.IsRetryable]) sees a connection loss.
type connTimeoutError struct{ after time.Duration }

func (e connTimeoutError) Error() string {
	return fmt.Sprintf("%v after %v", ErrConnectionTimeout, e.after)
}

func (e connTimeoutError) Is(target error) bool {
	return target == ErrConnectionTimeout || target == zk.ErrConnectionClosed
}

// Retry runs op inside the retry loop: it waits for a connection, runs op,
// and on a retryable error asks the client's retry policy whether to sleep
// and try again. Other errors return at once. It never runs past ctx, and a
// ctx already done (or nil) returns before op runs. Close wakes a retry
// that sleeps, which then returns ErrClosed. Recipes use it for their own
// multi-step operations; op must then be safe to repeat after a
// connection loss (read before a write that is not idempotent, or use
// RetryWrite).
func (c *Client) Retry(ctx context.Context, op func() error) error {
	if c == nil {
		return ErrNilClient
	}
	_, err := c.retryLoop(ctx, OpNameRetry, c.policy, func(bool) error { return op() })
	return err
}

// RetryWrite is Retry for an operation that may change the server's
// state. op is told whether an earlier attempt ended in a connection loss
// after its request may have been sent (so the server may have applied
// it); RetryWrite also reports it. A caller that cannot tell its own
// earlier attempt's effect from another client's (a versioned write that
// finds zk.ErrBadVersion, a create that finds zk.ErrNodeExists) must treat
// the outcome as indeterminate: see ErrIndeterminate and Indeterminate.
func (c *Client) RetryWrite(ctx context.Context, op func(maybeApplied bool) error) (maybeApplied bool, err error) {
	if c == nil {
		return false, ErrNilClient
	}
	return c.retryLoop(ctx, OpNameRetry, c.policy, op)
}

// Indeterminate wraps err so that it matches ErrIndeterminate as well as
// err's own chain. It returns nil for a nil err.
func Indeterminate(err error) error {
	if err == nil || errors.Is(err, ErrIndeterminate) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrIndeterminate, err)
}

// retryLoop runs op as the operation name (see OpInfo), and reports it to
// the metrics hook.
func (c *Client) retryLoop(ctx context.Context, name string, policy retry.Policy, op func(maybe bool) error) (maybe bool, err error) {
	if err := checkCtx(ctx); err != nil {
		return false, err
	}
	if err := c.Check(); err != nil {
		return false, err
	}
	start := time.Now()
	maybe, err = c.attempts(ctx, name, policy, start, op)
	if c.obsOpts.m.OpDone != nil {
		c.opDone(name, start, err)
	}
	return maybe, withSentinels(err)
}

// attempts is the retry loop's body: it runs op until it succeeds, fails
// with an error that is not retryable, or policy or ctx ends the retries.
//
// Which errors are retryable is the policy's to say when it is a
// retry.Classifier (Curator 5's allowRetry(Throwable)), IsRetryable's
// otherwise. The loop also follows the session the operation runs on: once
// the client has declared it Lost, the operation's failure is a session
// expiry (it matches zk.ErrSessionExpired), as Curator's is when the
// ZooKeeper handle it ran on has expired; and an operation that slept or
// waited across the loss asks the policy whether it may go on, on the new
// session, before its next attempt (without counting a retry).
func (c *Client) attempts(ctx context.Context, name string, policy retry.Policy, start time.Time, op func(maybe bool) error) (maybe bool, err error) {
	var last error
	sess := c.sessionSignal()
	// goOn reports the error that ends the loop if the session of the
	// earlier attempts ended while the loop slept or waited, and the
	// policy does not let the operation go on, on a new session.
	goOn := func() error {
		if !chans.IsClosed(sess) {
			return nil
		}
		sess = nil
		if lost := sessionExpired(last); !retryable(policy, lost) {
			return lost
		}
		return nil
	}
	for n := 0; ; n++ {
		if err := goOn(); err != nil {
			return maybe, err
		}
		err := c.waitSession(ctx, sess)
		if errors.Is(err, errSessionEnded) {
			if err := goOn(); err != nil {
				return maybe, err
			}
			err = c.waitSession(ctx, nil) // for the new session
		}
		if err != nil && last != nil && (ctx.Err() != nil || errors.Is(err, ErrClosed)) {
			return maybe, fmt.Errorf("%w (last error: %w)", err, last)
		}
		if err == nil {
			err = ctx.Err()
		}
		if err == nil {
			if err := goOn(); err != nil { // the session ended during the wait
				return maybe, err
			}
			if sess == nil {
				sess = c.sessionSignal()
			}
			if err = c.runOp(ctx, name, maybe, op); err == nil {
				return maybe, nil
			}
			if IsRetryable(err) && !errors.Is(err, ErrConnectionTimeout) {
				maybe = true // the request may have reached the server
			}
		}
		if IsRetryable(err) && chans.IsClosed(sess) {
			err, sess = sessionExpired(err), nil
		}
		if !retryable(policy, err) {
			if last != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				// ctx ended between attempts: the last attempt's
				// retryable error still says what may have happened
				// (a create or delete that may have been applied).
				return maybe, fmt.Errorf("%w (last error: %w)", err, last)
			}
			return maybe, err
		}
		last = err
		if ctx.Err() != nil {
			return maybe, fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		}
		sleep, ok := policy.AllowRetry(n, time.Since(start))
		if !ok {
			return maybe, err
		}
		c.logger.Debug("framework: retrying", "op", name, "attempt", n+1, "sleep", sleep, "err", err)
		if f := c.obsOpts.m.Retrying; f != nil {
			f(RetryInfo{Op: name, Attempt: n + 1, Sleep: sleep, Err: err})
		}
		if serr := c.sleep(ctx, sleep); serr != nil {
			return maybe, fmt.Errorf("%w (last error: %w)", serr, err)
		}
	}
}

// retryable reports whether the loop may retry after err under policy:
// never once ctx has ended or the client is closed or not started, and
// otherwise as the policy's retry.Classifier says, or IsRetryable for a
// policy that is not one.
func retryable(policy retry.Policy, err error) bool {
	switch {
	case err == nil, errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, ErrClosed), errors.Is(err, ErrNotStarted):
		return false
	}
	if _, ok := policy.(retry.Classifier); ok {
		return retry.Retryable(policy, err)
	}
	return IsRetryable(err)
}

// sessionSignal returns the channel that closes when the client's current
// session is lost (c.sessLoss), or nil while the client has no session
// (before the first, or after Lost until the next).
func (c *Client) sessionSignal() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessionID == 0 || c.state == Lost || c.closed {
		return nil
	}
	return c.sessLoss
}

// sessionExpired returns err marked as a session expiry: it then matches
// zk.ErrSessionExpired as well as err's own chain. A nil err (no attempt
// has failed yet) gives the framework's own message.
func sessionExpired(err error) error {
	switch {
	case err == nil:
		return fmt.Errorf("framework: the operation's session was lost: %w", zk.ErrSessionExpired)
	case errors.Is(err, zk.ErrSessionExpired):
		return err
	}
	return fmt.Errorf("%w (the operation's session was lost: %w)", err, zk.ErrSessionExpired)
}

// runOp runs one attempt of op. The framework's own operations (one
// request each) take a place among the client's requests in flight
// (transport.InFlight); Retry's and RetryWrite's ops, which may do anything, do
// not.
func (c *Client) runOp(ctx context.Context, name string, maybe bool, op func(maybe bool) error) error {
	if name == OpNameRetry {
		return op(maybe)
	}
	if err := c.flight.Enter(ctx); err != nil {
		return err
	}
	defer c.flight.Leave()
	return op(maybe)
}

// sleep waits for d, or until ctx ends (its error) or the client closes
// (ErrClosed).
func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return ErrClosed
	}
}

// prepare validates the client, ctx (nil or done: nothing runs) and a
// path, and applies the namespace.
func (c *Client) prepare(ctx context.Context, p string) (string, error) {
	if err := c.Check(); err != nil {
		return "", err
	}
	if err := checkCtx(ctx); err != nil {
		return "", err
	}
	if err := ValidatePath(p); err != nil {
		return "", err
	}
	return fixPath(c.ns, p), nil
}
