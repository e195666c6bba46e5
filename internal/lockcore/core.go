package lockcore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// Errors of the lock core.
var (
	// ErrTimeout reports that a bounded acquire did not get the lock in time.
	ErrTimeout = errors.New("lockcore: timed out waiting for the lock")
	// ErrNodeVanished reports that the contender's node disappeared while it
	// waited (its session expired) and the retry policy gave up.
	ErrNodeVanished = errors.New("lockcore: lock node vanished while waiting")
	// ErrNotOwner reports a release by a goroutine that holds nothing, or
	// of a hold already released.
	ErrNotOwner = errors.New("lockcore: not held")
	// ErrOwnerVanished reports that AcquireAt found the node of the hold it
	// was to stand beside gone (its session expired), or that hold's session
	// lost.
	ErrOwnerVanished = errors.New("lockcore: the owning hold's node is gone")
	// ErrSessionLost reports that the session a lock node belongs to is no
	// longer the client's: the node is not trusted, even if the server still
	// lists it (see the package doc). Acquire starts again after it, as the
	// retry policy allows; a hold's FencingToken returns it.
	ErrSessionLost = errtext.Sentinel("lockcore: the lock node's session is lost", framework.ErrSessionLost)
)

var errNilContext = fmt.Errorf("%w: nil context", framework.ErrInvalidArgument)

// Core runs the lock algorithm on one path for one node name.
type Core struct {
	client *framework.Client
	path   string
	name   string   // the node name prefix this core creates, e.g. "lock-"
	names  []string // every name that sorts under path, e.g. __READ__ and __WRIT__
	policy Policy

	// grants is set on an exclusive core (NewExclusive): its holds release
	// with a grant, and its waiters watch for their predecessor's.
	grants *clientGrants
	held   sync.Map // node -> *heldState, for each hold not yet released

	// Whether the lock path's ACL lets anyone delete (see openACL), at
	// aclVersion.
	aclMu      sync.Mutex
	aclKnown   bool
	aclVersion int32
	aclOpen    bool
}

// New returns a core that creates nodes named name under path and decides
// with policy. sortNames lists every node name that shares the path (name
// is added if missing). New does no I/O.
func New(client *framework.Client, path, name string, policy Policy, sortNames ...string) (*Core, error) {
	if client == nil {
		return nil, framework.ErrNilClient
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, err
	}
	if name == "" || policy == nil {
		return nil, fmt.Errorf("%w: lock node name and policy are required", framework.ErrInvalidArgument)
	}
	names := append([]string{name}, sortNames...)
	return &Core{client: client, path: path, name: name, names: names, policy: policy}, nil
}

// NewExclusive returns a core that creates nodes named name under path, of
// which one holds the lock at a time (MaxLeases(1)), handed from each
// holder to the next by a grant (see the package doc): a release through
// Delete is one multi that the next waiter sees without a read. Every
// hold's node must be deleted through Delete. NewExclusive does no I/O.
func NewExclusive(client *framework.Client, path, name string) (*Core, error) {
	c, err := New(client, path, name, MaxLeases(1))
	if err != nil {
		return nil, err
	}
	c.grants = grantsOf(client)
	return c, nil
}

// Path returns the lock's path.
func (c *Core) Path() string { return c.path }

// Client returns the core's client.
func (c *Core) Client() *framework.Client { return c.client }

