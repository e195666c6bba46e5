package zktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// Cluster is one ZooKeeper server or an ensemble, on loopback.
//
// A Cluster from ZK_TEST_CONNECT is an external server: it has no Servers,
// and its fault controls return ErrNoControl.
type Cluster struct {
	connect       string
	secureConnect string // the TLS client addresses, "" without Config.TLS (tls.go)
	servers       []*Server
	source        string         // where the servers come from, for messages
	dir           string         // removed by Close; "" if none
	rc            *reconfigState // nil unless Config.Reconfig (reconfig.go)

	mu     sync.Mutex // servers and closed, which AddServer changes
	closed bool

	closeOnce sync.Once
	closeErr  error
}

// StartAny starts n servers from the first source that works, in the order
// the package doc gives: ZK_TEST_CONNECT, then a container (when a
// [ContainerRuntime] is registered), then the local install.
// An ensemble (n > 1) always comes from the local install. The error names
// what each source said. The caller must Close the Cluster.
func StartAny(ctx context.Context, n int) (*Cluster, error) {
	if n > 1 {
		c, err := StartLocal(ctx, n)
		if err != nil {
			return nil, fmt.Errorf("%w (an ensemble needs the local ZooKeeper install)", err)
		}
		return c, nil
	}
	if cs := os.Getenv("ZK_TEST_CONNECT"); cs != "" {
		return &Cluster{connect: cs, source: "ZK_TEST_CONNECT"}, nil
	}
	r, ctrErr := containerRuntime(ctx)
	if ctrErr == nil {
		c, err := startContainer(ctx, r)
		if err == nil {
			return c, nil
		}
		ctrErr = err
	}
	c, localErr := StartLocal(ctx, 1)
	if localErr != nil {
		return nil, fmt.Errorf("zktest: no source of ZooKeeper worked: ZK_TEST_CONNECT is not set; containers: %w; local install: %w", ctrErr, localErr)
	}
	return c, nil
}

// ConnectString returns the servers' client addresses,
// "127.0.0.1:p1,127.0.0.1:p2,...".
func (c *Cluster) ConnectString() string { return c.connect }

// Servers returns the cluster's servers, ordered by ID. It is empty for an
// external server.
func (c *Cluster) Servers() []*Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Server(nil), c.servers...)
}

// String describes the cluster: its source and connect string.
func (c *Cluster) String() string {
	return fmt.Sprintf("%s (%s)", c.source, c.connect)
}

// Leader returns the server that srvr reports as "Mode: leader", or the only
// server of a standalone cluster. Servers that are down are skipped. It does
// not wait for an election; see WaitLeader.
func (c *Cluster) Leader() (*Server, error) {
	servers := c.Servers()
	if len(servers) == 0 {
		return nil, ErrNoControl
	}
	var modes []string
	for _, s := range servers {
		mode, err := s.Mode()
		if err != nil {
			modes = append(modes, fmt.Sprintf("%d: down", s.ID))
			continue
		}
		if mode == "leader" || mode == "standalone" {
			return s, nil
		}
		modes = append(modes, fmt.Sprintf("%d: %q", s.ID, mode))
	}
	return nil, fmt.Errorf("zktest: no leader (%s)", strings.Join(modes, ", "))
}

// WaitLeader polls Leader until a server leads and more than half of the
// servers serve clients, or ctx ends.
func (c *Cluster) WaitLeader(ctx context.Context) (*Server, error) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		s, err := c.Leader()
		if err == nil && c.quorumServes() {
			return s, nil
		}
		if errors.Is(err, ErrNoControl) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("zktest: wait for a leader: %w (%v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// quorumServes reports whether more than half of the servers serve clients.
func (c *Cluster) quorumServes() bool {
	n, servers := 0, c.Servers()
	for _, s := range servers {
		if answer, err := s.FourLetter("srvr"); err == nil && serving(answer) {
			n++
		}
	}
	return n > len(servers)/2
}

// Close kills every server and removes the temporary directory. It is
// idempotent and safe for concurrent use; every call returns the first
// call's result. Close of an external cluster does nothing.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		servers := c.servers
		c.mu.Unlock()
		errs := make([]error, len(servers))
		var wg sync.WaitGroup
		for i, s := range servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.close()
			}()
		}
		wg.Wait()
		if c.dir != "" {
			errs = append(errs, os.RemoveAll(c.dir))
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}
