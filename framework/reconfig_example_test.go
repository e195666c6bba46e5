package framework_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/go-curator/curator/framework"
)

// Add a server to a running ensemble and remove another, only from the
// configuration just read: a concurrent change makes it fail with
// ErrBadVersion instead of overwriting it. The client must be allowed to
// reconfigure (here the servers' super user).
func ExampleClient_Reconfig() {
	ctx := context.Background()
	client, err := framework.NewBuilder().
		ConnectString("10.0.0.1:2181,10.0.0.2:2181,10.0.0.3:2181").
		Authorization("digest", []byte("super:secret")).
		Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	cfg, _, err := client.GetConfig().ForEnsemble(ctx)
	if err != nil {
		log.Fatal(err)
	}
	next, err := client.Reconfig().
		Joining("server.4=10.0.0.4:2888:3888:participant;10.0.0.4:2181").
		Leaving(1).
		FromConfig(cfg.Version).
		ForEnsemble(ctx)
	switch {
	case errors.Is(err, framework.ErrBadVersion):
		log.Fatal("the configuration changed meanwhile: read it again")
	case err != nil:
		log.Fatal(err)
	}
	for _, m := range next.Members {
		fmt.Println(m.ID, m.Role, m.ClientAddr)
	}
	// The ensemble tracker (on: three servers) moves the client to the
	// new members when its connection next breaks.
}
