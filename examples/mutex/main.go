// Command mutex demonstrates recipes/mutex, Curator's InterProcessMutex:
// two clients (two sessions, as two processes would have) contend on one
// lock; the holder re-enters it without I/O; the fencing token grows with
// every grant; Lost() tells a holder when to stop trusting its lock.
//
//	go run ./examples/mutex            # starts a local ZooKeeper
//	go run ./examples/mutex -zk host:port
package main

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/recipes/mutex"
)

func main() { demo.Run(run) }

func run(ctx context.Context, env *demo.Env) error {
	clients, err := env.Clients(ctx, 2)
	if err != nil {
		return err
	}
	defer demo.CloseAll(clients)
	const lockPath = "/demo/mutex/stock"
	alice, err := mutex.New(clients[0], lockPath)
	if err != nil {
		return err
	}
	bob, err := mutex.New(clients[1], lockPath)
	if err != nil {
		return err
	}

	if err := alice.Acquire(ctx); err != nil {
		return err
	}
	tokenA, err := alice.FencingToken()
	if err != nil {
		return err
	}
	fmt.Printf("alice holds %s (node %s, fencing token %d)\n", lockPath, path.Base(alice.Node()), tokenA)

	// Reentrant per goroutine: no new node, just a count.
	if err := alice.Acquire(ctx); err != nil {
		return err
	}
	nodes, err := alice.Participants(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("alice acquires again on the same goroutine: still %d node, held twice\n", len(nodes))

	// Another session cannot get in; TryAcquire gives up without error.
	ok, err := bob.TryAcquire(ctx, 200*time.Millisecond)
	if err != nil {
		return err
	}
	fmt.Printf("bob (another session) tries for 200ms: acquired=%v\n", ok)
	// Another goroutine of alice's process cannot either: holds are per goroutine.
	other := make(chan bool)
	go func() {
		ok, _ := alice.TryAcquire(ctx, 0)
		other <- ok
	}()
	fmt.Printf("another goroutine on alice's mutex tries once: acquired=%v\n", <-other)

	// Work under the lock, stopping if the lock can no longer be trusted.
	select {
	case <-alice.Lost():
		return fmt.Errorf("alice lost the lock while working")
	case <-time.After(50 * time.Millisecond):
		fmt.Println("alice works while watching Lost(): the connection held, the work is done")
	}

	if err := alice.Release(ctx); err != nil {
		return err
	}
	fmt.Printf("alice releases once: she still holds it = %v\n", alice.IsOwnedByCurrentGoroutine())

	// Bob waits on his own goroutine; the lock and its token are his.
	type grant struct {
		token int64
		err   error
	}
	got := make(chan grant, 1)
	go func() {
		if err := bob.Acquire(ctx); err != nil {
			got <- grant{err: err}
			return
		}
		token, err := bob.FencingToken()
		got <- grant{token, errors.Join(err, bob.Release(ctx))}
	}()
	if err := alice.Release(ctx); err != nil {
		return err
	}
	fmt.Println("alice releases again: her node is deleted")
	g := <-got
	if g.err != nil {
		return g.err
	}
	fmt.Printf("bob got the lock with fencing token %d > %d: a store that keeps the highest token it saw rejects alice's late writes\n", g.token, tokenA)
	if g.token <= tokenA {
		return fmt.Errorf("fencing token did not grow: %d then %d", tokenA, g.token)
	}
	fmt.Println("bob released it; done")
	return nil
}
