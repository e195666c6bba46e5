package sharedcount

import (
	"context"
	"math/rand/v2"
	"time"
)

// maxJitter bounds the wait of a TrySetCount that lost a race.
const maxJitter = 20 * time.Millisecond

// jitter returns a random wait of up to two tries' durations: writers that
// lost the same race spread out instead of racing again at once.
func jitter(try time.Duration) time.Duration {
	w := min(2*try, maxJitter)
	if w <= 0 {
		return 0
	}
	return rand.N(w)
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
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
	}
}
