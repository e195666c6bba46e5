package framework

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/go-curator/curator/framework/internal/transport"
	"github.com/go-zookeeper/zk"
)

// EnsembleTracker turns the ensemble tracker on or off (Curator's
// ensembleTracker). The tracker follows the ensemble's dynamic
// configuration (/zookeeper/config, ZooKeeper 3.5+): when a
// reconfiguration changes the members, the client dials the new members'
// client addresses from its next connection on, so that once servers are
// added and the original ones removed a running client still reaches the
// ensemble, with its session (and the holds on it) intact. The current
// connection is kept meanwhile, whether or not its server is still a
// member: a removed server goes on serving as a non-voting follower
// until it is stopped, and the client moves when the connection breaks.
//
// It is on by default when the connect string names two or more servers,
// and off when it names one: a single address is a standalone server,
// which no reconfiguration changes, or a name in front of the ensemble (a
// load balancer, a virtual IP, a Kubernetes service: CURATOR-568), which
// the members' own addresses must not replace. Turn it off too when the
// client reaches the servers through addresses of its own (proxies,
// tunnels, NAT): the members' addresses would replace them.
//
// The tracker reads the configuration once before Start returns, and
// after each change (one watch on /zookeeper/config, set again on a new
// session); the connect string stands until a configuration newer than
// that first one comes. It keeps the connect string's chroot, where
// Curator 5.4 loses it (CURATOR-593), and takes no server without a
// client port. Client.CurrentConfig returns what it read last, and
// Client.ConnectString the servers the client dials.
func (b *Builder) EnsembleTracker(on bool) *Builder {
	b.tracker = trackerOption{set: true, on: on}
	return b
}

// trackerOption is the Builder's EnsembleTracker setting.
type trackerOption struct{ set, on bool }

// enabled reports whether the tracker runs for a connect string of n
// servers.
func (o trackerOption) enabled(n int) bool {
	if o.set {
		return o.on
	}
	return n > 1
}

// ensemble is the client's side of the ensemble tracker. Guarded by the
// client's mu.
type ensemble struct {
	track   bool             // the tracker runs
	hosts   *transport.Hosts // the current connection chain's server list (connect)
	current *EnsembleConfig  // the configuration read last; nil before the first
	applied int64            // the version the server list follows (the first read's, then each change's)
}

// CurrentConfig returns the ensemble's configuration as the tracker read
// it last, or nil when the tracker is off or has not read it yet (see
// Builder.EnsembleTracker). It is Curator's getCurrentConfig. To read the
// configuration from the servers, use GetConfig.
func (c *Client) CurrentConfig() *EnsembleConfig {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ens.current == nil {
		return nil
	}
	cfg := *c.ens.current
	return &cfg
}

// ConnectString returns the servers the client dials, with the connect
// string's chroot: the connect string it was built with until the
// ensemble tracker replaces the servers.
func (c *Client) ConnectString() string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.servers, ",") + c.chroot
}

// newHosts returns the server list of a new connection chain, and makes it
// the one the tracker updates. It resolves names, as go-zookeeper's
// DNSHostProvider does, but for a TLS client, whose handshake checks the
// names. Called with c.mu held.
func (c *Client) newHosts() *transport.Hosts {
	h := transport.NewHosts(c.connOpts.tls == nil)
	c.ens.hosts = h
	return h
}

// startTracker starts the ensemble tracker, if it runs, and waits for its
// first read (or for ctx, or the connection timeout): the server list then
// follows the configurations that come after Start.
func (c *Client) startTracker(ctx context.Context) {
	c.mu.Lock()
	if !c.ens.track || c.closed {
		c.mu.Unlock()
		return
	}
	first := make(chan struct{})
	c.wg.Add(1)
	c.mu.Unlock()
	go c.trackEnsemble(first)
	t := time.NewTimer(c.connectionTimeout)
	defer t.Stop()
	select {
	case <-first:
	case <-ctx.Done():
	case <-t.C:
	}
}

// Bounds of the tracker's wait after a read that failed.
const (
	trackerRetryMin = time.Second
	trackerRetryMax = 30 * time.Second
)

// trackEnsemble reads the configuration with a watch, applies it, and
// reads it again when the watch fires (a change, or the end of the
// session), until the client closes. It closes first after its first
// read, whatever its outcome.
func (c *Client) trackEnsemble(first chan struct{}) {
	defer c.wg.Done()
	signal := func() {
		if first != nil {
			close(first)
			first = nil
		}
	}
	defer signal()
	wait := trackerRetryMin
	for {
		var (
			data []byte
			ch   <-chan zk.Event
		)
		err := c.retryRead(c.ctx, OpNameGetConfig, func() (err error) {
			data, _, ch, err = c.getW(configNode, nil)
			return err
		})
		if c.ctx.Err() != nil || errors.Is(err, ErrClosed) {
			return
		}
		if errors.Is(err, zk.ErrNoNode) {
			c.logger.Info("framework: ensemble tracker: the servers have no " + configNode + " (before ZooKeeper 3.5): not tracking")
			return
		}
		if err == nil {
			if err := c.applyConfig(data); err != nil {
				// Read again at the next change, not before: the same
				// data would fail the same way.
				c.logger.Warn("framework: ensemble tracker: the ensemble's configuration does not parse; keeping the servers", "err", err)
			}
			signal()
			wait = trackerRetryMin
			select {
			case <-ch:
				continue
			case <-c.ctx.Done():
				return
			}
		}
		signal()
		c.logger.Warn("framework: ensemble tracker: cannot read the ensemble's configuration; trying again", "err", err, "in", wait)
		if c.sleep(c.ctx, wait) != nil {
			return
		}
		wait = min(2*wait, trackerRetryMax)
	}
}

// applyConfig records the configuration read, and gives its members'
// client addresses to the client when it is newer than the one the server
// list follows and names at least one.
func (c *Client) applyConfig(data []byte) error {
	cfg, err := ParseEnsembleConfig(data)
	if err != nil {
		return err
	}
	c.mu.Lock()
	first := c.ens.current == nil
	c.ens.current = cfg
	servers := cfg.Servers()
	if first || cfg.Version <= c.ens.applied || len(servers) == 0 {
		if first {
			c.ens.applied = cfg.Version
		}
		c.mu.Unlock()
		return nil
	}
	c.ens.applied = cfg.Version
	old, hosts := c.servers, c.ens.hosts
	c.mu.Unlock()
	if slicesEqualSet(old, servers) {
		return nil
	}
	if hosts != nil {
		if _, err := hosts.Update(servers); err != nil {
			c.logger.Warn("framework: ensemble tracker: the new members cannot be dialled; keeping the old servers",
				"version", cfg.Version, "servers", strings.Join(servers, ","), "err", err)
			return nil
		}
	}
	c.mu.Lock()
	c.servers = servers // a connection chain opened from now on starts from them
	newer := c.ens.hosts
	c.mu.Unlock()
	if newer != hosts {
		// renewSession opened a connection chain from the old servers
		// meanwhile.
		newer.Update(servers)
	}
	c.logger.Info("framework: ensemble tracker: the ensemble changed; the client dials its members from its next connection on",
		"version", cfg.Version, "servers", strings.Join(servers, ","), "was", strings.Join(old, ","))
	return nil
}

// slicesEqualSet reports whether a and b hold the same strings, in any
// order.
func slicesEqualSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := make(map[string]int, len(a))
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s] == 0 {
			return false
		}
		seen[s]--
	}
	return true
}
