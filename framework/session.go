package framework

import (
	"context"
	"fmt"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/errtext"
)

// Session is one ZooKeeper session of a client, as it was when taken with
// Client.CurrentSession. Recipes take it before they create a node and
// check it after every read that decides from the presence of that node:
// presence in a children list is not ownership, since the server keeps an
// abandoned session (and its ephemeral nodes) alive until its own timeout,
// after the client has declared it lost and opened a new one.
//
// The zero Session is never valid: its Lost channel is closed.
type Session struct {
	id   int64
	lost <-chan struct{}
}

// ID returns the session's ID (0 for the zero Session).
func (s Session) ID() int64 { return s.id }

// Lost returns a channel closed when the client declares this session
// lost (a server-reported expiry, the client's simulated expiry, a new
// session opened by go-zookeeper) or closes. While it is open, every
// request the client has answered ran on this session: the client closes
// it before any request can run on a later session.
func (s Session) Lost() <-chan struct{} {
	if s.lost == nil {
		return chans.Closed()
	}
	return s.lost
}

// Valid reports whether the session is still the client's current one,
// that is, whether Lost is still open.
func (s Session) Valid() bool {
	if s.lost == nil {
		return false
	}
	select {
	case <-s.lost:
		return false
	default:
		return true
	}
}

// CurrentSession returns the client's current session, waiting for a
// connection (up to the connection timeout, and never past ctx) if there
// is none now. A node created after this call, while the returned session
// is still Valid, belongs to that session.
func (c *Client) CurrentSession(ctx context.Context) (Session, error) {
	if c == nil {
		return Session{}, ErrNilClient
	}
	if err := checkCtx(ctx); err != nil {
		return Session{}, err
	}
	for {
		if err := c.waitConnected(ctx); err != nil {
			return Session{}, errtext.Errorf("framework: session: %w", err)
		}
		c.mu.Lock()
		s := Session{id: c.sessionID, lost: c.sessLoss}
		connected := c.state.IsConnected()
		c.mu.Unlock()
		if connected && s.Valid() {
			return s, nil
		}
	}
}

// checkCtx returns an error for a nil ctx, and ctx's error if it is done,
// so that a call with a done ctx does nothing.
func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	return ctx.Err()
}

// CleanupProtected deletes, in the background, every child of parent whose
// name starts with prefix (from NewProtectedPrefix), retrying after each
// reconnection until it succeeds or the client closes. Recipes call it when
// a write that made a protected node (in a transaction) had an
// indeterminate outcome and the caller gave up: the node may exist on a
// live session that will never use it, as Create does for its own
// protected orphans.
func (c *Client) CleanupProtected(parent, prefix string) error {
	full, err := c.prepare(context.Background(), parent)
	if err != nil {
		return err
	}
	if err := validProtectedPrefix(prefix); err != nil {
		return err
	}
	c.sweepProtected(full, prefix, "")
	return nil
}

// validProtectedPrefix checks that prefix is "_c_<36-character uuid>-", so
// that a prefix search can never match every child.
func validProtectedPrefix(prefix string) error {
	if len(prefix) != protectedPrefixLen || prefix[:len(ProtectedPrefix)] != ProtectedPrefix || prefix[len(prefix)-1] != '-' {
		return fmt.Errorf("%w: %q is not a protected prefix (_c_<uuid>-)", ErrInvalidArgument, prefix)
	}
	return nil
}
