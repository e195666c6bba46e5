package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
)

// global holds the flags, which may stand anywhere before "--" (args.go).
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
	base           string // services: the discovery base path
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