// Acquire creates a contender node with data and waits until the policy
// says it holds the lock. wait < 0 waits without bound (until ctx ends);
// wait == 0 tries once; wait > 0 waits at most that long. When the wait
// runs out, Acquire returns ErrTimeout.
//
// The contender's node belongs to the session current when Acquire made
// it. If the node vanishes, or that session is lost (even while the server
// still lists the node), the node is deleted and the client's retry policy
// decides whether to start again with a fresh node; when it gives up the
// error matches ErrNodeVanished or ErrSessionLost. On any error the
// contender's node has been deleted (or its delete is guaranteed to
// follow).
func (c *Core) Acquire(ctx context.Context, data []byte, wait time.Duration) (*Hold, error) {
	if err := c.client.Check(); err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, errNilContext
	}
	parent := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	h, err := recipe.Restart(ctx, c.client.RetryPolicy(), restartable, func() (*Hold, error) {
		// The session is taken before the create, so that the node belongs
		// to it for as long as it stays valid.
		sess, err := c.client.CurrentSession(ctx)
		if err != nil {
			return nil, err
		}
		node, err := c.client.Create().CreatingParentContainersIfNeeded().WithProtection().
			WithMode(framework.EphemeralSequential).ForPath(ctx, framework.JoinPath(c.path, c.name), data)
		if err != nil {
			return nil, err
		}
		var clears []string
		h, err := c.waitHeld(ctx, sess, node, wait == 0, &clears)
		if err != nil {
			// Gone, untrusted, cancelled or failed: the node goes in every
			// case. An untrusted node may still be listed (its session lives
			// on in the server), and would stand in the queue until the
			// server's timeout.
			c.giveUp(ctx, node, clears)
			return nil, err
		}
		if c.grants != nil {
			c.held.Store(node, &heldState{clears: clears, plain: h.last})
		}
		return h, nil
	})
	if err != nil {
		return nil, c.timeoutErr(parent, ctx, err)
	}
	return h, nil
}

// restartable reports whether Acquire starts again after err, as the retry
// policy allows: the contender's node vanished, or its session was lost.
func restartable(err error) bool {
	return errors.Is(err, ErrNodeVanished) || errors.Is(err, ErrSessionLost)
}

// AcquireAt creates <path>/_c_<uuid>-<name><seq10> with data as a plain
// EPHEMERAL node, named with the sequence of owner's node instead of a new
// one, and holds it at once, without asking the policy. owner is a hold on
// the same path that the caller already has: a write holder taking the
// read lock (Curator 5.5's downgrade, CURATOR-621). The new node sorts
// where owner's does, so contenders queued behind owner stay behind the
// new node after owner's goes.
//
// The new node must belong to owner's session, and after the create, one
// children read checks that owner's node is still there, and gives the
// fencing token. If owner's session is no longer the client's, or its node
// is gone (its session expired, and another contender may hold the lock),
// the new node is deleted and AcquireAt returns ErrOwnerVanished: Curator
// would grant the lock anyway. On any error no node is left behind.
func (c *Core) AcquireAt(ctx context.Context, data []byte, owner *Hold) (*Hold, error) {
	if err := c.client.Check(); err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, errNilContext
	}
	if owner == nil {
		return nil, fmt.Errorf("%w: no owning hold", framework.ErrInvalidArgument)
	}
	ownerParent, ownerName := framework.SplitPath(owner.Node())
	if ownerParent != c.path || owner.seq < 0 {
		return nil, fmt.Errorf("%w: %s is not a lock node under %s", framework.ErrInvalidArgument, owner.Node(), c.path)
	}
	sess, err := c.client.CurrentSession(ctx)
	if err != nil {
		return nil, err
	}
	if owner.sess.ID() != sess.ID() || !owner.sess.Valid() {
		return nil, fmt.Errorf("%w (%w): %s", ErrOwnerVanished, ErrSessionLost, owner.Node())
	}
	lost := c.client.LossSignal(c.client.ErrorPolicy())
	name := fmt.Sprintf("%s%010d", c.name, owner.seq)
	node, err := c.client.Create().CreatingParentContainersIfNeeded().WithProtection().
		WithMode(framework.Ephemeral).ForPath(ctx, framework.JoinPath(c.path, name), data)
	if err != nil {
		return nil, err
	}
	kids, stat, err := c.client.GetChildren().ForPathStat(ctx, c.path)
	switch {
	case err != nil:
	case !sess.Valid():
		// The read may have run on a later session: it proves nothing.
		err = fmt.Errorf("%w (%w): %s", ErrOwnerVanished, ErrSessionLost, owner.Node())
	case index(kids, ownerName) < 0:
		err = fmt.Errorf("%w: %s", ErrOwnerVanished, owner.Node())
	}
	if err != nil {
		c.Delete(ctx, node)
		return nil, err
	}
	return &Hold{node: node, seq: owner.seq, sess: sess, token: stat.Pzxid, lost: lost}, nil
}

