package cache_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

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

// A data-less cache of a large directory, started as Curator's
// BUILD_INITIAL_CACHE: Start returns with the view loaded, and the
// listener hears only what changes after it.
func ExampleWithStartMode() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	jobs, err := cache.NewChildren(client, "/shop/jobs",
		cache.WithoutData(), cache.WithStartMode(cache.StartBuildInitialCache))
	if err != nil {
		log.Fatal(err)
	}
	jobs.AddListener(func(ev cache.Event) {
		if ev.Type == cache.NodeAdded {
			fmt.Println("new job", ev.Entry.Path, "version", ev.Entry.Stat.Version)
		}
	})
	if err := jobs.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer jobs.Close()
	all, _ := jobs.Entries()
	fmt.Println(len(all), "jobs waiting")
}

// A tree of services that leaves out Curator-style lock and lease
// directories and does not descend into instance nodes.
func ExampleWithSelector() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	services, err := cache.NewTree(client, "/shop/services", cache.WithSelector(cache.SelectorFuncs{
		Traverse: func(p string) bool { return !strings.Contains(p, "/instances/") },
		Accept: func(p string) bool {
			name := p[strings.LastIndex(p, "/")+1:]
			return name != "locks" && name != "leases"
		},
	}))
	if err != nil {
		log.Fatal(err)
	}
	if err := services.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer services.Close()
}
