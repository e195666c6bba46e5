package doublebarrier_test

import (
	"context"
	"log"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/doublebarrier"
)

// Each of three workers runs this: they start the batch together and
// finish it together.
func ExampleDoubleBarrier_Enter() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	b, err := doublebarrier.New(client, "/jobs/nightly/workers", 3)
	if err != nil {
		log.Fatal(err)
	}
	ectx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := b.Enter(ectx); err != nil {
		log.Fatal(err) // not enough workers in time; our member node is gone
	}

	// ... the work, while every worker is inside ...

	if err := b.Leave(ctx); err != nil {
		log.Fatal(err)
	}
}
