package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
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
	auth           string // --auth: scheme:credential
	authFile       string // --auth-file: a file of scheme:credential lines
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
	creds, err := g.credentials()
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	refused := newRefusals(ctx, hosts(g.server), cancel)
	b := framework.NewBuilder().ConnectString(g.server).Namespace(g.namespace).
		SessionTimeout(g.sessionTimeout).ConnectionTimeout(g.timeout).RetryPolicy(policy).
		Dialer(refused.dial)
	for _, c := range creds {
		b.Authorization(c.scheme, []byte(c.cred))
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
	sctx, stop := context.WithTimeout(sctx, g.timeout)
	defer stop()
	if err := c.Start(sctx); err != nil {
		if errors.Is(context.Cause(sctx), errRefused) {
			return nil, fmt.Errorf("connect to %s: %w (nothing listens there): %w", g.server, errRefused, refused.err())
		}
		return nil, fmt.Errorf("connect to %s: %w", g.server, err)
	}
	return c, nil
}

// authEnv names the environment variable that may hold the credentials,
// as --auth takes them. Unlike a flag, it is not shown in the process list
// to other users.
const authEnv = "CURATORCTL_AUTH"

// credential is one scheme:credential pair.
type credential struct{ scheme, cred string }

// credentials returns the credentials to add: those of --auth, else of
// --auth-file (one scheme:credential a line; empty lines and lines that
// start with # are skipped), else of $CURATORCTL_AUTH. --auth and
// --auth-file together are a usage error.
func (g *global) credentials() ([]credential, error) {
	var src, text string
	switch {
	case g.auth != "" && g.authFile != "":
		return nil, fmt.Errorf("%w: --auth and --auth-file: give one", errUsage)
	case g.auth != "":
		src, text = "--auth", g.auth
	case g.authFile != "":
		b, err := os.ReadFile(g.authFile)
		if err != nil {
			return nil, fmt.Errorf("--auth-file: %w", err)
		}
		src, text = "--auth-file "+g.authFile, string(b)
	default:
		src, text = "$"+authEnv, os.Getenv(authEnv)
	}
	var out []credential
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		scheme, cred, ok := strings.Cut(line, ":")
		if !ok || scheme == "" || cred == "" {
			// The credential itself is not repeated: it may be a password.
			return nil, fmt.Errorf("%w: %s: line %d: want scheme:credential, e.g. digest:user:password", errUsage, src, i+1)
		}
		out = append(out, credential{scheme, cred})
	}
	if len(out) == 0 && g.authFile != "" {
		return nil, fmt.Errorf("%w: --auth-file %s: no scheme:credential line", errUsage, g.authFile)
	}
	return out, nil
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
