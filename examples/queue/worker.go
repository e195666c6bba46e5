package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/recipes/queue"
	"github.com/go-zookeeper/zk"
)

// worker drains the queue until its stdin closes, printing "READY" once
// it consumes, then "DONE <job> <token>" for each job it finished. With
// die it exits on its first job, without finishing it, after printing
// "DIED <job> <token>".
func worker(ctx context.Context, connect string, die bool) error {
	env := &demo.Env{Connect: connect}
	client, err := demo.Start(ctx, env.Builder().SessionTimeout(workerSession))
	if err != nil {
		return err
	}
	defer client.Close()
	q, err := queue.New(client, queuePath, queue.WithLockPath(lockPath),
		queue.WithConsumer(func(ctx context.Context, it queue.Item) error {
			token := fmt.Sprintf("%d:%d", it.Token.Zxid, it.Token.Index)
			if die {
				fmt.Printf("DIED %s %s\n", it.Data, token)
				os.Exit(3) // a crash: no cleanup, the session stays until it expires
			}
			// The work: a store that kept tokens would refuse a second
			// write of this one.
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
				return context.Cause(ctx)
			}
			fmt.Printf("DONE %s %s\n", it.Data, token)
			return nil
		}))
	if err != nil {
		return err
	}
	if err := q.Start(ctx); err != nil {
		return err
	}
	fmt.Println("READY")
	io.Copy(io.Discard, os.Stdin) // until the parent closes it
	return q.Close(ctx)
}

func isNoNode(err error) bool { return errors.Is(err, zk.ErrNoNode) }
