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
// hand the fencing token to the store, and let a watchdog goroutine stop
// the work if the lock is lost.
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
	h, err := lock.Acquire(actx)
	if err != nil {
		log.Fatal(err) // timed out; no node of ours is left behind
	}
	defer func() {
		if err := h.Release(context.WithoutCancel(ctx)); err != nil {
			log.Print(err) // the node still goes, with a guaranteed delete
		}
	}()

	// The watchdog: any goroutine may watch the hold.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-h.Lost(): // Suspended or Lost: another process may hold the lock by now
			stop()
		case <-wctx.Done():
		}
	}()

	token, err := h.FencingToken()
	if err != nil {
		log.Fatal(err)
	}
	if err := deductStock(wctx, token); err != nil { // the store rejects tokens lower than the last it saw
		log.Print(err)
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
	h, ok, err := lock.TryAcquire(ctx, 0) // try once
	if err != nil {
		log.Fatal(err)
	}
	if !ok {
		log.Print("another process is writing the report")
		return
	}
	// Reentrant on this goroutine: no I/O, the same hold (again == h),
	// and one more release is due.
	again, err := lock.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	err = errors.Join(again.Release(ctx), h.Release(ctx))
	if err != nil {
		log.Print(err)
	}
}

// A hold handed to a worker goroutine, which finishes the work and
// releases it.
func ExampleHold_Release() {
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
	h, err := lock.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan error)
	go func(h *mutex.Hold) {
		token, err := h.FencingToken()
		if err == nil {
			err = deductStock(ctx, token)
		}
		done <- errors.Join(err, h.Release(ctx)) // any goroutine may release the hold
	}(h)
	if err := <-done; err != nil {
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
	h, err := lock.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}

	// Elsewhere, an operator asks the holder to let go:
	if err := mutex.Revoke(ctx, client, h.Node()); err != nil {
		log.Fatal(err)
	}

	<-revoked
	if err := h.Release(ctx); err != nil {
		log.Print(err)
	}
}

func deductStock(context.Context, int64) error { return nil }
