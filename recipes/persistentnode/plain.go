package persistentnode

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-zookeeper/zk"
)

// twinDelay is how long after a create of unknown outcome a plain
// sequential Node looks again for a node that a late request of that create
// made beside its own (the framework's protected creates wait as long).
const twinDelay = 2 * time.Second

// ensurePlain is ensure for an unprotected EphemeralSequential node
// (WithoutProtection): it keeps the last node if it is there and of sess,
// and otherwise creates one. A create of unknown outcome is resolved by
// owner: a node of the name pattern owned by sess is ours.
func (e *engine) ensurePlain(ctx context.Context, sess framework.Session, last string) (string, error) {
	if last != "" {
		_, stat, err := e.client.GetData().ForPath(ctx, last)
		switch {
		case errors.Is(err, zk.ErrNoNode):
		case err != nil:
			return "", err
		case stat.EphemeralOwner == sess.ID():
			return last, nil
		default:
			if err := e.client.Delete().Guaranteed().Quietly().ForPath(ctx, last); err != nil {
				return "", err
			}
		}
	}
	e.mu.Lock()
	e.tried = true // Close looks for a node of unknown outcome
	e.mu.Unlock()
	buf, gen := e.snapshot()
	p, err := e.creator().ForPath(ctx, e.base, buf)
	if errors.Is(err, framework.ErrIndeterminate) {
		e.mu.Lock()
		e.unsure = sess.ID()
		e.mu.Unlock()
		found, ferr := e.sweepOwn(ctx, func(owner int64) bool { return owner == sess.ID() }, "")
		switch {
		case ferr != nil:
			return "", errors.Join(err, ferr)
		case found == "":
			return "", err // not made (or not yet): the next round creates
		}
		p, err = found, nil
	}
	if err != nil {
		return "", err
	}
	e.created(p, gen)
	return p, nil
}

// plainName reports whether name is the base's name with a sequence
// suffix: <name><10 digits>.
func (e *engine) plainName(name string) bool {
	_, base := framework.SplitPath(e.base)
	seq, ok := strings.CutPrefix(name, base)
	if !ok || len(seq) != 10 {
		return false
	}
	for _, c := range seq {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// sweepOwn lists the nodes of the name pattern whose owner ours accepts,
// keeps keep (or, when keep is "", the newest) and deletes the others; it
// returns the path kept, or "" when none is left.
func (e *engine) sweepOwn(ctx context.Context, ours func(owner int64) bool, keep string) (string, error) {
	parent, _ := framework.SplitPath(e.base)
	kids, err := e.client.GetChildren().ForPath(ctx, parent)
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var mine []string
	for _, k := range kids {
		if !e.plainName(k) {
			continue
		}
		p := framework.JoinPath(parent, k)
		stat, err := e.client.CheckExists().ForPath(ctx, p)
		if err != nil {
			return "", err
		}
		if stat != nil && ours(stat.EphemeralOwner) {
			mine = append(mine, p)
		}
	}
	if keep == "" {
		for _, p := range mine {
			keep = max(keep, p) // the same prefix and width: the newest sorts last
		}
	}
	var errs []error
	for _, p := range mine {
		if p == keep {
			continue
		}
		if err := e.client.Delete().Quietly().ForPath(ctx, p); err != nil {
			errs = append(errs, fmt.Errorf("delete twin %s: %w", p, err))
		}
	}
	return keep, errors.Join(errs...)
}

// twinCheck returns a channel that fires when p, the node of sess, should
// be checked once more for a twin (a create of unknown outcome ran on
// sess), or nil; stop releases its timer.
func (e *engine) twinCheck(sess framework.Session) (c <-chan time.Time, stop func()) {
	e.mu.Lock()
	unsure := e.plain && e.unsure == sess.ID()
	e.unsure = 0
	e.mu.Unlock()
	if !unsure {
		return nil, func() {}
	}
	t := time.NewTimer(twinDelay)
	return t.C, func() { t.Stop() }
}
