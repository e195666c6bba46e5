// Command curatorctl inspects and operates go-curator and Apache Curator
// recipes on a ZooKeeper ensemble: what an on-call engineer needs without
// writing Go. The wire layout is Curator's, so it sees Java's nodes too.
//
//	curatorctl ls PATH [flags]
//	curatorctl lock holders PATH [flags]
//	curatorctl lock PATH [flags] -- CMD [ARGS...]
//	curatorctl lease ls PATH [flags]
//	curatorctl count get PATH [flags]
//	curatorctl count set PATH N [flags]
//	curatorctl barrier ls PATH [flags]
//	curatorctl revoke NODE [flags]
//	curatorctl services [NAME] [--base PATH] [flags]
//
// Flags may stand anywhere before "--"; -h prints the usage and the flags.
//
// Credentials (ZooKeeper's addauth) come from the first of: --auth
// scheme:credential; --auth-file FILE, one scheme:credential a line (blank
// lines and lines starting with # skipped); the environment variable
// CURATORCTL_AUTH, in --auth's form. --auth is visible to every local user
// in the process list; the file and the variable are not. The command that
// lock PATH -- CMD runs does not inherit CURATORCTL_AUTH.
//
// A server that refuses the connection is a definite answer: when every
// server of --server has refused, curatorctl fails at once. A server that
// accepts but is slow is waited for, up to --timeout.
//
// Exit status: 0 on success, 2 on bad usage, 1 for any other error, and
// for lock PATH -- CMD the command's own status (128+n if a signal n
// ended it), 127 if CMD is not found and 126 if it is found but cannot
// run (as timeout(1) and the shells), or 75 (EX_TEMPFAIL of sysexits.h) if the lock was lost while
// it ran: the command got SIGTERM (SIGKILL after --grace), and curatorctl
// exits once it has ended, waiting at most 2 s for the release. The
// command leads a process group of its own, and the signals go to the
// whole group, as timeout(1)'s do, except when curatorctl runs in the
// foreground of a terminal (then the command shares its job's group, and
// can read the terminal).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

// Exit statuses.
const (
	exitError = 1
	exitUsage = 2
	// exitLost is lock PATH -- CMD's status when the hold was lost and
	// CMD stopped: sysexits.h's EX_TEMPFAIL ("temporary failure; the
	// request should be reattempted later"). A command does not produce
	// it by accident, as it does 1 and 2, 126 and 127 (the shell's), 124
	// (timeout's), 128+n (killed by signal n) or 255 (exit(-1)); one that
	// returns it on purpose means "retry later" too.
	exitLost = 75
	// exitCannotRun and exitNotFound are lock PATH -- CMD's statuses when
	// CMD cannot run, or is not found: the shell's and timeout(1)'s.
	exitCannotRun = 126
	exitNotFound  = 127
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first signal stops gracefully; a second one has its default
	// effect, ending curatorctl at once.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks a usage error: exit status 2.
var errUsage = errors.New("usage")

// exitCode carries a status to exit with.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// statusError is an error that run prints, then exits with code.
type statusError struct {
	code int
	err  error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// run runs one command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	g, rest, err := parseArgs(args, stdout)
	if err == nil {
		err = dispatch(ctx, g, rest, stdout, stderr)
	}
	var code exitCode
	var failed *statusError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, &code):
		return int(code)
	case errors.As(err, &failed):
		fmt.Fprintf(stderr, "curatorctl: %v\n", failed.err)
		return failed.code
	case errors.Is(err, errNoCommand):
		usage(stderr)
		return exitUsage
	case errors.Is(err, errUsage):
		// One line, as a usage error should be: the whole usage is -h's.
		fmt.Fprintf(stderr, "curatorctl: %v (curatorctl -h for help)\n", err)
		return exitUsage
	case errors.Is(err, errLost):
		fmt.Fprintf(stderr, "curatorctl: %v\n", err)
		return exitLost
	}
	fmt.Fprintf(stderr, "curatorctl: %v\n", err)
	return exitError
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: curatorctl COMMAND [flags]
commands:
  ls PATH                   the tree under PATH: mode, owner session, age (none for /: no creation time);
                            ZooKeeper reports container and TTL nodes to clients as persistent
  lock holders PATH         holders and waiters in queue order (mutex, rwlock, semaphore, leader)
  lock PATH -- CMD [ARGS]   run CMD while holding the mutex at PATH
  lease ls PATH             a semaphore's leases
  count get PATH            a shared count (4 bytes) or atomic long (8 bytes)
  count set PATH N          set a shared count
  barrier ls PATH           a barrier's node and members
  revoke NODE               ask a lock node's holder to release (Curator's revocation)
  services [NAME]           registered service instances (curator-x-discovery; --base, default /services)
flags go anywhere before --; curatorctl -h lists them
credentials (addauth), the first given of:
  --auth scheme:credential  e.g. digest:user:password; every local user sees it in the process list
  --auth-file FILE          one scheme:credential a line; blank lines and # lines skipped
  $`+authEnv+`          as --auth; CMD of lock PATH -- CMD does not inherit it
exit status: 0 done, 1 error, 2 bad usage; lock PATH -- CMD: CMD's status
  (128+n if signal n ended it), 127 CMD not found, 126 CMD cannot run,
  or `+strconv.Itoa(exitLost)+` (EX_TEMPFAIL) if the lock was lost and CMD stopped
when every server of --server refuses the connection, curatorctl fails at once, not after --timeout
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
		return withPath("ls PATH", args, 1, func(a []string) error { return cmdLs(ctx, g, a[0], stdout) })
	case "lock":
		if len(args) > 0 && args[0] == "holders" {
			return withPath("lock holders PATH", args[1:], 1, func(a []string) error { return cmdHolders(ctx, g, a[0], stdout) })
		}
		return cmdLock(ctx, g, args, stdout, stderr)
	case "lease":
		if len(args) == 0 || args[0] != "ls" {
			return fmt.Errorf("%w: lease: want \"lease ls PATH\"", errUsage)
		}
		return withPath("lease ls PATH", args[1:], 1, func(a []string) error { return cmdLeases(ctx, g, a[0], stdout) })
	case "count":
		switch {
		case len(args) > 0 && args[0] == "get":
			return withPath("count get PATH", args[1:], 1, func(a []string) error { return cmdCountGet(ctx, g, a[0], stdout) })
		case len(args) > 0 && args[0] == "set":
			return withPath("count set PATH N", args[1:], 2, func(a []string) error { return cmdCountSet(ctx, g, a[0], a[1], stdout) })
		}
		return fmt.Errorf("%w: count: want \"count get PATH\" or \"count set PATH N\"", errUsage)
	case "barrier":
		if len(args) == 0 || args[0] != "ls" {
			return fmt.Errorf("%w: barrier: want \"barrier ls PATH\"", errUsage)
		}
		return withPath("barrier ls PATH", args[1:], 1, func(a []string) error { return cmdBarrier(ctx, g, a[0], stdout) })
	case "revoke":
		return withPath("revoke NODE", args, 1, func(a []string) error { return cmdRevoke(ctx, g, a[0], stdout) })
	case "services":
		return cmdServices(ctx, g, args, stdout)
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, cmd)
}

// withPath checks that args has exactly the n arguments of synopsis, the
// first a path.
func withPath(synopsis string, args []string, n int, f func([]string) error) error {
	if len(args) != n {
		return fmt.Errorf("%w: %s: want %d argument(s), got %d", errUsage, synopsis, n, len(args))
	}
	return f(args)
}
