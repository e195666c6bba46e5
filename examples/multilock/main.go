// Command multilock demonstrates recipes/multilock, Curator's
// InterProcessMultiLock: a transfer between two warehouses holds both of
// their locks or neither. While another session holds one of them, the
// multi lock gives up and releases the one it had taken.
//
//	go run ./examples/multilock            # starts a local ZooKeeper
//	go run ./examples/multilock -zk host:port
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/recipes/multilock"
	"github.com/go-curator/curator/recipes/mutex"
)

const (
	berlin = "/demo/multilock/berlin"
	lyon   = "/demo/multilock/lyon"
)

func main() { demo.Run(run) }

func run(ctx context.Context, env *demo.Env) error {
	clients, err := env.Clients(ctx, 2)
	if err != nil {
		return err
	}
	defer demo.CloseAll(clients)

	transfer, err := multilock.NewFromPaths(clients[0], []string{berlin, lyon})
	if err != nil {
		return err
	}
	audit, err := mutex.New(clients[1], lyon)
	if err != nil {
		return err
	}
	auditHold, err := audit.Acquire(ctx)
	if err != nil {
		return err
	}
	fmt.Println("an audit (another session) holds the lyon lock")

	_, ok, err := transfer.TryAcquire(ctx, 300*time.Millisecond)
	if err != nil {
		return err
	}
	fmt.Printf("the transfer tries for 300ms to lock berlin, then lyon: acquired=%v\n", ok)
	berlinLock, err := mutex.New(clients[1], berlin)
	if err != nil {
		return err
	}
	nodes, err := berlinLock.Participants(ctx)
	if err != nil {
		return err
	}
	fmt.Println("it took berlin, missed lyon, and released berlin again: no node left under berlin")
	if len(nodes) != 0 {
		return fmt.Errorf("the failed multi lock left %v", nodes)
	}

	if err := auditHold.Release(ctx); err != nil {
		return err
	}
	fmt.Println("the audit releases lyon")
	h, err := transfer.Acquire(ctx)
	if err != nil {
		return err
	}
	tokens, err := h.FencingTokens()
	if err != nil {
		return err
	}
	fmt.Printf("the transfer holds berlin and lyon (fencing tokens %v); it moves the stock\n", tokens)
	_, ok, err = berlinLock.TryAcquire(ctx, 0)
	if err != nil {
		return err
	}
	fmt.Printf("meanwhile another session tries berlin once: acquired=%v\n", ok)
	if err := h.Release(ctx); err != nil {
		return err
	}
	fmt.Println("the transfer releases both, lyon first; done")
	return nil
}
