package lockcore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"weak"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// GrantsDir is the persistent node, under the client's namespace, whose
// ephemeral children are the grants of every exclusive core: one named
// after each releasing node (see the package doc).
const GrantsDir = "/go-curator-grants"

// maxClears bounds the transient create-and-delete pairs one multi
// carries; a waiter that collected more (more predecessors vanished while
// it waited) clears them in a multi of their own.
const maxClears = 8

// grantPath returns the path of the grant named after the lock node name.
func grantPath(name string) string { return GrantsDir + "/" + name }

// clientGrants is what a client's exclusive cores share: the grants its
// releases made and have not deleted yet, and whether grants work at all
// on it. Each release deletes those left by the client's earlier
// releases, so a client leaves at most one grant, plus one per release in
// flight, whatever the number of paths it locks.
type clientGrants struct {
	mu      sync.Mutex
	old     []string      // grant paths to delete
	off     bool          // grants failed for a reason a retry will not fix
	probed  bool          // a transient create in GrantsDir succeeded on this client
	probing chan struct{} // closed when the probe in flight ends
	foreign bool          // a grant made by another session was logged
}

var (
	grantsMu sync.Mutex
	grantsBy = map[weak.Pointer[framework.Client]]*clientGrants{}
)

// grantsOf returns client's grant state. The entry goes when the client
// is collected.
func grantsOf(client *framework.Client) *clientGrants {
	k := weak.Make(client)
	grantsMu.Lock()
	defer grantsMu.Unlock()
	if g := grantsBy[k]; g != nil {
		return g
	}
	g := &clientGrants{}
	grantsBy[k] = g
	runtime.AddCleanup(client, func(k weak.Pointer[framework.Client]) {
		grantsMu.Lock()
		delete(grantsBy, k)
		grantsMu.Unlock()
	}, k)
	return g
}

func (g *clientGrants) usable() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.off
}

// watchable reports whether a waiter may watch a grant: grants are usable
// and this client has shown it can create (and so clear) grants. The first
// waiter to ask probes, with a transient create and delete in GrantsDir
// (creating the directory if it is missing); waiters that ask meanwhile
// wait for its answer. A directory that refuses our creates (another
// identity made it, with an ACL that leaves us out) turns grants off for
// the client, logged once, before any exists watch is set: a waiter can
// clear a grant's exists watch only by creating the grant, so on such a
// directory every cancelled wait would leave a watch for the session's
// life. A probe that fails for another reason (the connection) is tried
// again by the next waiter.
func (c *Core) watchable(ctx context.Context) bool {
	g := c.grants
	for {
		g.mu.Lock()
		switch {
		case g.off:
			g.mu.Unlock()
			return false
		case g.probed:
			g.mu.Unlock()
			return true
		case g.probing != nil:
			wait := g.probing
			g.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return false
			}
		}
		done := make(chan struct{})
		g.probing = done
		g.mu.Unlock()
		ok := c.probe(ctx)
		g.mu.Lock()
		g.probing = nil
		g.probed = ok
		off := g.off
		g.mu.Unlock()
		close(done)
		return ok && !off
	}
}

// probe creates and deletes a grant of a name no lock node has, in one
// multi, and reports whether it committed.
func (c *Core) probe(ctx context.Context) bool {
	p := grantPath("probe-" + uuid.NewString())
	tx := c.client.Transaction().Create(p, nil, framework.Ephemeral).Delete(p, -1)
	_, err := tx.Commit(ctx)
	if errors.Is(err, zk.ErrNoNode) && c.ensureDir(ctx) {
		_, err = tx.Commit(ctx)
	}
	switch {
	case err == nil:
		return true
	case errors.Is(err, zk.ErrNoAuth):
		c.disable("cannot create in "+GrantsDir+" (its ACL was set by another identity)", err)
	}
	return false
}

// foreignGrant logs, once per client, a node in GrantsDir named after a
// lock node and made by another session than that node's: it grants
// nothing (see the package doc), and costs the lock's waiters a read.
func (c *Core) foreignGrant(path string, owner int64) {
	g := c.grants
	g.mu.Lock()
	first := !g.foreign
	g.foreign = true
	g.mu.Unlock()
	if first {
		c.client.Logger().Warn("lockcore: ignoring a grant its lock node's session did not make (someone else can create in "+GrantsDir+")",
			"grant", path, "owner", fmt.Sprintf("0x%x", owner))
	}
}

// take returns the grants left to delete, and forgets them.
func (g *clientGrants) take() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.old
	g.old = nil
	return old
}

// keep adds grants to delete at the next release.
func (g *clientGrants) keep(paths ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.old = append(g.old, paths...)
}

// disable turns grants off for the client, and logs why the first time.
func (c *Core) disable(why string, err error) {
	g := c.grants
	g.mu.Lock()
	first := !g.off
	g.off = true
	g.mu.Unlock()
	if first {
		c.client.Logger().Warn("lockcore: grants disabled on this client: "+why+"; hand-offs read the queue as Curator's do", "err", err)
	}
}

// ensureDir creates GrantsDir if it is missing. A failure other than a
// connection's disables grants on the client: its releases then delete
// their nodes plainly, and its waiters read.
func (c *Core) ensureDir(ctx context.Context) bool {
	_, err := c.client.Create().WithMode(framework.Persistent).ForPath(ctx, GrantsDir, nil)
	switch {
	case err == nil, errors.Is(err, zk.ErrNodeExists):
		return true
	case framework.IsRetryable(err), errors.Is(err, framework.ErrIndeterminate), ctx.Err() != nil:
		return false
	}
	c.disable("cannot create "+GrantsDir, err)
	return false
}

