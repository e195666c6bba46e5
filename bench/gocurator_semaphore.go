package main

import (
	"context"

	"github.com/go-curator/curator/recipes/semaphorev2"
)

func init() {
	goRunners[kindSemaphore] = goSemaphore
	delete(goMissing, kindSemaphore)
}

// goSemaphore runs recipes/semaphorev2 with maxLeases leases: each worker
// acquires and returns one lease with its own client and Semaphore.
func goSemaphore(ctx context.Context, s spec) (*Result, error) {
	cs, err := newCurators(ctx, s.connect, s.clients)
	if err != nil {
		return nil, err
	}
	defer closeCurators(cs)
	steps := make([]step, len(cs))
	for i, c := range cs {
		sem, err := semaphorev2.New(c, s.path, maxLeases)
		if err != nil {
			return nil, err
		}
		steps[i] = lockStep(s.kind, maxLeases, func(ctx context.Context) (func(context.Context) error, error) {
			l, err := sem.Acquire(ctx)
			if err != nil {
				return nil, err
			}
			return l.Release, nil
		})
	}
	return measure(ctx, s, steps), nil
}
