package leaderlatch_test

import (
	"context"
	"fmt"
	"log"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/leaderlatch"
)

// One scheduler in the fleet runs at a time: join the election, wait to
// lead, work with the fencing token until the leadership is lost, then
// wait for the next term.
func ExampleLatch_Await() {
	ctx := context.Background()
	client, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	latch, err := leaderlatch.New(client, "/services/scheduler/leader", leaderlatch.WithID("host-a"))
	if err != nil {
		log.Fatal(err)
	}
	if err := latch.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer latch.Close(context.WithoutCancel(ctx)) // the next candidate leads once our node is gone

	for {
		lead, err := latch.Await(ctx)
		if err != nil {
			log.Fatal(err) // ctx ended, or the latch closed
		}
		token, _ := lead.FencingToken()
		work, cancel := context.WithCancel(ctx)
		go func() { // stop as soon as the leadership cannot be trusted
			select {
			case <-lead.Lost():
			case <-work.Done():
			}
			cancel()
		}()
		schedule(work, token) // the store refuses tokens lower than the last it saw
		cancel()
	}
}

// A listener hears every change of this candidate's leadership, in order,
// on its own goroutine.
func ExampleLatch_AddListener() {
	var latch *leaderlatch.Latch // from leaderlatch.New, before Start
	remove := latch.AddListener(leaderlatch.Listener{
		IsLeader:  func(l *leaderlatch.Leadership) { fmt.Println("leading with", l.Node()) },
		NotLeader: func() { fmt.Println("no longer leading") },
	})
	defer remove()
}

// Participants lists the candidates in line order, with their IDs (Java
// Curator candidates on the same path included).
func ExampleLatch_Participants() {
	var latch *leaderlatch.Latch // from leaderlatch.New
	ps, err := latch.Participants(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range ps {
		fmt.Println(p.ID, p.IsLeader)
	}
}

func schedule(ctx context.Context, token int64) { <-ctx.Done() }
