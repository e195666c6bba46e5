package retry

import "time"

// NTimes retries up to n times with the same sleep before each retry. It is
// Curator's RetryNTimes, and with n = 1 its RetryOneTime.
//
// An NTimes is immutable and safe for concurrent use. Build one with a
// constructor; the zero value never retries.
type NTimes struct {
	n     int
	sleep time.Duration
}

// NewNTimes returns a policy that allows n retries, sleeping sleep before each.
//
// A negative n or sleep is an error wrapping ErrInvalidArgument. An n of zero
// never retries; a sleep of zero retries at once.
func NewNTimes(n int, sleep time.Duration) (*NTimes, error) {
	if err := checkCount("n", n); err != nil {
		return nil, err
	}
	if err := checkNonNegative("sleep", sleep); err != nil {
		return nil, err
	}
	return &NTimes{n: n, sleep: sleep}, nil
}

// NewOneTime returns a policy that allows a single retry after sleep, as
// Curator's RetryOneTime. A negative sleep is an error wrapping
// ErrInvalidArgument.
func NewOneTime(sleep time.Duration) (*NTimes, error) {
	return NewNTimes(1, sleep)
}

// AllowRetry allows a retry while retryCount is below n.
func (p *NTimes) AllowRetry(retryCount int, _ time.Duration) (time.Duration, bool) {
	if retryCount >= p.n {
		return 0, false
	}
	return p.sleep, true
}

// UntilElapsed retries, with the same sleep before each retry, until a time
// limit has passed since the operation began. It is Curator's
// RetryUntilElapsed.
//
// The limit is checked before the sleep, so the last retry may start up to one
// sleep after the limit. An UntilElapsed is immutable and safe for concurrent
// use. Build one with a constructor; the zero value never retries.
type UntilElapsed struct {
	maxElapsed time.Duration
	sleep      time.Duration
}

// NewUntilElapsed returns a policy that allows retries while less than
// maxElapsed has passed since the operation began, sleeping sleep before each.
//
// A negative maxElapsed or sleep is an error wrapping ErrInvalidArgument.
func NewUntilElapsed(maxElapsed, sleep time.Duration) (*UntilElapsed, error) {
	if err := checkNonNegative("max elapsed", maxElapsed); err != nil {
		return nil, err
	}
	if err := checkNonNegative("sleep", sleep); err != nil {
		return nil, err
	}
	return &UntilElapsed{maxElapsed: maxElapsed, sleep: sleep}, nil
}

// AllowRetry allows a retry while elapsed is below maxElapsed, whatever
// retryCount is.
func (p *UntilElapsed) AllowRetry(_ int, elapsed time.Duration) (time.Duration, bool) {
	if elapsed >= p.maxElapsed {
		return 0, false
	}
	return p.sleep, true
}

// Forever retries without limit, sleeping a fixed interval before each retry.
// It is Curator's RetryForever. An operation under it ends only when it
// succeeds, fails with an error that is not retried, or its ctx ends.
//
// A Forever is immutable and safe for concurrent use. Build one with
// NewForever; the zero value retries at once, without sleeping.
type Forever struct {
	interval time.Duration
}

// NewForever returns a policy that always allows a retry after interval.
//
// An interval of zero or less is an error wrapping ErrInvalidArgument, as in
// Curator, since it would spin against the server.
func NewForever(interval time.Duration) (*Forever, error) {
	if interval <= 0 {
		return nil, invalid("interval %v is not positive", interval)
	}
	return &Forever{interval: interval}, nil
}

// AllowRetry always allows a retry, after the policy's interval.
func (p *Forever) AllowRetry(int, time.Duration) (time.Duration, bool) {
	return p.interval, true
}
