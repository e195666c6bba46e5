package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// zkLockRunner runs go-zookeeper's own zk.Lock: one connection (session)
// and one Lock per worker. zk.Lock has no context, so a worker still
// waiting when the window closes finishes its acquire after it.
func zkLockRunner(ctx context.Context, s spec) (*Result, error) {
	conns, err := newConns(ctx, s.connect, s.clients)
	if err != nil {
		return nil, err
	}
	defer closeConns(conns)
	steps := make([]step, len(conns))
	for i, conn := range conns {
		l := zk.NewLock(conn, s.path, zk.WorldACL(zk.PermAll))
		steps[i] = lockStep(s.kind, 1, func(context.Context) (func(context.Context) error, error) {
			if err := l.Lock(); err != nil {
				return nil, err
			}
			return func(context.Context) error { return l.Unlock() }, nil
		})
	}
	return measure(ctx, s, steps), nil
}

// rawLock is the floor: the standard lock algorithm with nothing but
// go-zookeeper calls, and the same node names and data as go-curator's
// mutex. Uncontended, a cycle is one create, one getChildren and one delete.
type rawLock struct {
	conn *zk.Conn
	path string
	data []byte
}

// acquire creates our node and waits until it is the lowest, watching only
// its predecessor. A cancelled wait deletes the node.
func (l rawLock) acquire(ctx context.Context) (string, error) {
	node, err := l.conn.Create(l.path+"/_c_"+uuid.NewString()+"-lock-", l.data,
		zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
	if err != nil {
		return "", err
	}
	ours := node[strings.LastIndexByte(node, '/')+1:]
	for {
		kids, _, err := l.conn.Children(l.path)
		if err != nil {
			l.conn.Delete(node, -1)
			return "", err
		}
		slices.SortFunc(kids, func(a, b string) int { return strings.Compare(seqOf(a), seqOf(b)) })
		i := slices.Index(kids, ours)
		if i < 0 {
			return "", fmt.Errorf("raw lock: our node %s vanished", node)
		}
		if i == 0 {
			return node, nil
		}
		_, _, ch, err := l.conn.GetW(l.path + "/" + kids[i-1])
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			l.conn.Delete(node, -1)
			return "", err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			l.conn.Delete(node, -1)
			return "", ctx.Err()
		}
	}
}

// seqOf returns the 10-digit sequence suffix of a lock node's name.
func seqOf(name string) string { return name[max(len(name)-10, 0):] }

// rawRunner runs the floor: rawLock for the lock kinds; for the
// implRawTrip row, one exists per operation (a single round trip).
func rawRunner(trip bool) runner {
	return func(ctx context.Context, s spec) (*Result, error) {
		conns, err := newConns(ctx, s.connect, s.clients)
		if err != nil {
			return nil, err
		}
		defer closeConns(conns)
		if err := ensurePath(conns[0], s.path); err != nil {
			return nil, err
		}
		data := localData()
		steps := make([]step, len(conns))
		for i, conn := range conns {
			if trip {
				steps[i] = func(ctx context.Context, t *tally) error {
					start := time.Now()
					if _, _, err := conn.Exists(s.path); err != nil {
						return err
					}
					t.record(start, time.Now())
					return nil
				}
				continue
			}
			l := rawLock{conn: conn, path: s.path, data: data}
			steps[i] = lockStep(s.kind, 1, func(ctx context.Context) (func(context.Context) error, error) {
				node, err := l.acquire(ctx)
				if err != nil {
					return nil, err
				}
				return func(context.Context) error { return conn.Delete(node, -1) }, nil
			})
		}
		return measure(ctx, s, steps), nil
	}
}

// localData is go-curator's default node data (the local address as text),
// so that the floor writes the same bytes.
func localData() []byte {
	c, err := newCuratorUnstarted("127.0.0.1:2181")
	if err != nil {
		return []byte("127.0.0.1")
	}
	return c.DefaultData()
}

// parseSeq returns the sequence number of a lock node's name.
func parseSeq(name string) (int64, error) {
	return strconv.ParseInt(seqOf(name), 10, 64)
}
