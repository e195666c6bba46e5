// Command doublebarrier demonstrates recipes/doublebarrier, Curator's
// DistributedDoubleBarrier: three workers, each in its own session, start a
// batch together (Enter returns when all three are in) and finish it
// together (Leave returns when all three are out).
//
//	go run ./examples/doublebarrier            # starts a local ZooKeeper
//	go run ./examples/doublebarrier -zk host:port
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/recipes/doublebarrier"
)

const (
	barrierPath = "/demo/doublebarrier/batch"
	members     = 3
)

func main() { demo.Run(run) }

func run(ctx context.Context, env *demo.Env) error {
	clients, err := env.Clients(ctx, members)
	if err != nil {
		return err
	}
	defer demo.CloseAll(clients)
	workers := make([]*doublebarrier.DoubleBarrier, members)
	for i, c := range clients {
		if workers[i], err = doublebarrier.New(c, barrierPath, members); err != nil {
			return err
		}
	}
	fmt.Printf("a double barrier for %d members at %s\n", members, barrierPath)

	// Workers arrive one by one; none gets in before the last arrives.
	entered := make(chan error, members)
	for i, w := range workers {
		go func() { entered <- w.Enter(ctx) }()
		if i < members-1 {
			if err := stillWaiting(entered, 200*time.Millisecond); err != nil {
				return err
			}
			fmt.Printf("worker %d enters and waits (%d of %d in)\n", i+1, i+1, members)
		}
	}
	for range members {
		if err := <-entered; err != nil {
			return err
		}
	}
	fmt.Printf("worker %d enters: all %d are in, and all start the batch together\n", members, members)

	// They finish at different times; none leaves before the last is done.
	left := make(chan error, members)
	for i, w := range workers {
		go func() { left <- w.Leave(ctx) }()
		if i < members-1 {
			if err := stillWaiting(left, 200*time.Millisecond); err != nil {
				return err
			}
			fmt.Printf("worker %d is done and waits to leave\n", i+1)
		}
	}
	for range members {
		if err := <-left; err != nil {
			return err
		}
	}
	fmt.Printf("worker %d is done: all %d leave together; done\n", members, members)
	return nil
}

// stillWaiting checks that no call has returned on ch within d.
func stillWaiting(ch <-chan error, d time.Duration) error {
	select {
	case err := <-ch:
		return fmt.Errorf("a worker passed the barrier early (err %v)", err)
	case <-time.After(d):
		return nil
	}
}
