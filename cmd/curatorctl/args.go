package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// errHelp reports that -h was given and the help printed: exit status 0.
var errHelp = errors.New("help")

// parseArgs parses the command line: the flags, wherever they stand before
// a "--", and the command with its arguments in order. A "--" that comes
// first only ends the flags; one that follows an argument (lock PATH --
// CMD) is kept, with everything after it as it is, for the command that
// runs. With -h, it prints the help to stdout and returns errHelp.
//
// The standard flag package stops at the first argument; parseArgs sorts
// the flags out first (a flag that takes a value takes the next argument
// unless written -flag=value, as flag does), then lets flag parse them.
// A lone "-" and negative numbers are arguments.
func parseArgs(args []string, stdout io.Writer) (*global, []string, error) {
	g := &global{}
	fs := flag.NewFlagSet("curatorctl", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // run prints the one error line
	fs.Usage = func() {}
	fs.StringVar(&g.server, "server", os.Getenv("CURATOR_SERVER"), "connect string host:port[,host:port][/chroot] (env CURATOR_SERVER)")
	fs.StringVar(&g.namespace, "namespace", "", "namespace every path is under")
	fs.DurationVar(&g.sessionTimeout, "session-timeout", 15*time.Second, "session timeout to ask for")
	fs.DurationVar(&g.timeout, "timeout", 15*time.Second, "how long to wait for the servers")
	fs.StringVar(&g.auth, "auth", "", "credentials scheme:credential, e.g. digest:user:password (shown in the process list: prefer -auth-file or $"+authEnv+")")
	fs.StringVar(&g.authFile, "auth-file", "", "file of credentials, one scheme:credential a line (# starts a comment line)")
	fs.StringVar(&g.tlsCA, "tls-ca", "", "PEM file of the CA that signed the servers' certificates (turns TLS on)")
	fs.StringVar(&g.tlsCert, "tls-cert", "", "PEM file of the client certificate")
	fs.StringVar(&g.tlsKey, "tls-key", "", "PEM file of the client certificate's key")
	fs.BoolVar(&g.json, "json", false, "print JSON")
	fs.StringVar(&g.base, "base", defaultServicesBase, "services: the discovery base path")
	fs.DurationVar(&g.grace, "grace", 5*time.Second, "lock PATH -- CMD: how long CMD has after SIGTERM before SIGKILL")

	flags, rest := sortArgs(fs, args)
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			fmt.Fprintln(stdout, "\nflags (anywhere before --, as -flag or --flag):")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return nil, nil, errHelp
		}
		return nil, nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if len(rest) == 0 {
		return nil, nil, errNoCommand
	}
	if g.server == "" {
		return nil, nil, fmt.Errorf("%w: no server: give --server or set CURATOR_SERVER", errUsage)
	}
	if g.sessionTimeout <= 0 || g.timeout <= 0 || g.grace < 0 {
		return nil, nil, fmt.Errorf("%w: --session-timeout and --timeout must be positive, --grace not negative", errUsage)
	}
	return g, rest, nil
}

// errNoCommand reports a command line without a command: run prints the
// list of commands.
var errNoCommand = fmt.Errorf("%w: no command", errUsage)

// sortArgs splits args into the flags (with the values they take) and
// the other arguments, each in order.
func sortArgs(fs *flag.FlagSet, args []string) (flags, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if len(rest) == 0 {
				return flags, args[i+1:] // "--" first: only ends the flags
			}
			return flags, append(rest, args[i:]...)
		case len(a) < 2 || a[0] != '-' || isNumber(a):
			rest = append(rest, a)
		default:
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if strings.Contains(name, "=") {
				continue
			}
			if f := fs.Lookup(name); f != nil && !isBool(f) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		}
	}
	return flags, rest
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