// heldState is what a hold of an exclusive core keeps for its release:
// whether it releases without a grant (plain: the read that granted it
// listed nobody after it), and the grants whose exists watches its wait
// left armed (see clear).
type heldState struct {
	plain  bool
	clears []string
}

// release deletes node, the node of a hold of an exclusive core, in one
// multi that also creates the grant named after it (unless plain), deletes
// the grants the client's earlier releases left, and clears the grant
// watches left by the hold's wait (clears). Whatever goes wrong with the
// grant, the node is deleted: a multi that fails for another reason than
// one it can fix falls back to the plain guaranteed delete, and a missing
// grant only costs the successor a read.
func (c *Core) release(ctx context.Context, node string, plain bool, clears []string) error {
	if !c.grants.usable() {
		return recipe.Delete(ctx, c.client, node)
	}
	old := c.grants.take()
	if plain && len(old) == 0 && len(clears) == 0 {
		return recipe.Delete(ctx, c.client, node)
	}
	dctx, cancel := recipe.Detached(ctx)
	defer cancel()
	if n := len(clears) - maxClears; n > 0 {
		c.clear(dctx, clears[:n]) // all of predecessors gone: safe alone
		clears = clears[n:]
	}
	_, name := framework.SplitPath(node)
	mine := grantPath(name)
	// The operations: [create mine,] delete node, delete old..., clears.
	first := 0 // index of the delete of node
	if !plain {
		first = 1
	}
	ensured := false
	for range 8 {
		tx := c.client.Transaction()
		if !plain {
			tx = tx.Create(mine, nil, framework.Ephemeral)
		}
		tx = tx.Delete(node, -1)
		for _, o := range old {
			tx = tx.Delete(o, -1)
		}
		tx = withClears(tx, clears)
		res, err := tx.Commit(dctx)
		if err == nil {
			if !plain {
				c.grants.keep(mine)
			}
			return nil
		}
		i := failedOp(res)
		switch {
		case i == 0 && !plain && errors.Is(err, zk.ErrNoNode) && !ensured:
			// GrantsDir is missing: make it once, and try again.
			ensured = true
			if c.ensureDir(dctx) {
				continue
			}
		case i > first && i <= first+len(old):
			// That grant is gone already (its session ended), or is not ours to
			// delete (a name another session took): forget it.
			old = slices.Delete(old, i-first-1, i-first)
			continue
		case i > first+len(old) && len(clears) > 0:
			clears = nil
			continue
		case i == 0 && !plain && errors.Is(err, zk.ErrNoAuth):
			// We may not create grants: release plainly from now on.
			c.disable("cannot create in "+GrantsDir, err)
		}
		if !plain && (i == 0 && errors.Is(err, zk.ErrNodeExists) || errors.Is(err, framework.ErrIndeterminate)) {
			// A first attempt whose reply was lost may have committed:
			// its grant is ours to delete later.
			old = append(old, mine)
		}
		break
	}
	c.grants.keep(old...)
	return recipe.Delete(ctx, c.client, node)
}

// giveUp deletes node, a contender's node that never held the lock, in one
// multi that also creates and deletes the grant of each name in clears:
// the grants of predecessors the contender watched whose exists watches
// have not fired. The create fires those watches, which go-zookeeper
// cannot remove, so they do not stay on the server; no read ever sees
// such a grant (it is created and deleted in one transaction), and no
// waiter takes the event for a grant (see the package doc). Any failure
// falls back to the plain guaranteed delete.
func (c *Core) giveUp(ctx context.Context, node string, clears []string) error {
	if len(clears) == 0 || !c.grants.usable() {
		return recipe.Delete(ctx, c.client, node)
	}
	dctx, cancel := recipe.Detached(ctx)
	defer cancel()
	if n := len(clears) - maxClears; n > 0 {
		// The last name may be of a predecessor still there, whose grant
		// only a multi that deletes our node may touch: it stays here.
		c.clear(dctx, clears[:n])
		clears = clears[n:]
	}
	tx := withClears(c.client.Transaction().Delete(node, -1), clears)
	res, err := tx.Commit(dctx)
	if err != nil && failedOp(res) > 0 && errors.Is(err, zk.ErrNoNode) && c.ensureDir(dctx) {
		_, err = tx.Commit(dctx) // GrantsDir was missing
	}
	if err == nil {
		return nil
	}
	return recipe.Delete(ctx, c.client, node)
}

// clear fires the exists watches on the grants of names with a multi of
// its own, at most maxClears at a time; errors are ignored (a watch left
// behind costs the server a little memory until the session ends).
func (c *Core) clear(ctx context.Context, names []string) {
	for len(names) > 0 {
		n := min(len(names), maxClears)
		tx := withClears(c.client.Transaction(), names[:n])
		if _, err := tx.Commit(ctx); errors.Is(err, zk.ErrNoNode) && c.ensureDir(ctx) {
			_, _ = tx.Commit(ctx)
		}
		names = names[n:]
	}
}

// withClears adds to tx the create and delete of the grant of each name.
func withClears(tx framework.Transaction, names []string) framework.Transaction {
	for _, n := range names {
		tx = tx.Create(grantPath(n), nil, framework.Ephemeral).Delete(grantPath(n), -1)
	}
	return tx
}

// failedOp returns the index of the operation that failed a transaction,
// or -1.
func failedOp(res []framework.OpResult) int {
	for i, r := range res {
		if r.Err != nil && !errors.Is(r.Err, zk.ErrAPIError) && r.Err.Error() != "unknown error: -2" {
			return i
		}
	}
	return -1
}
