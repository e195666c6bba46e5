// Command client is go-curator's smallest demo: it starts a client, prints
// its connection states, writes and reads a node, and closes.
//
//	go run ./examples/client            # starts a local ZooKeeper
//	go run ./examples/client -zk host:port
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/framework"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env, err := demo.Setup(ctx)
	if err != nil {
		demo.Fatal(err)
	}
	defer env.Close()

	states := make(chan framework.ConnectionState, 16)
	c, err := env.Client(ctx, func(s framework.ConnectionState) { states <- s })
	if err != nil {
		demo.Fatal(err)
	}
	fmt.Printf("connection state: %v (session 0x%x)\n", <-states, c.SessionID())

	path, err := c.Create().CreatingParentContainersIfNeeded().WithProtection().
		WithMode(framework.EphemeralSequential).ForPath(ctx, "/demo/client/node-", []byte("hello"))
	if err != nil {
		demo.Fatal(err)
	}
	data, stat, err := c.GetData().ForPath(ctx, path)
	if err != nil {
		demo.Fatal(err)
	}
	fmt.Printf("created %s: %q (ephemeral owner 0x%x)\n", path, data, stat.EphemeralOwner)
	if err := c.Delete().Guaranteed().ForPath(ctx, path); err != nil {
		demo.Fatal(err)
	}
	fmt.Println("deleted it; closing")
	c.Close()
	fmt.Println("done")
}
