// Command curatorctl inspects and operates go-curator and Apache Curator
// recipes on a ZooKeeper ensemble: what an on-call engineer needs without
// writing Go. The wire layout is Curator's, so it sees Java's nodes too.
//
//	curatorctl [flags] ls PATH
//	curatorctl [flags] lock holders PATH
//	curatorctl [flags] lock PATH -- CMD [ARGS...]
//	curatorctl [flags] lease ls PATH
//	curatorctl [flags] count get PATH
//	curatorctl [flags] count set PATH N
//	curatorctl [flags] barrier ls PATH
//	curatorctl [flags] revoke NODE
//	curatorctl [flags] services [--base PATH] [NAME]
//
// Exit status: 0 on success, 2 on bad usage, 3 when a lock held for a
// command was lost (the command was killed), the command's own status for
// lock PATH -- CMD, and 1 for any other error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit statuses.
const (
	exitError = 1
	exitUsage = 2
	exitLost  = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks a usage error: exit status 2.
var errUsage = errors.New("usage")

// exitCode carries a status to exit with.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// run runs one command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g, rest, err := parseGlobal(args, stderr)
	if err != nil {
		if errors.Is(err, errHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "curatorctl: %v\n", err)
		return exitUsage
	}
	err = dispatch(ctx, g, rest, stdout, stderr)
	var code exitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "curatorctl: %v\n", err)
		usage(stderr)
		return exitUsage
	case errors.Is(err, errLost):
		fmt.Fprintf(stderr, "curatorctl: %v\n", err)
		return exitLost
	}
	fmt.Fprintf(stderr, "curatorctl: %v\n", err)
	return exitError
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: curatorctl [flags] COMMAND
commands:
  ls PATH                   the tree under PATH: mode, owner session, age
  lock holders PATH         holders and waiters in queue order (mutex, rwlock, semaphore, leader)
  lock PATH -- CMD [ARGS]   run CMD while holding the mutex at PATH
  lease ls PATH             a semaphore's leases
  count get PATH            a shared count (4 bytes) or atomic long (8 bytes)
  count set PATH N          set a shared count
  barrier ls PATH           a barrier's node and members
  revoke NODE               ask a lock node's holder to release (Curator's revocation)
  services [--base P] [NAME]  registered service instances (curator-x-discovery; base /services)
flags come before the command: curatorctl -h lists them
`)
}

// dispatch runs the command in args.
func dispatch(ctx context.Context, g *global, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: no command", errUsage)
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "ls":
		return withPath(args, 1, func(a []string) error { return cmdLs(ctx, g, a[0], stdout) })
	case "lock":
		if len(args) > 0 && args[0] == "holders" {
			return withPath(args[1:], 1, func(a []string) error { return cmdHolders(ctx, g, a[0], stdout) })
		}
		return cmdLock(ctx, g, args, stdout, stderr)
	case "lease":
		if len(args) == 0 || args[0] != "ls" {
			return fmt.Errorf("%w: lease: want \"lease ls PATH\"", errUsage)
		}
		return withPath(args[1:], 1, func(a []string) error { return cmdLeases(ctx, g, a[0], stdout) })
	case "count":
		switch {
		case len(args) > 0 && args[0] == "get":
			return withPath(args[1:], 1, func(a []string) error { return cmdCountGet(ctx, g, a[0], stdout) })
		case len(args) > 0 && args[0] == "set":
			return withPath(args[1:], 2, func(a []string) error { return cmdCountSet(ctx, g, a[0], a[1], stdout) })
		}
		return fmt.Errorf("%w: count: want \"count get PATH\" or \"count set PATH N\"", errUsage)
	case "barrier":
		if len(args) == 0 || args[0] != "ls" {
			return fmt.Errorf("%w: barrier: want \"barrier ls PATH\"", errUsage)
		}
		return withPath(args[1:], 1, func(a []string) error { return cmdBarrier(ctx, g, a[0], stdout) })
	case "revoke":
		return withPath(args, 1, func(a []string) error { return cmdRevoke(ctx, g, a[0], stdout) })
	case "services":
		return cmdServices(ctx, g, args, stdout)
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, cmd)
}

// withPath checks that args has exactly n arguments, the first a path.
func withPath(args []string, n int, f func([]string) error) error {
	if len(args) != n {
		return fmt.Errorf("%w: want %d argument(s), got %d", errUsage, n, len(args))
	}
	return f(args)
}
