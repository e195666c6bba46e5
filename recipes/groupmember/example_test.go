package groupmember_test

import (
	"context"
	"fmt"
	"log"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/recipes/groupmember"
)

// A worker joins the group of workers and lists the others, as Java
// services with Curator's GroupMember on the same path do.
func ExampleMember() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	m, err := groupmember.New(client, "/shop/workers", "worker-7", []byte("10.0.0.7:8080"))
	if err != nil {
		log.Fatal(err)
	}
	m.AddListener(func(ev cache.Event) {
		switch ev.Type {
		case cache.NodeAdded:
			fmt.Println("joined:", groupmember.IDFromPath(ev.Entry.Path))
		case cache.NodeRemoved:
			fmt.Println("left:", groupmember.IDFromPath(ev.Entry.Path))
		}
	})
	if err := m.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer m.Close(ctx) // leaves the group

	for id, payload := range m.Members() {
		fmt.Printf("%s at %s\n", id, payload)
	}
}
