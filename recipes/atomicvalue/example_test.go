package atomicvalue_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/atomicvalue"
	"github.com/go-curator/curator/retry"
)

// Move a shared configuration from one version to the next, only if no
// one changed it since it was read.
func ExampleValue_CompareAndSet() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	policy, err := retry.NewNTimes(10, 0)
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := atomicvalue.New(client, "/config/routes", policy)
	if err != nil {
		log.Fatal(err)
	}
	cur, err := cfg.Get(ctx)
	if err != nil {
		log.Fatal(err)
	}
	next := append(bytes.Clone(cur.PreValue), []byte(";eu-west")...)
	res, err := cfg.CompareAndSet(ctx, cur.PreValue, next)
	switch {
	case errors.Is(err, atomicvalue.ErrIndeterminate):
		log.Print("unknown: read again and decide")
	case err != nil:
		log.Fatal(err)
	case !res.Succeeded:
		log.Print("changed since read (or missing: Initialize first)")
	default:
		fmt.Printf("%s -> %s\n", res.PreValue, res.PostValue)
	}
}

// Count visits in Curator's DistributedAtomicInteger format.
func ExampleInteger_Increment() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	policy, err := retry.NewNTimes(10, 0)
	if err != nil {
		log.Fatal(err)
	}
	visits, err := atomicvalue.NewInteger(client, "/shop/visits", policy)
	if err != nil {
		log.Fatal(err)
	}
	res, err := visits.Increment(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Succeeded, res.PostValue)
}
