package framework

import "fmt"

// CheckLease reports whether, at the moment of the call, a holder of a
// lock may still trust it under error policy p, reading the session's
// lease on the monotonic clock (see "When Lost comes" in the package
// doc). It returns nil only if the client is started and not closed, has
// an established session, is connected under StandardErrorPolicy (not
// Suspended or Lost), and the session's lease has not ended now.
// Otherwise it returns ErrClosed for a closed client, and an error
// matching ErrSessionLost for the rest (ErrNilClient for a nil client).
//
// Lost() channels close on the client's timer goroutine, which a paused
// process (a GC pause, a stopped VM, a swapped process) runs late: a
// holder resumed past its lease could act before its Lost() closes.
// CheckLease does not wait for that goroutine: it compares the clock with
// the lease's end itself. Every hold's Check calls it.
//
// It reads the lease at the call and no later: a pause between CheckLease
// and the write it guards is covered by nothing on the client. Only a
// fencing token checked by the resource itself covers that gap (the
// seeds' Kleppmann vs antirez debate): check, then write with the token.
func (c *Client) CheckLease(p ErrorPolicy) error {
	if c == nil {
		return ErrNilClient
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return ErrClosed
	case !c.started || c.sessionID == 0 || c.wire == nil:
		return fmt.Errorf("%w: no session established", ErrSessionLost)
	case c.state == Lost:
		return fmt.Errorf("%w: session 0x%x lost", ErrSessionLost, c.sessionID)
	case p != SessionErrorPolicy && !c.state.IsConnected():
		return fmt.Errorf("%w: connection %s under the standard error policy", ErrSessionLost, c.state)
	}
	end := c.wire.LeaseEnd(c.sessionTimeout)
	if end.IsZero() {
		return fmt.Errorf("%w: session 0x%x has no lease on this connection yet", ErrSessionLost, c.sessionID)
	}
	if now := c.clock.Now(); !now.Before(end) {
		return fmt.Errorf("%w: the lease of session 0x%x ended %v ago (its Lost() may still be open)",
			ErrSessionLost, c.sessionID, now.Sub(end))
	}
	return nil
}
