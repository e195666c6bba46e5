package retry_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/go-curator/curator/retry"
)

// SessionFailed retries what the policy it wraps retries, but not a
// session expiry: work begun on one session does not go on, unseen, on
// the next.
func ExampleNewSessionFailed() {
	inner, err := retry.NewExponentialBackoff(100*time.Millisecond, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	policy, err := retry.NewSessionFailed(inner)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, err := range []error{zk.ErrConnectionClosed, zk.ErrSessionExpired, zk.ErrNoNode} {
		fmt.Printf("%v: %v\n", err, retry.Retryable(policy, err))
	}
	// Output:
	// zk: connection closed: true
	// zk: session has been expired by the server: false
	// zk: node does not exist: false
}

// untilCreated is a policy that retries a missing node too, for a reader
// that waits, a few times, for another process to create the node.
type untilCreated struct{ retry.Policy }

// RetryableError makes untilCreated a retry.Classifier.
func (untilCreated) RetryableError(err error) bool {
	return retry.IsRetryable(err) || errors.Is(err, zk.ErrNoNode)
}

// A policy that implements Classifier decides which errors are retried;
// give it to the client with framework.Builder.RetryPolicy.
func ExampleClassifier() {
	inner, err := retry.NewNTimes(5, 200*time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	var policy retry.Policy = untilCreated{inner}
	fmt.Println(retry.Retryable(policy, zk.ErrNoNode))
	fmt.Println(retry.Retryable(policy, zk.ErrBadVersion))
	fmt.Println(retry.Retryable(inner, zk.ErrNoNode)) // the default: Curator 5's
	// Output:
	// true
	// false
	// false
}
