package leaderselector_test

import (
	"context"
	"fmt"
	"log"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/leaderselector"
)

// One billing worker in the fleet runs at a time. The function runs while
// this candidate leads; its ctx is cancelled when the leadership is lost,
// and with WithAutoRequeue the candidate queues again when it returns.
func ExampleNew() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	s, err := leaderselector.New(client, "/services/billing/leader",
		func(ctx context.Context, l *leaderselector.Leadership) error {
			token, err := l.FencingToken()
			if err != nil {
				return err
			}
			return bill(ctx, token) // the store refuses tokens lower than the last it saw
		},
		leaderselector.WithID("host-a"), leaderselector.WithAutoRequeue())
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer s.Close(context.WithoutCancel(ctx))
	<-ctx.Done()
}

// The etcd-shaped API: campaign, lead while the leadership lasts, resign.
func ExampleElection_Campaign() {
	var client *framework.Client // started
	ctx := context.Background()
	e, err := leaderselector.NewElection(client, "/services/billing/leader", leaderselector.WithID("host-a"))
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close(context.WithoutCancel(ctx))

	lead, err := e.Campaign(ctx) // a cancelled Campaign leaves no node behind
	if err != nil {
		log.Fatal(err)
	}
	token, err := lead.FencingToken()
	if err != nil {
		log.Fatal(err)
	}
	work, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-lead.Lost(): // stop as soon as the leadership cannot be trusted
		case <-work.Done():
		}
		cancel()
	}()
	_ = bill(work, token)
	cancel()
	if err := e.Resign(ctx); err != nil {
		log.Print(err) // the node still goes, with a guaranteed delete
	}
}

// Observe follows the leader as it changes, until ctx ends.
func ExampleElection_Observe() {
	var e *leaderselector.Election // from NewElection
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for leader := range e.Observe(ctx) {
		fmt.Println("the leader is now", leader.ID)
	}
}

func bill(ctx context.Context, token int64) error { <-ctx.Done(); return nil }
