package framework

import (
	"fmt"
	"time"

	"github.com/go-curator/curator/internal/chans"
	"github.com/go-zookeeper/zk"
)

// onEvent turns go-zookeeper's session events into Curator's states. It is
// go-zookeeper's event callback: it runs on go-zookeeper's goroutine, in
// order, and must not block, so it only updates state under c.mu and
// queues the states for listeners.
func (c *Client) onEvent(conn *zk.Conn, ev zk.Event) {
	if ev.Type != zk.EventSession {
		c.reg.dispatch(conn, ev) // watch events, for lasting watches (watch.go)
		c.dispatchOneShot(conn, ev)
		c.pers.dispatch(conn, ev) // persistent watches (persistent.go)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || conn != c.conn {
		return // closing, or a connection abandoned by renewSession
	}
	switch ev.State {
	case zk.StateHasSession:
		c.onSession(conn.SessionID(), ev.Server)
		c.pers.handshake() // the server holds no persistent watch of this connection yet
	case zk.StateExpired:
		if c.state != Lost {
			c.logger.Warn("framework: session lost: the server expired it", "session", sessionHex(c.sessionID))
			c.setState(Lost)
		}
	case zk.StateDisconnected, zk.StateConnecting, zk.StateConnected:
		// StateConnected is only the TCP connection: a session comes with
		// StateHasSession.
		if c.state.IsConnected() {
			c.logger.Info("framework: connection lost: suspended", "session", sessionHex(c.sessionID),
				"server", ev.Server)
			c.setState(Suspended) // the session's lease (armLease) goes on
		}
	}
}

// onSession handles a (re)established session on server. It logs at Info
// what an operator needs: a new session (its ID, the timeout the server
// granted, the server), or a reconnection to the same one.
func (c *Client) onSession(id int64, server string) {
	switch {
	case c.sessionID == 0:
		c.sessionID = id
		c.setState(Connected)
	case id == c.sessionID:
		if c.state.IsConnected() {
			c.armLease()
			return // nothing new
		}
		c.setState(Reconnected)
		c.armLease()
		c.logger.Info("framework: reconnected", "session", sessionHex(id), "server", server)
		return
	default:
		// go-zookeeper opened a new session on its own: the old one is gone.
		if c.state != Lost {
			c.logger.Warn("framework: session lost: the server expired it", "session", sessionHex(c.sessionID))
			c.setState(Lost)
		}
		c.sessionID = id
		c.setState(Reconnected)
	}
	c.armLease()
	c.logger.Info("framework: session established", "session", sessionHex(id),
		"timeout", c.wire.Negotiated(), "requested", c.sessionTimeout, "server", server)
}

// sessionHex formats a session ID as ZooKeeper's logs do.
func sessionHex(id int64) string { return fmt.Sprintf("0x%x", id) }

// setState records a transition, ends or renews the trust channels, and
// queues the state for every listener and the metrics hook. Called with
// c.mu held.
func (c *Client) setState(s ConnectionState) {
	c.state = s
	c.logger.Debug("framework: connection state", "state", s.String())
	c.observeState(s, c.sessionID)
	switch s {
	case Connected, Reconnected:
		c.disarm()
		closeIfOpen(c.connected)
		if chans.IsClosed(c.connLoss) {
			c.connLoss = make(chan struct{})
		}
		if chans.IsClosed(c.sessLoss) {
			c.sessLoss = make(chan struct{})
		}
	case Suspended:
		c.connected = reopen(c.connected)
		closeIfOpen(c.connLoss)
	case Lost:
		c.disarm() // one Lost per session, however it was learned
		c.connected = reopen(c.connected)
		closeIfOpen(c.connLoss)
		closeIfOpen(c.sessLoss)
	}
	c.postState(s) // through Builder.CircuitBreaking's circuit, if set
}

// disarm stops a pending start or lease timer. Called with c.mu held.
func (c *Client) disarm() {
	c.suspendGen++
	if c.lostTimer != nil {
		c.lostTimer.Stop()
	}
}

// armStart reports Suspended if no session comes within delay after Start,
// and Lost a session timeout later. Called with c.mu held.
func (c *Client) armStart(delay time.Duration) {
	c.disarm()
	gen := c.suspendGen
	c.lostTimer = c.clock.AfterFunc(delay, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed || gen != c.suspendGen || c.state != Latent {
			return
		}
		c.logger.Info("framework: no session yet: suspended", "after", delay)
		c.setState(Suspended)
		gen := c.suspendGen
		c.lostTimer = c.clock.AfterFunc(c.sessionTimeout, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.closed || gen != c.suspendGen || c.state != Suspended || c.sessionID != 0 {
				return
			}
			c.logger.Warn("framework: no session within the session timeout: lost", "timeout", c.sessionTimeout)
			c.setState(Lost)
		})
	})
}

