package barrier_test

import (
	"context"
	"log"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/barrier"
)

// A coordinator holds the workers until the batch is loaded.
func ExampleBarrier_Wait() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	b, err := barrier.New(client, "/jobs/nightly/loaded")
	if err != nil {
		log.Fatal(err)
	}
	// The coordinator, before the workers start:
	if err := b.Set(ctx); err != nil {
		log.Fatal(err)
	}

	// Each worker waits, up to a minute:
	done := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		done <- b.Wait(wctx) // an error: timed out, or the connection was lost for good
	}()

	// The coordinator, once the batch is loaded, releases every worker:
	if err := b.Remove(ctx); err != nil {
		log.Fatal(err)
	}
	if err := <-done; err != nil {
		log.Fatal(err)
	}
}
