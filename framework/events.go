package framework

import (
	"time"

	"github.com/go-zookeeper/zk"
)

// onEvent turns go-zookeeper's session events into Curator's states. It is
// go-zookeeper's event callback: it runs on go-zookeeper's goroutine, in
// order, and must not block, so it only updates state under c.mu and
// queues the states for listeners.
func (c *Client) onEvent(conn *zk.Conn, ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || conn != c.conn {
		return // closing, or a connection abandoned by renewSession
	}
	switch ev.State {
	case zk.StateHasSession:
		c.onSession(conn.SessionID())
	case zk.StateExpired:
		if c.state != Lost {
			c.setState(Lost)
		}
	case zk.StateDisconnected, zk.StateConnecting, zk.StateConnected:
		// StateConnected is only the TCP connection: a session comes with
		// StateHasSession.
		if c.state.IsConnected() {
			c.setState(Suspended)
			c.armSuspend(0)
		}
	}
}

// onSession handles a (re)established session.
func (c *Client) onSession(id int64) {
	switch {
	case c.sessionID == 0:
		c.sessionID = id
		c.setState(Connected)
	case id == c.sessionID:
		if !c.state.IsConnected() {
			c.setState(Reconnected)
		}
	default:
		// go-zookeeper opened a new session on its own: the old one is gone.
		if c.state != Lost {
			c.setState(Lost)
		}
		c.sessionID = id
		c.setState(Reconnected)
	}
}

// setState records a transition, ends or renews the trust channels, and
// queues the state for every listener. Called with c.mu held.
func (c *Client) setState(s ConnectionState) {
	c.state = s
	c.logger.Debug("framework: connection state", "state", s.String())
	switch s {
	case Connected, Reconnected:
		c.suspendGen++ // disarm a pending simulated expiry
		if c.lostTimer != nil {
			c.lostTimer.Stop()
		}
		closeIfOpen(c.connected)
		if isClosed(c.connLoss) {
			c.connLoss = make(chan struct{})
		}
		if isClosed(c.sessLoss) {
			c.sessLoss = make(chan struct{})
		}
	case Suspended:
		c.connected = reopen(c.connected)
		closeIfOpen(c.connLoss)
	case Lost:
		c.connected = reopen(c.connected)
		closeIfOpen(c.connLoss)
		closeIfOpen(c.sessLoss)
	}
	for l := range c.listeners {
		l.post(s)
	}
}

// armSuspend starts the clock of a suspension: after the session timeout
// the client reports Lost (Curator's simulated expiry), because a holder
// must not wait for the server to say so. With a non-zero delay (used at
// Start) it first reports Suspended after that delay if no session came.
// Called with c.mu held.
func (c *Client) armSuspend(delay time.Duration) {
	c.suspendGen++
	gen := c.suspendGen
	if c.lostTimer != nil {
		c.lostTimer.Stop()
	}
	var fire func(next ConnectionState, after time.Duration)
	fire = func(next ConnectionState, after time.Duration) {
		c.lostTimer = time.AfterFunc(after, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.closed || gen != c.suspendGen || c.state.IsConnected() {
				return
			}
			c.setState(next)
			if next == Suspended {
				fire(Lost, c.sessionTimeout)
			} else {
				c.renewSession()
			}
		})
	}
	if delay > 0 {
		fire(Suspended, delay)
		return
	}
	fire(Lost, c.sessionTimeout)
}

// renewSession ends the session after a simulated expiry, as Curator's
// injectSessionExpiration does. Without it go-zookeeper would resume the
// old session when the servers answer again, if they still hold it (a
// restarted server does, for another session timeout), and the client would
// report Reconnected on a session it has already declared Lost, with the
// ephemeral nodes the recipes believe gone. So it abandons the connection
// (closing it, which also closes the session if a server still answers) and
// opens a new one, which starts a new session: the next session event then
// reports Reconnected with a new session ID. Called with c.mu held.
func (c *Client) renewSession() {
	if c.sessionID == 0 {
		return // no session yet (Start is still waiting): nothing to end
	}
	conn, err := c.connect()
	if err != nil {
		c.logger.Warn("framework: cannot open a new connection after the session was lost", "err", err)
		return
	}
	old := c.conn
	c.conn = conn
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		old.Close() // waits up to a second for a server that does not answer
	}()
}

func closeIfOpen(ch chan struct{}) {
	if !isClosed(ch) {
		close(ch)
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// reopen returns ch if it is still open, or a new open channel.
func reopen(ch chan struct{}) chan struct{} {
	if isClosed(ch) {
		return make(chan struct{})
	}
	return ch
}
