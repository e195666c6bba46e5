// Command mutex demonstrates recipes/mutex, Curator's InterProcessMutex:
// two clients (two sessions, as two processes would have) contend on one
// lock; the holder re-enters it without I/O; the fencing token grows with
// every grant; the hold's Lost() tells a watchdog goroutine when to stop
// the work.
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

	h, err := alice.Acquire(ctx)
	if err != nil {
		return err
	}
	tokenA, err := h.FencingToken()
	if err != nil {
		return err
	}
	fmt.Printf("alice holds %s (node %s, fencing token %d)\n", lockPath, path.Base(h.Node()), tokenA)

	// Reentrant per goroutine: no new node, the same hold, counted.
	again, err := alice.Acquire(ctx)
	if err != nil {
		return err
	}
	nodes, err := alice.Participants(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("alice acquires again on the same goroutine: still %d node, held twice (the same hold: %v)\n", len(nodes), again == h)

	// Another session cannot get in; TryAcquire gives up without error.
	_, ok, err := bob.TryAcquire(ctx, 200*time.Millisecond)
	if err != nil {
		return err
	}
	fmt.Printf("bob (another session) tries for 200ms: acquired=%v\n", ok)
	// Another goroutine of alice's process cannot either: acquires are per
	// goroutine (the hold, though, is a value any goroutine may use).
	other := make(chan bool)
	go func() {
		_, ok, _ := alice.TryAcquire(ctx, 0)
		other <- ok
	}()
	fmt.Printf("another goroutine on alice's mutex tries once: acquired=%v\n", <-other)

	// Work under the lock, with a watchdog goroutine that cancels the work
	// if the lock can no longer be trusted.
	work, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-h.Lost():
			stop() // the lock is in doubt: cancel the work
		case <-work.Done():
		}
	}()
	select {
	case <-work.Done():
		return fmt.Errorf("alice lost the lock while working")
	case <-time.After(50 * time.Millisecond):
		stop()
	}
	fmt.Println("alice works while a watchdog goroutine watches her hold's Lost(): the connection held, the work is done")

	if err := h.Release(ctx); err != nil {
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
		hb, err := bob.Acquire(ctx)
		if err != nil {
			got <- grant{err: err}
			return
		}
		token, err := hb.FencingToken()
		got <- grant{token, errors.Join(err, hb.Release(ctx))}
	}()
	if err := h.Release(ctx); err != nil {
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
