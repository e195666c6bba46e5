package recipe

import (
	"context"
	"time"

	"github.com/go-curator/curator/retry"
)

// Restart runs attempt until it returns without an error that again
// accepts; after each failure that again accepts (the attempt's node
// vanished, or its session was lost), policy decides whether to start
// again, counting the restarts and the time since the first attempt. It
// returns the last attempt's result; when the policy gives up, its error.
// A sleep between attempts cut short by ctx returns ctx's error.
func Restart[T any](ctx context.Context, policy retry.Policy, again func(error) bool, attempt func() (T, error)) (T, error) {
	start := time.Now()
	for n := 0; ; n++ {
		v, err := attempt()
		if err == nil || !again(err) {
			return v, err
		}
		sleep, ok := policy.AllowRetry(n, time.Since(start))
		if !ok {
			return v, err
		}
		if serr := retry.Sleep(ctx, sleep); serr != nil {
			var zero T
			return zero, serr
		}
	}
}