// armLease runs the session's client-side lease, as Chubby's client does
// (see "When Lost comes" in the package doc): the transport records the
// send time of the latest request answered within the lease, on the
// monotonic clock, and says when the lease ends (transport.Wire.LeaseEnd,
// with the margin's derivation). When it ends without a newer answer, the
// client reports Suspended (if it still believed itself connected) and
// Lost, and renews the session: so a holder's Lost() closes before the
// server can have expired the session and granted its lock to another
// client, under either error policy. Every reading is the client's clock's
// (time.Now, which carries the monotonic reading), never the wall clock's:
// a clock stepped back must not delay Lost. Called with c.mu held, when a
// session is established.
func (c *Client) armLease() {
	c.disarm()
	gen, w := c.suspendGen, c.wire
	c.checkTiming(w)
	var check func()
	check = func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed || gen != c.suspendGen || c.state == Lost {
			return
		}
		if wait := w.LeaseEnd(c.sessionTimeout).Sub(c.clock.Now()); wait > 0 {
			c.lostTimer = c.clock.AfterFunc(wait, check)
			return
		}
		if c.state.IsConnected() { // go-zookeeper has not noticed the silence yet
			c.logger.Info("framework: connection lost: suspended", "session", sessionHex(c.sessionID))
			c.setState(Suspended)
		}
		c.logger.Warn("framework: session lost: simulated expiry, the session's lease ended without an answer from the server",
			"session", sessionHex(c.sessionID), "timeout", w.Negotiated())
		c.setState(Lost)
		c.renewSession()
	}
	c.lostTimer = c.clock.AfterFunc(w.LeaseEnd(c.sessionTimeout).Sub(c.clock.Now()), check)
}

// checkTiming logs, once per client, what the negotiated timeout means for
// the lease under the ensemble timing the user stated (see "When Lost
// comes"): that a follower's reply gives no lease at all (holds then last
// only 0.9 T past each handshake), and that the timeout is below 2 ×
// tickTime, which ZooKeeper grants only with a minSessionTimeout set below
// its default (the rule uses tickTime itself, so it still holds). Called
// with c.mu held, after a handshake.
func (c *Client) checkTiming(w *wire) {
	t := w.Negotiated()
	margin, ok := w.FollowerMargin()
	if !ok || t <= 0 {
		return
	}
	if margin >= t-t/10 && !c.warned.noFollowerLease {
		c.warned.noFollowerLease = true
		c.logger.Warn("framework: at this session timeout a follower's reply gives the session no lease: syncLimit × tickTime + tickTime + timeout/10 is at least 0.9 × timeout, so every hold ends 0.9 × timeout after the handshake; ask for a longer timeout",
			"timeout", t, "tickTime", c.timing.tick, "syncLimit", c.timing.syncLimit)
	}
	if t < 2*c.timing.tick && !c.warned.shortTimeout {
		c.warned.shortTimeout = true
		c.logger.Warn("framework: the negotiated session timeout is below 2 × tickTime (a minSessionTimeout below ZooKeeper's default); the lease still counts a follower's lag in whole tickTimes",
			"timeout", t, "tickTime", c.timing.tick)
	}
}

// renewSession ends the session after a simulated expiry, as Curator's
// injectSessionExpiration does. Without it go-zookeeper would resume the
// old session when the servers answer again, if they still hold it, and the
// client would report Reconnected on a session it has already declared
// Lost, with the ephemeral nodes the recipes believe gone. So it abandons
// the connection (closing it, which also closes the session if a server
// still answers) and opens a new one, which starts a new session: the next
// session event then reports Reconnected with a new session ID. Called
// with c.mu held.
func (c *Client) renewSession() {
	if c.sessionID == 0 {
		return // no session yet (Start is still waiting): nothing to end
	}
	conn, w, err := c.connect()
	if err != nil {
		c.logger.Warn("framework: cannot open a new connection after the session was lost", "err", err)
		return
	}
	old := c.conn
	c.conn, c.wire = conn, w
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		old.Close() // waits up to a second for a server that does not answer
	}()
}

func closeIfOpen(ch chan struct{}) {
	if !chans.IsClosed(ch) {
		close(ch)
	}
}

// reopen returns ch if it is still open, or a new open channel.
func reopen(ch chan struct{}) chan struct{} {
	if chans.IsClosed(ch) {
		return make(chan struct{})
	}
	return ch
}
