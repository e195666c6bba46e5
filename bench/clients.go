package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

// sessionTimeout is every client's session timeout, Go, Java and Python.
const sessionTimeout = 15 * time.Second

// newCurator starts a go-curator client with the retry policy the Java peer
// uses too: exponential backoff from 100 ms, 10 retries.
func newCurator(ctx context.Context, connect string) (*framework.Client, error) {
	c, err := newCuratorUnstarted(connect)
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// newCuratorUnstarted builds, without I/O, the client newCurator starts.
func newCuratorUnstarted(connect string) (*framework.Client, error) {
	policy, err := retry.NewExponentialBackoff(100*time.Millisecond, 10)
	if err != nil {
		return nil, err
	}
	return framework.NewBuilder().ConnectString(connect).SessionTimeout(sessionTimeout).
		ConnectionTimeout(sessionTimeout).RetryPolicy(policy).Build()
}

// newCurators starts n go-curator clients, each its own session. On error
// the ones already started are closed.
func newCurators(ctx context.Context, connect string, n int) ([]*framework.Client, error) {
	var cs []*framework.Client
	for range n {
		c, err := newCurator(ctx, connect)
		if err != nil {
			closeCurators(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func closeCurators(cs []*framework.Client) {
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() { c.Close() })
	}
	wg.Wait()
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// newConn opens a bare go-zookeeper connection and waits for its session.
func newConn(ctx context.Context, connect string) (*zk.Conn, error) {
	conn, events, err := zk.Connect(strings.Split(connect, ","), sessionTimeout,
		zk.WithLogger(quietLogger{}), zk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				// Drain the event channel in the background: go-zookeeper
				// drops events when its 6 slots are full, but a drained
				// channel keeps its logs quiet.
				go func() {
					for range events {
					}
				}()
				return conn, nil
			}
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("connect %s: %w", connect, ctx.Err())
		}
	}
}

// newConns opens n bare connections, each its own session.
func newConns(ctx context.Context, connect string, n int) ([]*zk.Conn, error) {
	var cs []*zk.Conn
	for range n {
		c, err := newConn(ctx, connect)
		if err != nil {
			closeConns(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func closeConns(cs []*zk.Conn) {
	for _, c := range cs {
		c.Close()
	}
}

// ensurePath creates p and its ancestors as persistent nodes.
func ensurePath(conn *zk.Conn, p string) error {
	var cur string
	for _, seg := range strings.Split(strings.Trim(p, "/"), "/") {
		cur += "/" + seg
		_, err := conn.Create(cur, nil, 0, zk.WorldACL(zk.PermAll))
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", cur, err)
		}
	}
	return nil
}
