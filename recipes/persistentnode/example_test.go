package persistentnode_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/persistentnode"
)

// A worker announces itself with an ephemeral node that the client puts
// back after every session loss, and updates what it announces.
func ExampleNode() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	n, err := persistentnode.New(client, "/shop/workers/worker-", []byte("10.0.0.7:8080"),
		persistentnode.WithMode(framework.EphemeralSequential))
	if err != nil {
		log.Fatal(err)
	}
	n.AddListener(func(ev persistentnode.Event) { fmt.Println(ev.Type, ev.Path) })
	if err := n.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer n.Close(ctx) // deletes the node, before the client closes

	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := n.WaitForInitialCreate(wait); err != nil {
		log.Fatal(err)
	}
	p, _ := n.Path() // /shop/workers/_c_<uuid>-worker-0000000042
	fmt.Println("registered at", p)
	if err := n.SetData(ctx, []byte("10.0.0.7:8081")); err != nil {
		log.Print(err) // the Node writes it once it can
	}
}

// A node that outlives its process by at most a minute: the server deletes
// it once nobody has touched it for its TTL.
func ExampleNewTTL() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	n, err := persistentnode.NewTTL(client, "/shop/batch/running", time.Minute, []byte("job 17"))
	if err != nil {
		log.Fatal(err)
	}
	if err := n.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer n.Close(ctx)
	if err := n.WaitForInitialCreate(ctx); err != nil {
		log.Fatal(err) // framework.ErrTTLNotEnabled: the server lacks extendedTypesEnabled=true
	}
}
