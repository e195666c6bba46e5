// Command semaphoremutex demonstrates recipes/semaphoremutex, Curator's
// InterProcessSemaphoreMutex: a lock that is not reentrant (a second
// Acquire blocks, even on the same goroutine) and that any goroutine may
// release, so a hold can follow work handed from one goroutine to another.
//
//	go run ./examples/semaphoremutex            # starts a local ZooKeeper
//	go run ./examples/semaphoremutex -zk host:port
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/recipes/semaphoremutex"
)

const lockPath = "/demo/semaphoremutex/export"

func main() { demo.Run(run) }

func run(ctx context.Context, env *demo.Env) error {
	clients, err := env.Clients(ctx, 2)
	if err != nil {
		return err
	}
	defer demo.CloseAll(clients)
	lock, err := semaphoremutex.New(clients[0], lockPath)
	if err != nil {
		return err
	}
	other, err := semaphoremutex.New(clients[1], lockPath)
	if err != nil {
		return err
	}

	h, err := lock.Acquire(ctx)
	if err != nil {
		return err
	}
	first, err := h.FencingToken()
	if err != nil {
		return err
	}
	fmt.Printf("the exporter holds %s (fencing token %d)\n", lockPath, first)
	_, ok, err := lock.TryAcquire(ctx, 200*time.Millisecond)
	if err != nil {
		return err
	}
	fmt.Printf("it tries again for 200ms on the same goroutine: acquired=%v (not reentrant)\n", ok)

	// Hand the work, and the hold with it, to another goroutine; a
	// watchdog goroutine cancels the export if the lock is lost.
	export, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-h.Lost():
			stop()
		case <-export.Done():
		}
	}()
	done := make(chan error, 1)
	go func(h *semaphoremutex.Hold) {
		// ... the export runs here, under export ...
		done <- h.Release(ctx)
	}(h)
	if err := <-done; err != nil {
		return err
	}
	stop()
	fmt.Println("a worker goroutine finishes the export and releases the lock")
	if err := h.Release(ctx); errors.Is(err, semaphoremutex.ErrNotOwner) {
		fmt.Println("a second Release returns ErrNotOwner")
	} else {
		return fmt.Errorf("a second Release returned %v, want ErrNotOwner", err)
	}

	h2, err := other.Acquire(ctx)
	if err != nil {
		return err
	}
	next, err := h2.FencingToken()
	if err != nil {
		return err
	}
	fmt.Printf("another session acquires it, fencing token %d > %d\n", next, first)
	if next <= first {
		return fmt.Errorf("fencing token did not grow: %d then %d", first, next)
	}
	if err := h2.Release(ctx); err != nil {
		return err
	}
	fmt.Println("done")
	return nil
}
