package multilock_test

import (
	"context"
	"log"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/multilock"
)

// Move stock between two warehouses while holding both of their locks.
// Every process lists the paths in the same order, so none deadlocks.
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
	ok, err := both.TryAcquire(ctx, 5*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	if !ok {
		log.Print("busy; try later") // neither lock is held now
		return
	}
	// ... move the stock ...
	if err := both.Release(ctx); err != nil {
		log.Print(err) // every lock was still released as far as possible
	}
}
