package sharedcount_test

import (
	"context"
	"fmt"
	"log"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/sharedcount"
)

// A count shared by every worker: each one follows it, and one raises it
// with a compare-and-set loop.
func ExampleCount_TrySetCount() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	workers, err := sharedcount.New(client, "/shop/max-workers", 4)
	if err != nil {
		log.Fatal(err)
	}
	remove := workers.AddListener(sharedcount.Listener[int32]{
		Changed:      func(v sharedcount.VersionedValue[int32]) { fmt.Println("max workers:", v.Value) },
		StateChanged: func(s framework.ConnectionState) { fmt.Println("connection:", s) },
	})
	defer remove()
	if err := workers.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer workers.Close()

	for {
		prev := workers.VersionedValue()
		ok, err := workers.TrySetCount(ctx, prev, prev.Value+1)
		if err != nil {
			log.Fatal(err)
		}
		if ok {
			break
		}
		// Another worker wrote first; the cache now holds its value.
	}
}

// A shared configuration blob.
func ExampleValue() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	cfg, err := sharedcount.NewValue(client, "/shop/config", []byte(`{"mode":"normal"}`))
	if err != nil {
		log.Fatal(err)
	}
	if err := cfg.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer cfg.Close()
	fmt.Printf("%s\n", cfg.Value())
	if err := cfg.SetValue(ctx, []byte(`{"mode":"sale"}`)); err != nil {
		log.Fatal(err)
	}
}
