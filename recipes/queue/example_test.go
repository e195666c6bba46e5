package queue_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/queue"
)

var client *framework.Client // a started client

// A lock-safe work queue: an item is deleted only once its consumer
// returned nil; one whose consumer dies goes to another.
func ExampleNew() {
	ctx := context.Background()
	q, err := queue.New(client, "/jobs",
		queue.WithLockPath("/jobs-locks"),
		queue.WithConsumer(func(ctx context.Context, it queue.Item) error {
			// it.Token is unique to the item, and the same on redelivery:
			// a store can refuse a duplicate by it.
			fmt.Printf("job %s (token %d.%d)\n", it.Data, it.Token.Zxid, it.Token.Index)
			return nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer q.Close(ctx)
	if err := q.Put(ctx, []byte("resize photo 7")); errors.Is(err, framework.ErrIndeterminate) {
		// The reply was lost: the job may or may not be queued.
	}
}

// Consuming from a channel: the queue takes the next item only once the
// last was received and, lock-safe, Done.
func ExampleQueue_Items() {
	ctx := context.Background()
	q, err := queue.New(client, "/jobs", queue.WithLockPath("/jobs-locks"))
	if err != nil {
		log.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer q.Close(ctx)
	for d := range q.Items() {
		err := handle(d.Context(), d.Data)
		d.Done(err) // nil deletes it; an error requeues it (WithErrorMode)
	}
}

func handle(context.Context, []byte) error { return nil }

func ExampleDelayQueue_Put() {
	ctx := context.Background()
	q, err := queue.NewDelay(client, "/reminders")
	if err != nil {
		log.Fatal(err)
	}
	// Delivered no sooner than in an hour, by the consumers' clocks.
	if err := q.Put(ctx, []byte("call back"), time.Now().Add(time.Hour)); err != nil {
		log.Fatal(err)
	}
}

func ExampleIDQueue_Remove() {
	ctx := context.Background()
	q, err := queue.NewID(client, "/orders")
	if err != nil {
		log.Fatal(err)
	}
	if err := q.Put(ctx, []byte("ship"), "order-17"); err != nil {
		log.Fatal(err)
	}
	n, err := q.Remove(ctx, "order-17") // the order was cancelled
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("removed", n)
}

func ExampleSimpleQueue_Take() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q, err := queue.NewSimple(client, "/simple")
	if err != nil {
		log.Fatal(err)
	}
	b, err := q.Take(ctx) // waits for an item
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", b)
}
