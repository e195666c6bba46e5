// Command zkserver runs a local ZooKeeper server or ensemble until it is
// interrupted, and prints its connect string on the first line of stdout.
// It serves demos, and tests run against an external server:
//
//	go run ./zktest/cmd/zkserver -n 3 &
//	ZK_TEST_CONNECT=127.0.0.1:port go test ./integration/
//
// The servers come from the local ZooKeeper install (see package zktest);
// with -any and -n 1, ZK_TEST_CONNECT and Docker are tried first.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-curator/curator/zktest"
)

func main() {
	n := flag.Int("n", 1, "number of servers: 1 runs standalone, more form an ensemble")
	anySource := flag.Bool("any", false, "take the first source that works, as tests do, instead of the local install")
	flag.Parse()
	if err := run(*n, *anySource); err != nil {
		fmt.Fprintln(os.Stderr, "zkserver:", err)
		os.Exit(1)
	}
}

func run(n int, anySource bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := zktest.StartLocal
	if anySource {
		start = zktest.StartAny
	}
	began := time.Now()
	c, err := start(ctx, n)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Println(c.ConnectString())
	fmt.Fprintf(os.Stderr, "zkserver: %v serving after %v; interrupt to stop\n", c, time.Since(began).Round(time.Millisecond))
	for _, s := range c.Servers() {
		mode, _ := s.Mode()
		fmt.Fprintf(os.Stderr, "zkserver: %v %s\n", s, mode)
	}
	<-ctx.Done()
	return c.Close()
}
