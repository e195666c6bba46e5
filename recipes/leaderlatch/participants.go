package leaderlatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// Participant is one candidate of an election, as Curator's Participant.
type Participant struct {
	// ID is the candidate's participant ID: its node's data as text.
	ID string
	// Node is the path of the candidate's node.
	Node string
	// IsLeader reports whether the candidate was the leader when read.
	IsLeader bool
}

// Participants reads the election's candidates, in line order: the first
// is the leader. It reads the children and then each node's data; a node
// that goes in between is left out, and the first node still there is
// marked as the leader (Curator marks the first listed, even if it went).
// Like Curator's, it reads the server: it may disagree with HasLeadership,
// which is local. It works without Start (it only reads), and returns
// ErrClosed after Close. A path with no candidate gives an empty list.
func (l *Latch) Participants(ctx context.Context) ([]Participant, error) {
	if err := l.usable(); err != nil {
		return nil, err
	}
	ps, err := participants(ctx, l.client, l.path, false)
	if err != nil {
		return nil, recipe.Wrapf(ErrInvalidArgument, "leaderlatch: participants %s: %w", l.path, err)
	}
	return ps, nil
}

// Leader reads the current leader of the election: the first candidate in
// line whose node is still there. It returns ErrNoLeader when there is no
// candidate, and ErrClosed after Close.
func (l *Latch) Leader(ctx context.Context) (Participant, error) {
	if err := l.usable(); err != nil {
		return Participant{}, err
	}
	ps, err := participants(ctx, l.client, l.path, true)
	if err != nil {
		return Participant{}, recipe.Wrapf(ErrInvalidArgument, "leaderlatch: leader %s: %w", l.path, err)
	}
	if len(ps) == 0 {
		return Participant{}, fmt.Errorf("%w at %s", ErrNoLeader, l.path)
	}
	return ps[0], nil
}

// participants lists the candidates at path in line order, stopping at
// the first one found if firstOnly.
func participants(ctx context.Context, c *framework.Client, path string, firstOnly bool) ([]Participant, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	kids, err := c.GetChildren().ForPath(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return []Participant{}, nil
	}
	if err != nil {
		return nil, err
	}
	lockcore.Sort(kids, latchName)
	ps := make([]Participant, 0, len(kids))
	for _, k := range kids {
		node := framework.JoinPath(path, k)
		data, _, err := c.GetData().ForPath(ctx, node)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		ps = append(ps, Participant{ID: string(data), Node: node, IsLeader: len(ps) == 0})
		if firstOnly {
			break
		}
	}
	return ps, nil
}
