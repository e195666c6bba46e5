// Package demo holds what every go-curator demo shares: the -zk flag, a
// local ZooKeeper when none is given, and a started client.
package demo

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/zktest"
	"github.com/go-curator/curator/retry"
)

// ZK is the -zk flag: the ensemble to use. Empty starts a local server.
var ZK = flag.String("zk", "", "ZooKeeper connect string (host:port,...); empty starts a local server")

// Env is a running demo's ZooKeeper.
type Env struct {
	Connect string
	cluster *zktest.Cluster
}

// Setup parses flags and returns the ensemble to use, starting a local
// ZooKeeper (Debian's package, or Docker) when -zk is not given.
func Setup(ctx context.Context) (*Env, error) {
	if !flag.Parsed() {
		flag.Parse()
	}
	if *ZK != "" {
		return &Env{Connect: *ZK}, nil
	}
	if s := os.Getenv("ZK_DEMO_CONNECT"); s != "" {
		return &Env{Connect: s}, nil
	}
	fmt.Println("starting a local ZooKeeper (use -zk host:port for your own)...")
	c, err := zktest.StartAny(ctx, 1)
	if err != nil {
		return nil, fmt.Errorf("no -zk given and no local ZooKeeper could start: %w", err)
	}
	return &Env{Connect: c.ConnectString(), cluster: c}, nil
}

// Close stops the local ZooKeeper, if Setup started one.
func (e *Env) Close() {
	if e.cluster != nil {
		e.cluster.Close()
	}
}

// Client starts a client on the demo's ensemble. listener may be nil.
func (e *Env) Client(ctx context.Context, listener framework.Listener) (*framework.Client, error) {
	policy, err := retry.NewExponentialBackoff(100*time.Millisecond, 5)
	if err != nil {
		return nil, err
	}
	b := framework.NewBuilder().ConnectString(e.Connect).SessionTimeout(10 * time.Second).
		ConnectionTimeout(5 * time.Second).RetryPolicy(policy)
	if listener != nil {
		b = b.Listener(listener)
	}
	c, err := b.Build()
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Fatal prints err and exits 1.
func Fatal(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}
