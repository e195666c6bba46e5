package mutex_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
)

// Deduct stock exactly once: hold the lock around the read–modify–write,
// hand the fencing token to the store, and stop if the lock is lost.
func ExampleMutex_Acquire() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	lock, err := mutex.New(client, "/locks/stock/sku-42")
	if err != nil {
		log.Fatal(err)
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := lock.Acquire(actx); err != nil {
		log.Fatal(err) // timed out; no node of ours is left behind
	}
	defer func() {
		if err := lock.Release(context.WithoutCancel(ctx)); err != nil {
			log.Print(err) // the node still goes, with a guaranteed delete
		}
	}()
	token, err := lock.FencingToken()
	if err != nil {
		log.Fatal(err)
	}
	work := make(chan error, 1)
	go func() { work <- deductStock(ctx, token) }() // the store rejects tokens lower than the last it saw
	select {
	case err := <-work:
		if err != nil {
			log.Print(err)
		}
	case <-lock.Lost():
		// Suspended or Lost: another process may hold the lock by now.
		log.Print("lock lost: abandon the work; the store's fencing check refuses a late write")
	}
}

// TryAcquire waits a bounded time and reports false, without an error,
// when someone else kept the lock.
func ExampleMutex_TryAcquire() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	lock, err := mutex.New(client, "/locks/reports/daily")
	if err != nil {
		log.Fatal(err)
	}
	ok, err := lock.TryAcquire(ctx, 0) // try once
	if err != nil {
		log.Fatal(err)
	}
	if !ok {
		log.Print("another process is writing the report")
		return
	}
	// Reentrant on this goroutine: no I/O, and one more Release is due.
	if err := lock.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	err = errors.Join(lock.Release(ctx), lock.Release(ctx))
	if err != nil {
		log.Print(err)
	}
}

// A holder that opts in to revocation releases when another process asks.
func ExampleWithRevocation() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	revoked := make(chan struct{}, 1)
	lock, err := mutex.New(client, "/locks/batch", mutex.WithRevocation(func() {
		select {
		case revoked <- struct{}{}:
		default:
		}
	}))
	if err != nil {
		log.Fatal(err)
	}
	if err := lock.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	node := lock.Node()

	// Elsewhere, an operator asks the holder to let go:
	if err := mutex.Revoke(ctx, client, node); err != nil {
		log.Fatal(err)
	}

	<-revoked // the holder's goroutine releases, as Release is per goroutine
	if err := lock.Release(ctx); err != nil {
		log.Print(err)
	}
}

func deductStock(context.Context, int64) error { return nil }
