package semaphorev2_test

import (
	"context"
	"log"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/recipes/sharedcount"
)

// At most 4 workers, across every process, call the rate-limited API.
func ExampleSemaphore_Acquire() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	sem, err := semaphorev2.New(client, "/shop/payment-api", 4)
	if err != nil {
		log.Fatal(err)
	}
	lease, err := sem.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release(context.WithoutCancel(ctx))

	// The watchdog: any goroutine may watch the lease.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-lease.Lost(): // the session is in doubt: stop using the API
			stop()
		case <-wctx.Done():
		}
	}()
	token, err := lease.FencingToken()
	if err != nil {
		log.Fatal(err)
	}
	callAPI(wctx, token)
}

// Wait up to a second for 2 leases; give up quietly if they do not come.
func ExampleSemaphore_TryAcquireN() {
	ctx := context.Background()
	var client *framework.Client // started elsewhere
	sem, err := semaphorev2.New(client, "/shop/batch-slots", 10)
	if err != nil {
		log.Fatal(err)
	}
	leases, ok, err := sem.TryAcquireN(ctx, 2, time.Second)
	switch {
	case err != nil:
		log.Fatal(err)
	case !ok:
		log.Print("busy; try later")
		return
	}
	defer sem.ReturnAll(ctx, leases)
}

// The maximum lives in ZooKeeper, so operators can change it for every
// process at once.
func ExampleNewWithCount() {
	ctx := context.Background()
	var client *framework.Client // started elsewhere
	count, err := sharedcount.New(client, "/shop/payment-api-max", 4)
	if err != nil {
		log.Fatal(err)
	}
	if err := count.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer count.Close()
	sem, err := semaphorev2.NewWithCount(client, "/shop/payment-api", count)
	if err != nil {
		log.Fatal(err)
	}
	lease, err := sem.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Close(ctx)
}

func callAPI(ctx context.Context, token int64) {}
