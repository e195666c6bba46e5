package semaphoremutex_test

import (
	"context"
	"errors"
	"log"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/semaphoremutex"
)

// One goroutine takes the lock, a watchdog watches it, and a worker
// goroutine finishes the work and releases exactly that hold.
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

	m, err := semaphoremutex.New(client, "/shop/stock/sku-42")
	if err != nil {
		log.Fatal(err)
	}
	h, err := m.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}

	// The watchdog: any goroutine may watch the hold.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-h.Lost(): // another process may hold the lock by now
			stop()
		case <-wctx.Done():
		}
	}()

	done := make(chan error)
	go func(h *semaphoremutex.Hold) {
		token, err := h.FencingToken()
		if err == nil {
			err = deductStock(wctx, token)
		}
		done <- errors.Join(err, h.Release(context.WithoutCancel(ctx))) // ends this hold, even after a loss
	}(h)
	if err := <-done; err != nil {
		log.Print(err)
	}
}

// Curator's release(): any goroutine may release the Mutex without the
// hold.
func ExampleMutex_Release() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	m, err := semaphoremutex.New(client, "/shop/stock/sku-42")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- m.Release(ctx) }()
	if err := <-done; err != nil {
		log.Print(err)
	}
}

func deductStock(context.Context, int64) error { return nil }
