package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
)

// global holds the flags that come before the command.
type global struct {
	server         string
	namespace      string
	sessionTimeout time.Duration
	timeout        time.Duration
	auth           string
	tlsCA          string
	tlsCert        string
	tlsKey         string
	json           bool
	grace          time.Duration
}

var errHelp = errors.New("help")

// parseGlobal parses the flags before the command.
func parseGlobal(args []string, stderr io.Writer) (*global, []string, error) {
	g := &global{}
	fs := flag.NewFlagSet("curatorctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&g.server, "server", os.Getenv("CURATOR_SERVER"), "connect string host:port[,host:port][/chroot] (env CURATOR_SERVER)")
	fs.StringVar(&g.namespace, "namespace", "", "namespace every path is under")
	fs.DurationVar(&g.sessionTimeout, "session-timeout", 15*time.Second, "session timeout to ask for")
	fs.DurationVar(&g.timeout, "timeout", 15*time.Second, "how long to wait for the servers")
	fs.StringVar(&g.auth, "auth", "", "credentials scheme:credential, e.g. digest:user:password")
	fs.StringVar(&g.tlsCA, "tls-ca", "", "PEM file of the CA that signed the servers' certificates (turns TLS on)")
	fs.StringVar(&g.tlsCert, "tls-cert", "", "PEM file of the client certificate")
	fs.StringVar(&g.tlsKey, "tls-key", "", "PEM file of the client certificate's key")
	fs.BoolVar(&g.json, "json", false, "print JSON")
	fs.DurationVar(&g.grace, "grace", 5*time.Second, "lock PATH -- CMD: how long CMD has after SIGTERM before SIGKILL")
	fs.Usage = func() { usage(stderr); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil, errHelp
		}
		return nil, nil, err
	}
	if g.server == "" {
		return nil, nil, errors.New("no server: give --server or set CURATOR_SERVER")
	}
	if g.sessionTimeout <= 0 || g.timeout <= 0 || g.grace < 0 {
		return nil, nil, errors.New("--session-timeout and --timeout must be positive, --grace not negative")
	}
	return g, fs.Args(), nil
}

// client builds and starts a client from the flags.
func (g *global) client(ctx context.Context) (*framework.Client, error) {
	policy, err := retry.NewExponentialBackoff(100*time.Millisecond, 3)
	if err != nil {
		return nil, err
	}
	b := framework.NewBuilder().ConnectString(g.server).Namespace(g.namespace).
		SessionTimeout(g.sessionTimeout).ConnectionTimeout(g.timeout).RetryPolicy(policy)
	if g.auth != "" {
		scheme, cred, ok := strings.Cut(g.auth, ":")
		if !ok || scheme == "" || cred == "" {
			return nil, fmt.Errorf("%w: --auth %q: want scheme:credential", errUsage, g.auth)
		}
		b.Authorization(scheme, []byte(cred))
	}
	if g.tlsCA != "" || g.tlsCert != "" || g.tlsKey != "" {
		cfg, err := g.tlsConfig()
		if err != nil {
			return nil, err
		}
		b.TLSConfig(cfg)
	}
	c, err := b.Build()
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	if err := c.Start(sctx); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", g.server, err)
	}
	return c, nil
}

// tlsConfig reads the TLS flags' files.
func (g *global) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if g.tlsCA != "" {
		pem, err := os.ReadFile(g.tlsCA)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", g.tlsCA)
		}
		cfg.RootCAs = pool
	}
	if (g.tlsCert == "") != (g.tlsKey == "") {
		return nil, fmt.Errorf("%w: --tls-cert and --tls-key go together", errUsage)
	}
	if g.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(g.tlsCert, g.tlsKey)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