// timeoutErr turns the end of Acquire's own wait into ErrTimeout, and
// leaves the caller's ctx errors as they are.
func (c *Core) timeoutErr(parent, ctx context.Context, err error) error {
	if parent.Err() == nil && ctx.Err() != nil {
		return ErrTimeout
	}
	return err
}

// waitHeld runs steps 2 to 5 of the algorithm for our node, which sess
// created. Every read or event that could grant the lock counts only while
// sess is still valid: the client then has answered it on sess, so our
// node in the children list is ours. Otherwise it returns ErrSessionLost,
// and Acquire deletes the node and starts again. The names of predecessors
// whose grants it watched in vain are added to clears (see giveUp).
func (c *Core) waitHeld(ctx context.Context, sess framework.Session, node string, once bool, clears *[]string) (*Hold, error) {
	_, ours := framework.SplitPath(node)
	seq, _ := Sequence(ours, c.names...)
	for {
		// Take the loss signal before the read that may grant the lock, so
		// a suspension after it is never missed.
		lost := c.client.LossSignal(c.client.ErrorPolicy())
		kids, stat, err := c.client.GetChildren().ForPathStat(ctx, c.path)
		if err != nil {
			if errors.Is(err, zk.ErrNoNode) {
				return nil, fmt.Errorf("%w: %s", ErrNodeVanished, node)
			}
			return nil, err
		}
		if !sess.Valid() {
			return nil, fmt.Errorf("%w: %s", ErrSessionLost, node)
		}
		Sort(kids, c.names...)
		i := index(kids, ours)
		if i < 0 {
			return nil, fmt.Errorf("%w: %s", ErrNodeVanished, node)
		}
		held, watch := c.policy(kids, i)
		if held && chans.IsClosed(lost) {
			// The connection dropped between the signal and the read (which
			// waited for it to come back): a hold granted now would be lost
			// at once. Read again, with a fresh signal.
			continue
		}
		if held {
			return &Hold{node: node, seq: seq, sess: sess, token: stat.Pzxid, lost: lost, last: i == len(kids)-1}, nil
		}
		if once {
			return nil, ErrTimeout
		}
		// Decide now, so the children list is dead during the wait: with
		// thousands of waiters each list is large.
		heldOnDelete := c.heldWithout(kids, i, watch)
		if c.grants != nil && kids[i-1] == watch && c.watchable(ctx) {
			h, err := c.waitGrant(ctx, sess, node, seq, watch, heldOnDelete, lost, stat, clears)
			if h != nil || err != nil {
				return h, err
			}
			continue
		}
		_, _, ch, err := c.client.GetData().ForPathW(ctx, framework.JoinPath(c.path, watch))
		if errors.Is(err, zk.ErrNoNode) {
			continue // it went while we looked: read again
		}
		if err != nil {
			return nil, err
		}
		select {
		case ev := <-ch:
			if ev.Type == zk.EventNodeDeleted && heldOnDelete && !chans.IsClosed(lost) && sess.Valid() {
				h, err := c.confirmOnDelete(ctx, sess, node, seq, lost)
				if h != nil || err != nil {
					return h, err
				}
			}
		case <-sess.Lost():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// waitGrant waits, on an exclusive core, for pred, our immediate
// predecessor in the last read, to go. It sets three watches into one
// channel: a data watch on pred's node (whose stat names pred's owner, the
// one session whose grant counts), an exists watch on pred's grant, then a
// data watch on our own node. It returns the hold if pred
// released by grant (or pred was the only node ahead, and went), and nil,
// nil when the caller must read the children again. lost is the loss
// signal taken before the children read, whose stat of the lock path was
// lockStat.
//
// Nothing but the queue makes a holder (see the package doc, "What a
// grant proves"):
//   - no event is looked at before our own node's watch is set: if
//     another session deletes our node after that, the event is in the
//     channel before any later grant or delete, and before that the watch's
//     read finds no node; so a grant or delete seen with no event of our own
//     node before it is seen while our node is there;
//   - a grant counts only if pred's own session created it. A NodeCreated
//     does not tell, so the grant is read (its stat gives the owner and the
//     fencing token), unless the lock's ACL lets anyone delete its nodes
//     (openACL): whoever could forge the grant could then as well delete
//     the holder's node, which hands the lock on by itself.
//
// pred's NodeDeleted with no grant's event before it is no grant:
// go-zookeeper delivers events from one goroutine in the server's order,
// the client passes them on in that order, and a multi's events come in
// the order of its operations, so the grant's event is in the channel
// first when pred released by grant.
func (c *Core) waitGrant(ctx context.Context, sess framework.Session, node string, seq int64, pred string,
	heldOnDelete bool, lost <-chan struct{}, lockStat *zk.Stat, clears *[]string) (*Hold, error) {
	gpath := grantPath(pred)
	pred = gpath[len(GrantsDir)+1:] // the read's list, pred's only other holder, can go
	ppath := framework.JoinPath(c.path, pred)
	// Three slots: each watch sends at most one event.
	ch := make(chan zk.Event, 3)
	valid := func() bool { return sess.Valid() && !chans.IsClosed(lost) }
	// ownEvent reports an event of our own node: gone (an error), or
	// changed (read again).
	ownEvent := func(ev zk.Event) (*Hold, error) {
		if ev.Type == zk.EventNodeDeleted {
			return nil, fmt.Errorf("%w: %s", ErrNodeVanished, node)
		}
		return nil, nil
	}
	open := c.openACL(ctx, lockStat)
	_, pstat, _, perr := c.client.GetData().Into(ch).ForPathW(ctx, ppath)
	var (
		gstat *zk.Stat
		gerr  error
	)
	if perr == nil {
		gstat, _, gerr = c.client.CheckExists().Into(ch).ForPathW(ctx, gpath)
	}
	// Our own node's watch goes last (in the set-up, which runs while the
	// nodes ahead hold, not in the hand-off), and no event is looked at
	// before its reply: our node was there when it was set, and a delete of
	// it after that comes in ch before any later event. (Set from a
	// goroutine beside the other two, it cost ten thousand waiters 2 KB
	// each: the runtime keeps every goroutine it ever ran at once.)
	_, ostat, _, oerr := c.client.GetData().Into(ch).ForPathW(ctx, node)
	switch {
	case errors.Is(oerr, zk.ErrNoNode) || oerr == nil && ostat.EphemeralOwner != sess.ID():
		if perr == nil && gerr == nil && gstat == nil {
			*clears = append(*clears, pred) // cleared beside our node's delete
		}
		return nil, fmt.Errorf("%w: %s", ErrNodeVanished, node)
	case oerr != nil:
		if perr == nil && gerr == nil && gstat == nil {
			*clears = append(*clears, pred)
		}
		return nil, oerr
	}
	switch {
	case errors.Is(perr, zk.ErrNoNode):
		// pred went before we looked: whose grant would count is unknown.
		if heldOnDelete && valid() {
			return c.confirmOnDelete(ctx, sess, node, seq, lost)
		}
		return nil, nil
	case perr != nil:
		return nil, perr
	}
	owner := pstat.EphemeralOwner
	if gerr == nil && gstat != nil {
		// pred released by grant between our requests (its NodeDeleted is in
		// ch), or someone else made a node of that name: it is a grant only
		// if pred's session made it, and our node was there after it.
		for pending := true; pending; {
			select {
			case ev := <-ch:
				if ev.Path == node {
					return ownEvent(ev)
				}
			default:
				pending = false
			}
		}
		if gstat.EphemeralOwner == owner && valid() {
			return &Hold{node: node, seq: seq, sess: sess, token: gstat.Czxid, lost: lost}, nil
		}
		c.foreignGrant(gpath, gstat.EphemeralOwner)
	}
	// armed: our exists watch on the absent grant is set and has not fired;
	// it must be cleared once pred is known gone without a grant (see
	// giveUp).
	armed := gerr == nil && gstat == nil
	for {
		select {
		case ev := <-ch:
			switch ev.Path {
			case node:
				if armed {
					if _, fired := grantEvent(ch, gpath); !fired {
						*clears = append(*clears, pred) // cleared beside our node's delete
					}
				}
				return ownEvent(ev)
			case gpath:
				armed = false
				if ev.Type == zk.EventNodeCreated && valid() {
					if open {
						return c.grantOnDelete(node, seq, sess, lost, gpath), nil
					}
					h, err := c.confirmGrant(ctx, sess, node, seq, lost, gpath, owner)
					if h != nil || err != nil {
						return h, err
					}
				}
				// Not pred's grant (or gone before we read it): pred's own event
				// decides.
				continue
			}
			if ev.Type != zk.EventNodeDeleted {
				return nil, nil // pred's data changed, or the watch ended: read again
			}
			// pred's delete came with no grant's event before it: no grant.
			if armed {
				*clears = append(*clears, pred)
			}
			if heldOnDelete && valid() {
				// Our node's watch fired on nothing before pred's delete: it was
				// there when pred went.
				return c.grantOnDelete(node, seq, sess, lost, ""), nil
			}
			return nil, nil
		case <-sess.Lost():
			return nil, nil
		case <-ctx.Done():
			if armed {
				if _, fired := grantEvent(ch, gpath); !fired {
					// Our give-up clears the watch beside the delete of our node.
					*clears = append(*clears, pred)
				}
			}
			return nil, ctx.Err()
		}
	}
}

// confirmGrant returns the hold granted by pred's grant at gpath, once a
// read shows that pred's session (owner) made it; the read gives the
// fencing token, the grant's czxid. It returns nil, nil when the grant is
// not pred's or is gone (the caller waits for pred's own event).
func (c *Core) confirmGrant(ctx context.Context, sess framework.Session, node string, seq int64, lost <-chan struct{},
	gpath string, owner int64) (*Hold, error) {
	st, err := c.client.CheckExists().ForPath(ctx, gpath)
	switch {
	case err != nil:
		return nil, err
	case st == nil:
		return nil, nil // deleted already: pred's event decides
	case st.EphemeralOwner != owner:
		c.foreignGrant(gpath, st.EphemeralOwner)
		return nil, nil
	case !sess.Valid() || chans.IsClosed(lost):
		return nil, nil
	}
	return &Hold{node: node, seq: seq, sess: sess, token: st.Czxid, lost: lost}, nil
}

// confirmOnDelete returns the hold granted by the delete of the only node
// ahead of ours, once a read shows our own node still there, owned by
// sess. It returns nil, nil when the signal closed meanwhile (read again).
func (c *Core) confirmOnDelete(ctx context.Context, sess framework.Session, node string, seq int64, lost <-chan struct{}) (*Hold, error) {
	if err := c.ownNode(ctx, sess, node); err != nil {
		return nil, err
	}
	if !sess.Valid() || chans.IsClosed(lost) {
		return nil, nil
	}
	return c.grantOnDelete(node, seq, sess, lost, ""), nil
}

// ownNode returns nil if our node is there and owned by sess, and an error
// matching ErrNodeVanished if it is not: another session deleted it (an
// operator clearing a "stuck" contender), or its session ended. A waiter
// whose node is gone holds nothing, whatever its predecessor does.
func (c *Core) ownNode(ctx context.Context, sess framework.Session, node string) error {
	st, err := c.client.CheckExists().ForPath(ctx, node)
	switch {
	case err != nil:
		return err
	case st == nil || st.EphemeralOwner != sess.ID():
		return fmt.Errorf("%w: %s", ErrNodeVanished, node)
	}
	return nil
}

// openACL reports whether the lock path's ACL, at the version lockStat
// shows, lets anyone (world:anyone) delete its children: then anyone who
// can forge a grant can as well delete the holder's node, and a grant's
// owner need not be read. The answer is kept per ACL version; a failed
// read of the ACL answers false.
func (c *Core) openACL(ctx context.Context, lockStat *zk.Stat) bool {
	if lockStat == nil {
		return false
	}
	c.aclMu.Lock()
	if c.aclKnown && c.aclVersion == lockStat.Aversion {
		open := c.aclOpen
		c.aclMu.Unlock()
		return open
	}
	c.aclMu.Unlock()
	acl, st, err := c.client.GetACL().ForPath(ctx, c.path)
	if err != nil || st == nil {
		return false
	}
	open := false
	for _, a := range acl {
		if a.Scheme == "world" && a.ID == "anyone" && a.Perms&zk.PermDelete != 0 {
			open = true
		}
	}
	c.aclMu.Lock()
	c.aclKnown, c.aclVersion, c.aclOpen = true, st.Aversion, open
	c.aclMu.Unlock()
	return open && st.Aversion == lockStat.Aversion
}

// grantEvent reports, without waiting, whether ch has delivered the event
// of the exists watch on gpath, and whether that event is a NodeCreated.
func grantEvent(ch <-chan zk.Event, gpath string) (created, fired bool) {
	for {
		select {
		case ev := <-ch:
			if ev.Path == gpath {
				return ev.Type == zk.EventNodeCreated, true
			}
		default:
			return false, false
		}
	}
}

// heldWithout reports whether the contender at index i of kids would hold
// the lock once the node it watches is gone. Policies look only at the
// nodes ahead of the contender, and no node can join ahead of it later (the
// server's sequence numbers only grow while the contender's node keeps the
// parent alive), so if this holds when the watched node is deleted, the
// contender holds the lock without reading the children again.
//
// That last premise fails on a path shared by several node names: a read
// lock downgrade (CURATOR-621, Curator 5.5+ and AcquireAt) adds a node with
// an old sequence number, ahead of queued contenders. Such cores always
// read again.
func (c *Core) heldWithout(kids []string, i int, watch string) bool {
	if len(c.names) > 1 {
		return false
	}
	w := index(kids[:i], watch)
	if w < 0 {
		return false
	}
	rest := append(append(make([]string, 0, len(kids)-1), kids[:w]...), kids[w+1:]...)
	held, _ := c.policy(rest, i-1)
	return held
}

// grantOnDelete returns the hold granted by the delete of the watched
// node, the only one ahead of ours (grant == ""), or by the creation of its
// grant (grant is its path) where the grant's owner need not be read (see
// openACL), seen while sess was valid and our node was there. No read was
// needed to grant it, so the hold reads its fencing token when it is first
// asked for: the grant's czxid (the release multi's zxid, and so the lock
// path's pzxid at the hand-off) while the grant is still there; otherwise
// the lock path's pzxid, read while our node is listed. Either is trusted
// only if sess is still valid after the read.
func (c *Core) grantOnDelete(node string, seq int64, sess framework.Session, lost <-chan struct{}, grant string) *Hold {
	_, ours := framework.SplitPath(node)
	read := func() (int64, error) {
		if !sess.Valid() {
			return 0, fmt.Errorf("%w: %s", ErrSessionLost, node)
		}
		ctx, cancel := recipe.Detached(context.Background())
		defer cancel()
		if grant != "" {
			stat, err := c.client.CheckExists().ForPath(ctx, grant)
			if err == nil && stat != nil && sess.Valid() {
				return stat.Czxid, nil
			}
		}
		kids, stat, err := c.client.GetChildren().ForPathStat(ctx, c.path)
		switch {
		case err != nil:
			return 0, err
		case !sess.Valid():
			return 0, fmt.Errorf("%w: %s", ErrSessionLost, node)
		case index(kids, ours) < 0:
			return 0, fmt.Errorf("%w: %s", ErrNodeVanished, node)
		}
		return stat.Pzxid, nil
	}
	return &Hold{node: node, seq: seq, sess: sess, lost: lost, readToken: read}
}

// Delete removes a contender's or holder's node with a detached, bounded
// context and a guaranteed delete, so that it goes even when ctx is
// cancelled or the connection is down. The node of a hold of an exclusive
// core not yet released goes with a grant to its successor (release).
func (c *Core) Delete(ctx context.Context, node string) error {
	if st, ok := c.held.LoadAndDelete(node); ok {
		st := st.(*heldState)
		return c.release(ctx, node, st.plain, st.clears)
	}
	return recipe.Delete(ctx, c.client, node)
}

// Participants returns the paths of the contenders' nodes in queue order,
// as Curator's getParticipantNodes does.
func (c *Core) Participants(ctx context.Context) ([]string, error) {
	kids, err := c.client.GetChildren().ForPath(ctx, c.path)
	if errors.Is(err, zk.ErrNoNode) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	Sort(kids, c.names...)
	for i, k := range kids {
		kids[i] = framework.JoinPath(c.path, k)
	}
	return kids, nil
}
