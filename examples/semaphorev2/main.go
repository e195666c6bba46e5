// Command semaphorev2 demonstrates recipes/semaphorev2, Curator's
// InterProcessSemaphoreV2: a payment API allows 3 calls at once, and 6
// workers, each in its own session, share a pool of 3 leases. Nobody gets a
// fourth; a returned lease goes to a waiter; under load, never more than 3
// are held at once.
//
//	go run ./examples/semaphorev2            # starts a local ZooKeeper
//	go run ./examples/semaphorev2 -zk host:port
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/recipes/semaphorev2"
)

const (
	semPath   = "/demo/semaphorev2/payment-api"
	maxLeases = 3
	workers   = 6
	rounds    = 5
)

func main() { demo.Run(run) }

func run(ctx context.Context, env *demo.Env) error {
	clients, err := env.Clients(ctx, workers)
	if err != nil {
		return err
	}
	defer demo.CloseAll(clients)
	sems := make([]*semaphorev2.Semaphore, workers)
	for i, c := range clients {
		if sems[i], err = semaphorev2.New(c, semPath, maxLeases); err != nil {
			return err
		}
	}
	fmt.Printf("a pool of %d leases at %s, shared by %d workers\n", maxLeases, semPath, workers)

	// Workers 1-3 take the three leases.
	held := make([]*semaphorev2.Lease, maxLeases)
	for i := range held {
		if held[i], err = sems[i].Acquire(ctx); err != nil {
			return err
		}
	}
	names, err := sems[0].Participants(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("workers 1-3 hold a lease each (%d lease nodes)\n", len(names))

	// A fourth waits in vain, then gets the lease worker 1 returns.
	_, ok, err := sems[3].TryAcquire(ctx, 200*time.Millisecond)
	if err != nil {
		return err
	}
	fmt.Printf("worker 4 tries for 200ms: acquired=%v\n", ok)
	got := make(chan error, 1)
	go func() {
		l, err := sems[3].Acquire(ctx)
		if err == nil {
			err = l.Release(ctx)
		}
		got <- err
	}()
	if err := held[0].Release(ctx); err != nil {
		return err
	}
	fmt.Println("worker 1 returns its lease")
	if err := <-got; err != nil {
		return err
	}
	fmt.Println("worker 4 gets it, calls the API, and returns it")
	for i, l := range held[1:] {
		if err := sems[i+1].ReturnLease(ctx, l); err != nil { // or l.Release(ctx)
			return err
		}
	}

	// Under load: every worker calls the API a few times.
	var (
		inUse, peak, granted atomic.Int64
		wg                   sync.WaitGroup
		errs                 = make([]error, workers)
	)
	for i, s := range sems {
		wg.Go(func() {
			for range rounds {
				l, err := s.Acquire(ctx)
				if err != nil {
					errs[i] = err
					return
				}
				n := inUse.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				granted.Add(1)
				time.Sleep(10 * time.Millisecond) // the API call
				inUse.Add(-1)
				if err := l.Release(ctx); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Printf("under load: %d leases granted to %d workers, at most %d held at once\n", granted.Load(), workers, peak.Load())
	if peak.Load() > maxLeases {
		return fmt.Errorf("%d leases were held at once, more than %d", peak.Load(), maxLeases)
	}
	fmt.Println("done")
	return nil
}
