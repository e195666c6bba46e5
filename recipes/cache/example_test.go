package cache_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
)

// A configuration tree followed by one process: the listener prints each
// change once, and a session change prints only what differs, then a
// resync line.
func ExampleTree() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	config, err := cache.NewTree(client, "/shop/config", cache.WithMaxDepth(2))
	if err != nil {
		log.Fatal(err)
	}
	remove := config.AddListener(func(ev cache.Event) {
		switch ev.Type {
		case cache.NodeAdded, cache.NodeUpdated:
			fmt.Printf("%s = %s (version %d)\n", ev.Entry.Path, ev.Entry.Data, ev.Entry.Stat.Version)
		case cache.NodeRemoved:
			fmt.Printf("%s removed\n", ev.Entry.Path)
		case cache.Resynced:
			fmt.Println("resynced after a session change")
		}
	})
	defer remove()
	if err := config.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer config.Close()

	e, err := config.Get("/shop/config/db/url")
	switch {
	case errors.Is(err, cache.ErrNoNode):
		fmt.Println("no database configured")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Println("database:", string(e.Data))
	}
}

// The members of a group: the children of one node, with their data.
func ExampleChildren() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	members, err := cache.NewChildren(client, "/shop/members")
	if err != nil {
		log.Fatal(err)
	}
	if err := members.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer members.Close()
	all, err := members.Entries()
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range all {
		fmt.Println(m.Path, string(m.Data))
	}
}

// A feature flag: one node, which may not exist.
func ExampleNode_Current() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	flag, err := cache.NewNode(client, "/shop/flags/new-checkout")
	if err != nil {
		log.Fatal(err)
	}
	if err := flag.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer flag.Close()
	e, err := flag.Current()
	fmt.Println(err == nil && string(e.Data) == "on")
}
