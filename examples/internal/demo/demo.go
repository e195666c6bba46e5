// Package demo holds what every go-curator demo shares: the -zk flag, a
// local ZooKeeper when none is given, started clients, and a Run that stops
// the local server however the demo ends.
package demo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
	_ "github.com/go-curator/curator/zktest/docker" // a demo's server may run in Docker
)

// ZK is the -zk flag: the ensemble to use. Empty starts a local server.
var ZK = flag.String("zk", "", "ZooKeeper connect string (host:port,...); empty starts a local server")

// Timeout bounds a whole demo run, local server start included.
const Timeout = 3 * time.Minute

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

// Builder returns a client builder for the demo's ensemble: a 10 s session,
// a 5 s connection timeout and exponential backoff. Demos that need another
// setting change it before Build.
func (e *Env) Builder() *framework.Builder {
	policy, err := retry.NewExponentialBackoff(100*time.Millisecond, 5)
	if err != nil {
		panic(err) // constant arguments: cannot fail
	}
	return framework.NewBuilder().ConnectString(e.Connect).SessionTimeout(10 * time.Second).
		ConnectionTimeout(5 * time.Second).RetryPolicy(policy)
}

// Client starts a client on the demo's ensemble. listener may be nil.
func (e *Env) Client(ctx context.Context, listener framework.Listener) (*framework.Client, error) {
	b := e.Builder()
	if listener != nil {
		b = b.Listener(listener)
	}
	return Start(ctx, b)
}

// Clients starts n clients, each with its own session, as n processes would
// have. The caller closes them.
func (e *Env) Clients(ctx context.Context, n int) ([]*framework.Client, error) {
	cs := make([]*framework.Client, 0, n)
	for range n {
		c, err := e.Client(ctx, nil)
		if err != nil {
			CloseAll(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// Start builds and starts a client.
func Start(ctx context.Context, b *framework.Builder) (*framework.Client, error) {
	c, err := b.Build()
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// CloseAll closes every client.
func CloseAll(cs []*framework.Client) {
	for _, c := range cs {
		c.Close()
	}
}

// Run runs a demo: it parses flags, sets up ZooKeeper, calls fn, stops the
// local server, and exits 0 if fn returned nil, or prints the error and
// exits 1. Interrupt (Ctrl-C) and Timeout cancel fn's ctx.
func Run(fn func(ctx context.Context, env *Env) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	err := run(ctx, fn)
	cancel()
	stop()
	if err != nil {
		Fatal(err)
	}
}

func run(ctx context.Context, fn func(ctx context.Context, env *Env) error) error {
	env, err := Setup(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	err = fn(ctx, env)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		err = fmt.Errorf("the demo ran past %v: %w", Timeout, err)
	}
	return err
}

// Fatal prints err and exits 1.
func Fatal(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}

// UsageWithoutHidden prints the command's flags, leaving out those with an
// empty usage (the ones a demo passes to its own worker processes). Set it
// as flag.Usage.
func UsageWithoutHidden() {
	out := flag.CommandLine.Output()
	fmt.Fprintf(out, "Usage of %s:\n", os.Args[0])
	visible := flag.NewFlagSet("", flag.ContinueOnError)
	visible.SetOutput(out)
	flag.VisitAll(func(f *flag.Flag) {
		if f.Usage != "" {
			visible.Var(f.Value, f.Name, f.Usage)
		}
	})
	visible.PrintDefaults()
}
