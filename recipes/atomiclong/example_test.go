package atomiclong_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/atomiclong"
	"github.com/go-curator/curator/retry"
)

// Count orders across processes, falling back to a lock under heavy
// contention.
func ExampleLong_Increment() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	policy, err := retry.NewNTimes(20, 0) // tries; the sleeps adapt to contention
	if err != nil {
		log.Fatal(err)
	}
	orders, err := atomiclong.New(client, "/shop/orders", policy,
		atomiclong.WithPromotedLock("/shop/orders-lock", time.Second, policy))
	if err != nil {
		log.Fatal(err)
	}
	res, err := orders.Increment(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if !res.Succeeded {
		log.Fatal("too much contention: try again later")
	}
	fmt.Println("order number", res.PostValue)
}

// Initialize once, then compare-and-set.
func ExampleLong_CompareAndSet() {
	ctx := context.Background()
	client, err := framework.NewClient("127.0.0.1:2181", nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	policy, _ := retry.NewNTimes(10, 0)
	stock, err := atomiclong.New(client, "/shop/stock/sku-42", policy)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := stock.Initialize(ctx, 100); err != nil {
		log.Fatal(err)
	}
	res, err := stock.CompareAndSet(ctx, 100, 99)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Succeeded, res.PreValue, res.PostValue)
}

// Hand out unique order numbers, taking them from the shared counter 100
// at a time.
func ExampleCached_Next() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	policy, err := retry.NewNTimes(20, 0)
	if err != nil {
		log.Fatal(err)
	}
	ids, err := atomiclong.New(client, "/shop/order-ids", policy)
	if err != nil {
		log.Fatal(err)
	}
	cached, err := atomiclong.NewCached(ids, 100)
	if err != nil {
		log.Fatal(err)
	}
	res, err := cached.Next(ctx) // one request per 100 calls
	if err != nil {
		log.Fatal(err) // after ErrIndeterminate the range is dropped: a gap, never a duplicate
	}
	if !res.Succeeded {
		log.Fatal("no range: try again")
	}
	fmt.Println("order", res.PreValue)
}
