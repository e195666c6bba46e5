// Command sharedcount demonstrates recipes/sharedcount, Curator's
// SharedCount: two clients share one counter node; a listener sees every
// change; a compare-and-set on a stale version fails, refreshes the cache,
// and succeeds when tried again.
//
//	go run ./examples/sharedcount            # starts a local ZooKeeper
//	go run ./examples/sharedcount -zk host:port
package main

import (
	"context"
	"fmt"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/recipes/sharedcount"
)

const countPath = "/demo/sharedcount/max-workers"

func main() { demo.Run(run) }

func run(ctx context.Context, env *demo.Env) error {
	clients, err := env.Clients(ctx, 2)
	if err != nil {
		return err
	}
	defer demo.CloseAll(clients)
	// Start from a fresh node, so the seed is what both see.
	if err := clients[0].Delete().Quietly().ForPath(ctx, countPath); err != nil {
		return err
	}
	admin, err := sharedcount.New(clients[0], countPath, 10)
	if err != nil {
		return err
	}
	worker, err := sharedcount.New(clients[1], countPath, 10)
	if err != nil {
		return err
	}
	changes := make(chan sharedcount.VersionedValue[int32], 16)
	remove := worker.AddListener(sharedcount.Listener[int32]{
		Changed: func(v sharedcount.VersionedValue[int32]) { changes <- v },
	})
	defer remove()
	for _, c := range []*sharedcount.Count{admin, worker} {
		if err := c.Start(ctx); err != nil {
			return err
		}
		defer c.Close()
	}
	fmt.Printf("admin and worker share %s: both read %d\n", countPath, worker.Count())

	if err := admin.SetCount(ctx, 20); err != nil {
		return err
	}
	fmt.Println("admin sets 20")
	if err := await(ctx, changes, 20); err != nil {
		return err
	}

	// Both try a compare-and-set from the same version: one wins.
	prevA, prevW := admin.VersionedValue(), worker.VersionedValue()
	okA, err := admin.TrySetCount(ctx, prevA, prevA.Value+1)
	if err != nil {
		return err
	}
	fmt.Printf("admin: TrySetCount(version %d, %d -> %d) = %v\n", prevA.Version, prevA.Value, prevA.Value+1, okA)
	okW, err := worker.TrySetCount(ctx, prevW, prevW.Value*2)
	if err != nil {
		return err
	}
	fmt.Printf("worker: TrySetCount(version %d, %d -> %d) = %v: the version moved on\n", prevW.Version, prevW.Value, prevW.Value*2, okW)
	if okW {
		return fmt.Errorf("a compare-and-set on a stale version succeeded")
	}
	if err := await(ctx, changes, prevA.Value+1); err != nil {
		return err
	}
	prevW = worker.VersionedValue()
	okW, err = worker.TrySetCount(ctx, prevW, prevW.Value*2)
	if err != nil {
		return err
	}
	fmt.Printf("worker retries from its refreshed cache: TrySetCount(version %d, %d -> %d) = %v\n", prevW.Version, prevW.Value, prevW.Value*2, okW)
	if err := await(ctx, changes, prevW.Value*2); err != nil {
		return err
	}
	fmt.Println("done")
	return nil
}

// await prints the listener's changes until it sees want.
func await(ctx context.Context, changes <-chan sharedcount.VersionedValue[int32], want int32) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case v := <-changes:
			fmt.Printf("  worker's listener: %d (version %d)\n", v.Value, v.Version)
			if v.Value == want {
				return nil
			}
		}
	}
}
