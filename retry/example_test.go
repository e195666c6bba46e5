package retry_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/go-curator/curator/retry"
)

var errConnectionLoss = errors.New("connection loss")

// The loop below is the shape of the framework's retry loop: ask the policy
// after each failure, sleep what it says, and give up when it says no.
func Example() {
	policy, err := retry.NewExponentialBackoff(time.Millisecond, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	attempts := 0
	operation := func() error {
		attempts++
		if attempts < 3 {
			return errConnectionLoss
		}
		return nil
	}

	start := time.Now()
	for retryCount := 0; ; retryCount++ {
		err = operation()
		if err == nil {
			break
		}
		sleep, ok := policy.AllowRetry(retryCount, time.Since(start))
		if !ok {
			break
		}
		if err = retry.Sleep(ctx, sleep); err != nil {
			break
		}
	}
	fmt.Println("attempts:", attempts, "err:", err)
	// Output: attempts: 3 err: <nil>
}

func ExampleNewNTimes() {
	policy, err := retry.NewNTimes(2, 10*time.Millisecond)
	if err != nil {
		fmt.Println(err)
		return
	}
	for retryCount := range 3 {
		sleep, ok := policy.AllowRetry(retryCount, 0)
		fmt.Println(retryCount, sleep, ok)
	}
	// Output:
	// 0 10ms true
	// 1 10ms true
	// 2 0s false
}

func ExampleNewForever() {
	_, err := retry.NewForever(0)
	fmt.Println(errors.Is(err, retry.ErrInvalidArgument))
	fmt.Println(err)
	// Output:
	// true
	// retry: invalid argument: interval 0s is not positive
}

func ExampleFromBackOff() {
	b := backoff.WithMaxRetries(backoff.NewConstantBackOff(time.Second), 2)
	policy, err := retry.FromBackOff(b)
	if err != nil {
		fmt.Println(err)
		return
	}
	for retryCount := range 3 {
		sleep, ok := policy.AllowRetry(retryCount, 0)
		fmt.Println(retryCount, sleep, ok)
	}
	// Output:
	// 0 1s true
	// 1 1s true
	// 2 0s false
}
