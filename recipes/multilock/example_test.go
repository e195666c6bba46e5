package multilock_test

import (
	"context"
	"log"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/multilock"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/rwlock"
)

// Move stock between two warehouses while holding both of their locks,
// with a watchdog that stops the move if either lock is lost. Every
// process lists the paths in the same order, so none deadlocks.
func ExampleMultiLock_TryAcquire() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	both, err := multilock.NewFromPaths(client, []string{"/locks/stock/berlin", "/locks/stock/lyon"})
	if err != nil {
		log.Fatal(err)
	}
	h, ok, err := both.TryAcquire(ctx, 5*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	if !ok {
		log.Print("busy; try later") // neither lock is held now
		return
	}
	defer func() {
		if err := h.Release(context.WithoutCancel(ctx)); err != nil {
			log.Print(err) // every lock was still released as far as possible
		}
	}()

	// The watchdog: any goroutine may watch the hold.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-h.Lost(): // one of the locks is in doubt
			stop()
		case <-wctx.Done():
		}
	}()
	tokens, err := h.FencingTokens() // one per warehouse, in path order
	if err != nil {
		log.Fatal(err)
	}
	moveStock(wctx, tokens[0], tokens[1])
}

// Locks of different kinds, held as one.
func ExampleOf() {
	ctx := context.Background()
	var client *framework.Client // started elsewhere
	stock, err := mutex.New(client, "/locks/stock/sku-42")
	if err != nil {
		log.Fatal(err)
	}
	prices, err := rwlock.New(client, "/locks/prices")
	if err != nil {
		log.Fatal(err)
	}
	both, err := multilock.New(multilock.Of(stock), multilock.Of(prices.WriteLock()))
	if err != nil {
		log.Fatal(err)
	}
	h, err := both.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Release(context.WithoutCancel(ctx))
}

func moveStock(ctx context.Context, berlin, lyon int64) {}
