// Command rwlock demonstrates recipes/rwlock, Curator's
// InterProcessReadWriteLock: readers in three sessions share the lock, a
// writer waits for them and then excludes everyone, and the writer
// downgrades to a read lock without letting another writer in between.
//
//	go run ./examples/rwlock            # starts a local ZooKeeper
//	go run ./examples/rwlock -zk host:port
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/recipes/rwlock"
)

const lockPath = "/demo/rwlock/prices"

func main() { demo.Run(run) }

func run(ctx context.Context, env *demo.Env) error {
	clients, err := env.Clients(ctx, 4)
	if err != nil {
		return err
	}
	defer demo.CloseAll(clients)
	locks := make([]*rwlock.Lock, len(clients))
	for i, c := range clients {
		if locks[i], err = rwlock.New(c, lockPath); err != nil {
			return err
		}
	}
	readers, writer := locks[:3], locks[3]

	// Three readers, each in its own session, hold the read lock together.
	reads := make([]*rwlock.Hold, len(readers))
	for i, l := range readers {
		if reads[i], err = l.ReadLock().Acquire(ctx); err != nil {
			return err
		}
	}
	nodes, err := readers[0].ReadLock().Participants(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("3 readers in 3 sessions hold the read lock of %s at once (%d __READ__ nodes)\n", lockPath, len(nodes))

	// The writer queues behind them.
	_, ok, err := writer.WriteLock().TryAcquire(ctx, 200*time.Millisecond)
	if err != nil {
		return err
	}
	fmt.Printf("a writer tries for 200ms while they read: acquired=%v\n", ok)

	// The writer waits on its own goroutine and downgrades there: write
	// lock, then read lock (granted at once to the goroutine that holds
	// the write lock, as Curator grants it to the thread), then release
	// the write.
	granted, release := make(chan error, 1), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		w, err := writer.WriteLock().Acquire(ctx)
		granted <- err
		if err != nil {
			return
		}
		<-release
		r, err := writer.ReadLock().Acquire(ctx) // a downgrade
		err = errors.Join(err, w.Release(ctx))
		if err == nil {
			fmt.Println("the writer took the read lock and released the write lock: it downgraded, no writer got in between")
			h, ok, err := locks[0].ReadLock().TryAcquire(ctx, 0)
			if err == nil && ok {
				fmt.Println("readers share the lock with it again")
				err = h.Release(ctx)
			}
			err = errors.Join(err, r.Release(ctx))
		}
		done <- err
	}()
	select {
	case err := <-granted:
		return fmt.Errorf("the writer got in while readers held the lock (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	for i, h := range reads {
		if err := h.Release(ctx); err != nil {
			return err
		}
		fmt.Printf("reader %d releases\n", i+1)
	}
	if err := <-granted; err != nil {
		return err
	}
	fmt.Println("the last reader is gone: the writer holds the write lock")

	// While it writes, nobody reads.
	_, ok, err = readers[0].ReadLock().TryAcquire(ctx, 200*time.Millisecond)
	if err != nil {
		return err
	}
	fmt.Printf("a reader tries for 200ms while the writer writes: acquired=%v\n", ok)
	close(release)
	if err := <-done; err != nil {
		return err
	}
	fmt.Println("done")
	return nil
}
