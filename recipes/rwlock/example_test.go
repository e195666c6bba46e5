package rwlock_test

import (
	"context"
	"log"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/rwlock"
)

// Many processes read the price list at once; a watchdog goroutine stops
// the read if the lock is lost.
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

	lock, err := rwlock.New(client, "/locks/prices", rwlock.WithData([]byte("pricing-worker-7")))
	if err != nil {
		log.Fatal(err)
	}
	h, err := lock.ReadLock().Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := h.Release(context.WithoutCancel(ctx)); err != nil {
			log.Print(err) // the node goes with a guaranteed delete anyway
		}
	}()

	// The watchdog: any goroutine may watch the hold.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-h.Lost(): // a writer elsewhere may hold the lock by now
			stop()
		case <-wctx.Done():
		}
	}()
	readPrices(wctx)
}

// A writer downgrades: it takes the read lock before it gives up the
// write lock, so no other writer gets in between.
func ExampleLock_WriteLock() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	lock, err := rwlock.New(client, "/locks/prices")
	if err != nil {
		log.Fatal(err)
	}
	w, ok, err := lock.WriteLock().TryAcquire(ctx, 10*time.Second)
	if err != nil || !ok {
		log.Fatalf("no write lock: %v", err)
	}
	token, err := w.FencingToken()
	if err != nil {
		log.Fatal(err)
	}

	// The watchdog on the write hold: stop writing once it is lost (the
	// store also rejects the token of a deposed writer).
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-w.Lost():
			stop()
		case <-wctx.Done():
		}
	}()
	writePrices(wctx, token)

	// The read lock is granted at once to the goroutine that holds the
	// write lock.
	r, err := lock.ReadLock().Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Release(ctx); err != nil {
		log.Print(err)
	}
	readPrices(ctx) // read back what was written
	if err := r.Release(ctx); err != nil {
		log.Print(err)
	}
}

func readPrices(context.Context)         {}
func writePrices(context.Context, int64) {}

// A long report holds the write lock; an operator's tool asks it to give
// up, and the holder releases from its revocation listener.
func ExampleWithWriteRevocation() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	lock, err := rwlock.New(client, "/locks/prices", rwlock.WithWriteRevocation(func(h *rwlock.Hold) {
		if err := h.Release(ctx); err != nil {
			log.Print(err)
		}
	}))
	if err != nil {
		log.Fatal(err)
	}
	h, err := lock.WriteLock().Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Release(ctx) // ErrNotOwner if the listener released it first

	// Elsewhere, another process: rwlock.Revoke(ctx, client, node), with
	// node from lock.WriteLock().Participants(ctx).
	_ = h.Node()
}
