package leaderselector

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
)

// Participant is one candidate of an election, as Curator's Participant.
type Participant struct {
	// ID is the candidate's participant ID: its node's data as text (the
	// client's default data for a candidate without an ID).
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
// It returns ErrClosed after Close. A path with no candidate gives an
// empty list.
func (e *Election) Participants(ctx context.Context) ([]Participant, error) {
	if err := e.usable(); err != nil {
		return nil, err
	}
	ps, err := e.participants(ctx, false)
	if err != nil {
		return nil, recipe.Wrapf(ErrInvalidArgument, "leaderselector: participants %s: %w", e.path, err)
	}
	return ps, nil
}

// Leader reads the current leader: the first candidate in line whose node
// is still there. It returns ErrNoLeader when there is no candidate, and
// ErrClosed after Close.
func (e *Election) Leader(ctx context.Context) (Participant, error) {
	if err := e.usable(); err != nil {
		return Participant{}, err
	}
	ps, err := e.participants(ctx, true)
	if err != nil {
		return Participant{}, recipe.Wrapf(ErrInvalidArgument, "leaderselector: leader %s: %w", e.path, err)
	}
	if len(ps) == 0 {
		return Participant{}, fmt.Errorf("%w at %s", ErrNoLeader, e.path)
	}
	return ps[0], nil
}

// participants lists the candidates in line order, stopping at the first
// one found if firstOnly.
func (e *Election) participants(ctx context.Context, firstOnly bool) ([]Participant, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	nodes, err := e.core.Participants(ctx)
	if err != nil {
		return nil, err
	}
	ps := make([]Participant, 0, len(nodes))
	for _, node := range nodes {
		data, _, err := e.client.GetData().ForPath(ctx, node)
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

// LeaderInfo is the leader that Observe reports.
type LeaderInfo struct {
	// ID is the leader's participant ID (its node's data as text).
	ID string
	// Node is the path of the leader's node.
	Node string
}

// Observe follows the election's leader, as etcd's Election.Observe: the
// returned channel receives the current leader, and then each new leader,
// until ctx ends or the Election closes; then it is closed. Nothing is
// sent while there is no candidate.
//
// Observe reads the first node in line and watches it (or, with no
// candidate, the path's children), so a leader is reported once, when a
// read finds it first in line; a leader that comes and goes between two
// reads is not seen, since ZooKeeper keeps no history. The channel is
// unbuffered: a slow receiver delays the next read, and then gets the
// leader as that read finds it; nothing queues up. A nil or done ctx, or
// a closed Election, gives a closed channel.
func (e *Election) Observe(ctx context.Context) <-chan LeaderInfo {
	ch := make(chan LeaderInfo)
	if e.usable() != nil || ctx == nil || ctx.Err() != nil {
		close(ch)
		return ch
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		close(ch)
		return ch
	}
	e.wg.Add(1)
	e.mu.Unlock()
	go e.observe(ctx, ch)
	return ch
}

func (e *Election) observe(ctx context.Context, ch chan<- LeaderInfo) {
	defer e.wg.Done()
	defer close(ch)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(e.ctx, cancel)
	defer stop()
	var (
		last string // the node last reported
		wait backoff
	)
	for ctx.Err() == nil {
		watch, info, err := e.readLeader(ctx)
		if err != nil {
			if errors.Is(err, framework.ErrClosed) {
				return
			}
			wait.sleep(ctx)
			continue
		}
		wait.reset()
		if info != nil && info.Node != last {
			select {
			case ch <- *info:
				last = info.Node
			case <-ctx.Done():
				return
			}
		}
		if watch == nil {
			continue // something changed while we read: read again
		}
		select {
		case <-watch:
		case <-ctx.Done():
			return
		}
	}
}

// readLeader reads the leader with a watch that fires when it goes or
// changes; with no candidate, a watch that fires when one joins (or the
// path is created). A nil watch and nil info mean: read again.
func (e *Election) readLeader(ctx context.Context) (<-chan zk.Event, *LeaderInfo, error) {
	nodes, err := e.core.Participants(ctx)
	if err != nil {
		return nil, nil, err
	}
	if len(nodes) > 0 {
		data, _, w, err := e.client.GetData().ForPathW(ctx, nodes[0])
		if errors.Is(err, zk.ErrNoNode) {
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		return w, &LeaderInfo{ID: string(data), Node: nodes[0]}, nil
	}
	kids, w, err := e.client.GetChildren().ForPathW(ctx, e.path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		stat, w, err := e.client.CheckExists().ForPathW(ctx, e.path)
		if err != nil || stat != nil {
			return nil, nil, err // created in between: read again
		}
		return w, nil, nil
	case err != nil:
		return nil, nil, err
	case len(kids) > 0:
		return nil, nil, nil // joined in between: read again
	}
	return w, nil, nil
}
