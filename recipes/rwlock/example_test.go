package rwlock_test

import (
	"context"
	"log"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/rwlock"
)

// Many processes read the price list at once; a writer updates it alone.
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
	read := lock.ReadLock()
	if err := read.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	// ... read the prices; stop if <-read.Lost() closes ...
	if err := read.Release(ctx); err != nil {
		log.Print(err) // the node goes with a guaranteed delete anyway
	}
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
	write, read := lock.WriteLock(), lock.ReadLock()
	ok, err := write.TryAcquire(ctx, 10*time.Second)
	if err != nil || !ok {
		log.Fatalf("no write lock: %v", err)
	}
	token, _ := write.FencingToken()
	_ = token // ... write the prices, passing the token to the store ...

	// The read lock is granted at once to the write holder.
	if err := read.Acquire(ctx); err != nil {
		log.Fatal(err)
	}
	if err := write.Release(ctx); err != nil {
		log.Print(err)
	}
	// ... read back what was written ...
	if err := read.Release(ctx); err != nil {
		log.Print(err)
	}
}
