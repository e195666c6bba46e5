// Command barrier demonstrates recipes/barrier, Curator's
// DistributedBarrier: a coordinator holds three workers, each in its own
// session, until the batch is loaded, then releases them all at once.
//
//	go run ./examples/barrier            # starts a local ZooKeeper
//	go run ./examples/barrier -zk host:port
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/recipes/barrier"
)

const barrierPath = "/demo/barrier/batch-loaded"

func main() { demo.Run(run) }

func run(ctx context.Context, env *demo.Env) error {
	clients, err := env.Clients(ctx, 4)
	if err != nil {
		return err
	}
	defer demo.CloseAll(clients)
	coordinator, err := barrier.New(clients[0], barrierPath)
	if err != nil {
		return err
	}
	if err := coordinator.Set(ctx); err != nil {
		return err
	}
	fmt.Println("the coordinator sets the barrier", barrierPath)

	released := make(chan int, 3)
	failed := make(chan error, 3)
	for i, c := range clients[1:] {
		b, err := barrier.New(c, barrierPath)
		if err != nil {
			return err
		}
		go func() {
			if err := b.Wait(ctx); err != nil {
				failed <- err
				return
			}
			released <- i + 1
		}()
	}
	fmt.Println("3 workers wait on it")
	select {
	case w := <-released:
		return fmt.Errorf("worker %d passed the barrier while it was set", w)
	case err := <-failed:
		return err
	case <-time.After(300 * time.Millisecond):
	}
	fmt.Println("300ms later all 3 still wait; the batch is loaded, the coordinator removes the barrier")
	if err := coordinator.Remove(ctx); err != nil {
		return err
	}
	for range 3 {
		select {
		case w := <-released:
			fmt.Printf("worker %d passes\n", w)
		case err := <-failed:
			return err
		}
	}
	fmt.Println("done")
	return nil
}
