package framework_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

// Build, start and close a client, as CuratorFrameworkFactory.builder() does.
func ExampleNewBuilder() {
	ctx := context.Background()
	policy, err := retry.NewExponentialBackoff(100*time.Millisecond, 10)
	if err != nil {
		log.Fatal(err)
	}
	client, err := framework.NewBuilder().
		ConnectString("127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183").
		SessionTimeout(15 * time.Second).
		ConnectionTimeout(5 * time.Second).
		RetryPolicy(policy).
		Namespace("shop").
		Build()
	if err != nil {
		log.Fatal(err) // a bad setting, named; Build does no I/O
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()
}

// A listener added before Start sees every state, the first Connected too.
func ExampleBuilder_Listener() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").
		Listener(func(s framework.ConnectionState) {
			switch s {
			case framework.Suspended:
				log.Print("connection dropped: stop trusting locks until Reconnected")
			case framework.Lost:
				log.Print("session gone: its ephemeral nodes and locks are gone")
			case framework.Reconnected:
				log.Print("connected again")
			}
		}).Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()
}

// Create a protected ephemeral sequential node under container parents,
// read it back, and delete it even if the connection drops meanwhile.
func ExampleClient_Create() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	p, err := client.Create().CreatingParentContainersIfNeeded().WithProtection().
		WithMode(framework.EphemeralSequential).ForPath(ctx, "/workers/worker-", []byte("host-7"))
	if err != nil {
		log.Fatal(err)
	}
	log.Print(p) // /workers/_c_<uuid>-worker-0000000003
	data, stat, err := client.GetData().ForPath(ctx, p)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%s, version %d", data, stat.Version)
	if err := client.Delete().Guaranteed().Quietly().ForPath(ctx, p); err != nil {
		log.Print(err) // the guaranteed delete keeps trying in the background
	}
}

// A compare-and-set on a node's version: read, compute, write at the version read.
func ExampleClient_SetData() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	data, stat, err := client.GetData().ForPath(ctx, "/config/limit")
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.SetData().WithVersion(stat.Version).ForPath(ctx, "/config/limit", append(data, '0'))
	if errors.Is(err, zk.ErrBadVersion) {
		log.Print("someone else wrote first: read again")
	} else if err != nil {
		log.Fatal(err)
	}
}

// Several operations, all or none.
func ExampleClient_Transaction() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	results, err := client.Transaction().
		Check("/orders", 4).
		Create("/orders/o-1001", []byte("paid"), framework.Persistent).
		SetData("/stock/sku-42", []byte("99"), -1).
		Commit(ctx)
	if err != nil {
		for _, r := range results {
			if r.Err != nil {
				log.Printf("%s failed: %v", r.Path, r.Err)
			}
		}
		return
	}
}

// A watch fires once; a watcher re-reads and watches again, including when
// the session that held the watch ends (zk.EventNotWatching).
func ExampleGetDataBuilder_ForPathW() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	for {
		data, _, changed, err := client.GetData().ForPathW(ctx, "/config/limit")
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("limit is %s", data)
		select {
		case <-changed: // changed, deleted, or the watch ended: read again
		case <-ctx.Done():
			return
		}
	}
}

// NewClient is CuratorFrameworkFactory.newClient: the servers and a retry
// policy, Curator's defaults for the rest.
func ExampleNewClient() {
	policy, err := retry.NewExponentialBackoff(time.Second, 3)
	if err != nil {
		log.Fatal(err)
	}
	client, err := framework.NewClient("127.0.0.1:2181", policy)
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	defer client.Close()
}
