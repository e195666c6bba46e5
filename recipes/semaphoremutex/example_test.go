package semaphoremutex_test

import (
	"context"
	"log"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/semaphoremutex"
)

// One goroutine takes the lock, another finishes the work and releases it.
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
	if err := m.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	token, _ := m.FencingToken()
	done := make(chan error)
	go func() {
		deductStock(token)
		done <- m.Release(ctx) // any goroutine may release
	}()
	if err := <-done; err != nil {
		log.Print(err)
	}
}

func deductStock(token int64) {}

// A hold handed to a worker goroutine, which releases exactly that hold.
func ExampleMutex_AcquireHold() {
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
	h, err := m.AcquireHold(ctx)
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan error)
	go func(h *semaphoremutex.Hold) {
		token, err := h.FencingToken()
		if err == nil {
			select {
			case <-h.Lost(): // the hold can no longer be trusted: do not write
			default:
				deductStock(token)
			}
		}
		done <- h.Release(ctx) // ends this hold, even after a loss
	}(h)
	if err := <-done; err != nil {
		log.Print(err)
	}
}
