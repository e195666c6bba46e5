package lockcore

import (
	"fmt"
	"sync"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/errtext"
)

// Hold is one acquisition of a lock. It is safe for concurrent use. A nil
// Hold holds nothing: its Lost channel is closed, its Node is "", and its
// FencingToken and Check are ErrNotOwner.
type Hold struct {
	node string // full path of our node, without the namespace
	seq  int64
	sess framework.Session // the session that created node
	lost <-chan struct{}
	// last: the read that granted the hold listed no node after ours, so
	// no waiter can need its grant (see the package doc, "Cleanup").
	last bool

	// The token is known at grant time, or, for a hold granted by its
	// predecessor's delete, read on first use (see grantOnDelete). Only a
	// successful read is kept: a failed one is tried again on the next call.
	readToken func() (int64, error)
	tokenMu   sync.Mutex
	tokenRead bool
	token     int64
}

// Node returns the path of the hold's node.
func (h *Hold) Node() string {
	if h == nil {
		return ""
	}
	return h.node
}

// Sequence returns the server's sequence number of the hold's node.
func (h *Hold) Sequence() int64 {
	if h == nil {
		return -1
	}
	return h.seq
}

// Session returns the session that created the hold's node: the hold is
// trusted only while it is valid.
func (h *Hold) Session() framework.Session {
	if h == nil {
		return framework.Session{}
	}
	return h.sess
}

// FencingToken returns the hold's fencing token: the lock path's pzxid as
// read by the holder after the lock was granted and before it is released.
// It is a ZooKeeper transaction ID, so it grows with every acquisition of
// the path, even across the re-creation of a reaped container parent and
// across leader changes, where a sequence number would start again. A
// resource that remembers the highest token it has seen can reject a stale
// holder's writes.
//
// When the lock was handed over by the predecessor's delete, no read was
// needed to grant it, and the first call reads the token (one round trip,
// bounded); holders that never ask pay nothing. That read refuses, with an
// error matching ErrSessionLost, once the hold's session is no longer the
// client's, and fails with ErrNodeVanished if the hold's node is gone;
// other errors are the read's own (connection loss, timeout), wrapped. A
// failed read is tried again on the next call; a token once read is kept.
// Call it only while holding the lock: a read after the release would not
// be a valid token.
func (h *Hold) FencingToken() (int64, error) {
	if h == nil {
		return 0, ErrNotOwner
	}
	if h.readToken == nil {
		return h.token, nil
	}
	h.tokenMu.Lock()
	defer h.tokenMu.Unlock()
	if !h.tokenRead {
		tok, err := h.readToken()
		if err != nil {
			return 0, err
		}
		h.token, h.tokenRead = tok, true
	}
	return h.token, nil
}

// Lost returns a channel closed when the hold can no longer be trusted:
// under the client's error policy, on Suspended or Lost (standard) or on
// Lost only (session); when the hold's session is lost, under either
// policy; and when the client closes.
func (h *Hold) Lost() <-chan struct{} {
	if h == nil || h.lost == nil {
		return chans.Closed()
	}
	return h.lost
}

// Check reports, at the moment of the call, whether the hold may still be
// trusted: it returns nil only while the hold's session is valid, its Lost
// channel is open, and client (the client of the core that made the hold)
// passes framework.Client.CheckLease under the client's error policy,
// which reads the session's lease on the client's monotonic clock. So a
// holder resumed after a pause (a GC pause, a stopped VM) past its lease
// learns of the loss at its next Check, even while the timer goroutine
// that closes Lost has not run yet. Otherwise the error matches
// ErrSessionLost (and framework.ErrClosed once the client is closed); a
// nil Hold returns ErrNotOwner.
//
// Check reads the lease at the call: a pause between Check and the write
// it guards is covered only by the fencing token, which the resource
// itself must check (the seeds' Kleppmann vs antirez debate). Check, then
// write with the token.
func (h *Hold) Check(client *framework.Client) error {
	if h == nil {
		return ErrNotOwner
	}
	switch {
	case !h.sess.Valid():
		return fmt.Errorf("%w: %s: its session is no longer the client's", ErrSessionLost, h.node)
	case chans.IsClosed(h.Lost()):
		return LostError(h.node)
	}
	if err := client.CheckLease(client.ErrorPolicy()); err != nil {
		return errtext.Errorf("%w: %s: %w", ErrSessionLost, h.node, err)
	}
	return nil
}
