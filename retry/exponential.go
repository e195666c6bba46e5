package retry

import (
	"math/rand/v2"
	"time"
)

const (
	// MaxRetriesLimit is the most retries an ExponentialBackoff allows, as
	// Curator's MAX_RETRIES_LIMIT. A larger maxRetries is lowered to it.
	MaxRetriesLimit = 29

	// DefaultMaxSleep caps a single sleep of an ExponentialBackoff built
	// without an explicit maximum: Curator's Integer.MAX_VALUE milliseconds,
	// a little under 25 days.
	DefaultMaxSleep = (1<<31 - 1) * time.Millisecond
)

// ExponentialBackoff retries up to a fixed number of times, sleeping a random,
// exponentially growing multiple of a base time between attempts. It is
// Curator's ExponentialBackoffRetry and BoundedExponentialBackoffRetry.
//
// Retry number retryCount (from 0) sleeps base × max(1, r), with r uniform in
// [0, 2^(retryCount+1)), capped at the maximum sleep.
//
// An ExponentialBackoff is immutable and safe for concurrent use. Build one
// with a constructor; the zero value never retries.
type ExponentialBackoff struct {
	base       time.Duration
	maxRetries int
	maxSleep   time.Duration
}

// NewExponentialBackoff returns a policy that allows maxRetries retries,
// sleeping base × max(1, rand[0, 2^(retryCount+1))) before each, capped at
// DefaultMaxSleep.
//
// maxRetries above MaxRetriesLimit is lowered to it. A negative base or
// maxRetries is an error wrapping ErrInvalidArgument. A base of zero retries
// without sleeping; a maxRetries of zero never retries.
func NewExponentialBackoff(base time.Duration, maxRetries int) (*ExponentialBackoff, error) {
	return newExponential(base, maxRetries, DefaultMaxSleep)
}

// NewExponentialBackoffMax is NewExponentialBackoff with every sleep capped at
// maxSleep, Curator's three-argument ExponentialBackoffRetry.
//
// A negative maxSleep is an error wrapping ErrInvalidArgument. A maxSleep
// below base is allowed: every sleep is then maxSleep.
func NewExponentialBackoffMax(base time.Duration, maxRetries int, maxSleep time.Duration) (*ExponentialBackoff, error) {
	return newExponential(base, maxRetries, maxSleep)
}

// NewBoundedExponentialBackoff is NewExponentialBackoffMax with Curator's
// BoundedExponentialBackoffRetry argument order: base, maxSleep, maxRetries.
func NewBoundedExponentialBackoff(base, maxSleep time.Duration, maxRetries int) (*ExponentialBackoff, error) {
	return newExponential(base, maxRetries, maxSleep)
}

func newExponential(base time.Duration, maxRetries int, maxSleep time.Duration) (*ExponentialBackoff, error) {
	if err := checkNonNegative("base sleep", base); err != nil {
		return nil, err
	}
	if err := checkCount("maxRetries", maxRetries); err != nil {
		return nil, err
	}
	if err := checkNonNegative("max sleep", maxSleep); err != nil {
		return nil, err
	}
	return &ExponentialBackoff{
		base:       base,
		maxRetries: min(maxRetries, MaxRetriesLimit),
		maxSleep:   maxSleep,
	}, nil
}

// AllowRetry allows a retry while retryCount is below the policy's
// maxRetries, and returns the randomised sleep for that retry.
func (p *ExponentialBackoff) AllowRetry(retryCount int, _ time.Duration) (time.Duration, bool) {
	if retryCount >= p.maxRetries {
		return 0, false
	}
	return p.sleep(retryCount), true
}

// sleep computes base × max(1, rand[0, 2^(retryCount+1))), capped at
// maxSleep without ever overflowing time.Duration.
func (p *ExponentialBackoff) sleep(retryCount int) time.Duration {
	if p.base == 0 {
		return 0
	}
	// Clamping keeps the shift non-negative and at most 30, so 1<<shift
	// fits in an int even where int has 32 bits.
	shift := min(max(retryCount, 0), MaxRetriesLimit) + 1
	n := time.Duration(max(1, rand.IntN(1<<shift)))
	// n ≤ maxSleep/base exactly when n×base ≤ maxSleep, and then the
	// product cannot overflow because maxSleep itself is a Duration.
	if n > p.maxSleep/p.base {
		return p.maxSleep
	}
	return n * p.base
}
