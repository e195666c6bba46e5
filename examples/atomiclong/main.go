// Command atomiclong demonstrates recipes/atomiclong, Curator's
// DistributedAtomicLong: four clients, each in its own session, increment
// one counter 25 times each at the same time; every increment that reports
// success counts, so the counter ends at exactly 100. Then a
// compare-and-set succeeds only on the expected value.
//
//	go run ./examples/atomiclong            # starts a local ZooKeeper
//	go run ./examples/atomiclong -zk host:port
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/recipes/atomiclong"
	"github.com/go-curator/curator/retry"
)

const (
	counterPath = "/demo/atomiclong/orders"
	lockPath    = "/demo/atomiclong/orders-lock"
	clients     = 4
	perClient   = 25
)

func main() { demo.Run(run) }

func run(ctx context.Context, env *demo.Env) error {
	cs, err := env.Clients(ctx, clients)
	if err != nil {
		return err
	}
	defer demo.CloseAll(cs)
	policy, err := retry.NewNTimes(10, 0)
	if err != nil {
		return err
	}
	counters := make([]*atomiclong.Long, clients)
	for i, c := range cs {
		counters[i], err = atomiclong.New(c, counterPath, policy,
			atomiclong.WithPromotedLock(lockPath, 5*time.Second, policy))
		if err != nil {
			return err
		}
	}
	if err := counters[0].ForceSet(ctx, 0); err != nil {
		return err
	}
	fmt.Printf("%d clients increment %s %d times each, at the same time\n", clients, counterPath, perClient)

	var (
		mu                   sync.Mutex
		optimistic, promoted int
		failed               int
		errs                 []error
		wg                   sync.WaitGroup
	)
	for _, counter := range counters {
		wg.Go(func() {
			for range perClient {
				res, err := counter.Increment(ctx)
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case !res.Succeeded:
					failed++ // every try lost: a real caller would try again
				default:
					optimistic += res.Stats.OptimisticTries
					promoted += res.Stats.PromotedLockTries
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	got, err := counters[0].Get(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("counter = %d after %d successful increments (%d gave up)\n", got.PostValue, clients*perClient-failed, failed)
	fmt.Printf("they took %d optimistic compare-and-set tries and %d under the promoted lock: lost races were retried, none were lost\n", optimistic, promoted)
	if got.PostValue != int64(clients*perClient-failed) {
		return fmt.Errorf("counter is %d, want %d", got.PostValue, clients*perClient-failed)
	}

	res, err := counters[1].CompareAndSet(ctx, got.PostValue, 0)
	if err != nil {
		return err
	}
	fmt.Printf("CompareAndSet(%d -> 0) = %v\n", got.PostValue, res.Succeeded)
	res, err = counters[2].CompareAndSet(ctx, got.PostValue, 5)
	if err != nil {
		return err
	}
	fmt.Printf("CompareAndSet(%d -> 5) = %v: the value is %d now\n", got.PostValue, res.Succeeded, res.PreValue)
	fmt.Println("done")
	return nil
}
