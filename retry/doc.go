// Package retry holds the retry policies of go-curator: Apache Curator's
// org.apache.curator.retry classes, with Curator's formulas, behind one small
// interface.
//
// # How a policy is used
//
// The framework's retry loop runs an operation. When the operation fails with
// an error that Curator retries (connection loss, an operation timeout, a moved
// or expired session), the loop asks its [Policy]:
//
//	sleep, ok := policy.AllowRetry(retryCount, time.Since(start))
//	if !ok {
//		return err // give up: the last error goes back to the caller
//	}
//	if err := retry.Sleep(ctx, sleep); err != nil {
//		return err // ctx ended while waiting
//	}
//	retryCount++
//
// retryCount counts the retries already made, so it is 0 when the first retry
// is being considered. Recipes that must retry a whole step, such as a lock
// whose node vanished with its session, use the client's policy the same way.
//
// # Which errors are retried
//
// By default the loop retries the errors [IsRetryable] reports, Curator 5's
// list: connection loss, an operation timeout, a moved or expired session.
// A policy that also implements [Classifier] decides instead, as Curator
// 5's RetryPolicy.allowRetry(Throwable) does: the loop asks
// RetryableError(err) first and AllowRetry only if it reports true.
// [Retryable] asks a policy as the loop does. [NewSessionFailed] wraps a
// policy so that it never retries a session expiry (Curator's
// SessionFailedRetryPolicy). The end of the caller's ctx and a closed
// client end the loop whatever a Classifier says.
//
// # Policies and their Curator classes
//
//	NewExponentialBackoff(base, maxRetries)            ExponentialBackoffRetry(base, maxRetries)
//	NewExponentialBackoffMax(base, maxRetries, max)    ExponentialBackoffRetry(base, maxRetries, maxSleep)
//	NewBoundedExponentialBackoff(base, max, maxRetries) BoundedExponentialBackoffRetry
//	NewNTimes(n, sleep)                                RetryNTimes
//	NewOneTime(sleep)                                  RetryOneTime
//	NewUntilElapsed(maxElapsed, sleep)                 RetryUntilElapsed
//	NewForever(interval)                               RetryForever
//	FromBackOff(b)                                     (none: adapts a cenkalti/backoff/v4 BackOff)
//	NewSessionFailed(p)                                SessionFailedRetryPolicy
//	a Policy with RetryableError (Classifier)          RetryPolicy.allowRetry(Throwable)
//
// Curator's BoundedExponentialBackoffRetry and the three-argument
// ExponentialBackoffRetry compute the same sleep, so both constructors return
// an [*ExponentialBackoff]; likewise RetryOneTime is RetryNTimes with n = 1, so
// [NewOneTime] returns an [*NTimes].
//
// # The exponential formula
//
// For retry number retryCount (counting from 0) an [ExponentialBackoff] sleeps
//
//	base × max(1, r), r drawn uniformly from [0, 2^(retryCount+1))
//
// capped at its maximum sleep, which defaults to [DefaultMaxSleep]
// (Curator's Integer.MAX_VALUE milliseconds). The sleep is therefore a whole
// multiple of base in [base, base×(2^(retryCount+1)−1)], and the jitter spreads
// the retries of many clients that lost the same server at the same moment.
// maxRetries above [MaxRetriesLimit] (29, Curator's MAX_RETRIES_LIMIT) is
// lowered to it, as Curator does. Where Curator's int arithmetic would
// overflow, this package clamps to the maximum sleep instead.
//
// # Errors
//
// Constructors check their arguments and return an error wrapping
// [ErrInvalidArgument] that names the bad argument; nothing in this package
// panics on bad input.
//
// # Concurrency
//
// Every policy built by this package is safe for concurrent use. All of them
// except the [BackOffPolicy] adapter are immutable after construction, so one
// policy can serve every operation of a client. The jitter comes from
// math/rand/v2's global source, which needs no locking by the caller.
//
// # ZooKeeper and connection loss
//
// A policy writes nothing to ZooKeeper and holds no connection: it only
// decides how long an operation keeps trying across a connection loss or a
// session expiry. When it gives up, the operation returns the last error
// (for which framework.IsRetryable is true) and the caller decides whether to
// try again later; an operation that wrote may or may not have been applied.
// Pick a policy whose total sleep is about the session timeout, so that a
// client rides out a leader election without waiting past the point where its
// session, and its locks, are gone anyway.
package retry
