package retry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// ErrInvalidArgument is wrapped by every constructor error in this package.
var ErrInvalidArgument = errors.New("retry: invalid argument")

// Policy decides whether a failed operation is tried again.
type Policy interface {
	// AllowRetry reports whether another attempt may follow retryCount
	// earlier retries (0 for the first retry) after elapsed time since the
	// operation began, and how long to sleep before it.
	AllowRetry(retryCount int, elapsed time.Duration) (sleep time.Duration, ok bool)
}

// Compile-time checks that every policy satisfies Policy.
var (
	_ Policy = (*ExponentialBackoff)(nil)
	_ Policy = (*NTimes)(nil)
	_ Policy = (*UntilElapsed)(nil)
	_ Policy = (*Forever)(nil)
	_ Policy = (*BackOffPolicy)(nil)
)

// Sleep waits for d, or until ctx is done, whichever comes first.
//
// It returns nil after a full sleep and ctx.Err() if ctx ended first,
// including when ctx is already done on entry. A d of zero or less does not
// wait; it returns ctx.Err(), which is nil for a live ctx.
func Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// BackOffPolicy adapts a github.com/cenkalti/backoff/v4 BackOff to Policy, so
// any of that package's schedules (exponential with its own jitter,
// constant, WithMaxRetries, WithContext, ...) can drive the framework's retry
// loop.
//
// A BackOff is stateful, and one BackOffPolicy shares its BackOff among all of
// its callers: a mutex makes it safe for concurrent use, but concurrent
// operations advance one schedule together, and each operation's first retry
// resets it for all. Give each client, or each operation that needs its own
// schedule, its own BackOffPolicy. The policies built by this package's other
// constructors hold no such state. Build one with FromBackOff; the zero value
// has no BackOff to ask.
type BackOffPolicy struct {
	mu sync.Mutex
	b  backoff.BackOff
}

// FromBackOff returns a policy driven by b. The policy takes b over: the
// caller should not use b afterwards.
//
// A nil b is an error wrapping ErrInvalidArgument.
func FromBackOff(b backoff.BackOff) (*BackOffPolicy, error) {
	if b == nil {
		return nil, invalid("backoff is nil")
	}
	return &BackOffPolicy{b: b}, nil
}

// AllowRetry resets the BackOff when retryCount is 0, then asks it for the
// next sleep. backoff.Stop, or any other negative duration, means no retry.
//
// The elapsed argument is ignored: a BackOff that limits elapsed time, such as
// backoff.ExponentialBackOff with MaxElapsedTime, keeps its own clock, started
// by the Reset at the first retry.
func (p *BackOffPolicy) AllowRetry(retryCount int, _ time.Duration) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if retryCount == 0 {
		p.b.Reset()
	}
	d := p.b.NextBackOff()
	if d < 0 {
		return 0, false
	}
	return d, true
}

// invalid returns an error wrapping ErrInvalidArgument that says what is wrong.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

// checkNonNegative rejects a negative duration named name.
func checkNonNegative(name string, d time.Duration) error {
	if d < 0 {
		return invalid("%s %v is negative", name, d)
	}
	return nil
}

// checkCount rejects a negative count named name.
func checkCount(name string, n int) error {
	if n < 0 {
		return invalid("%s %d is negative", name, n)
	}
	return nil
}
