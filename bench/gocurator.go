package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/sharedcount"
)

func init() {
	goRunners[kindUncontended] = goMutex
	goRunners[kindContended] = goMutex
	goRunners[kindSharedCount] = goSharedCount
}

// releaseBound limits a release that runs after the window has closed.
const releaseBound = 30 * time.Second

// lockStep is one acquire and release of a lock-like recipe, with the
// witness checked while held. For the uncontended kind it times the whole
// cycle; otherwise it times the acquire. The release never sees the end of
// the window: a held lock is always given back.
func lockStep(kind string, limit int64, acquire func(context.Context) (release func(context.Context) error, err error)) step {
	return func(ctx context.Context, t *tally) error {
		start := time.Now()
		release, err := acquire(ctx)
		if err != nil {
			return err
		}
		got := time.Now()
		t.enter(limit)
		t.leave()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseBound)
		defer cancel()
		if err := release(rctx); err != nil {
			return err
		}
		if kind == kindUncontended {
			t.record(start, time.Now())
		} else {
			t.record(start, got)
		}
		return nil
	}
}

// goMutex runs recipes/mutex: one client (session) and one Mutex per worker.
func goMutex(ctx context.Context, s spec) (*Result, error) {
	cs, err := newCurators(ctx, s.connect, s.clients)
	if err != nil {
		return nil, err
	}
	defer closeCurators(cs)
	steps := make([]step, len(cs))
	for i, c := range cs {
		m, err := mutex.New(c, s.path)
		if err != nil {
			return nil, err
		}
		steps[i] = lockStep(s.kind, 1, func(ctx context.Context) (func(context.Context) error, error) {
			h, err := m.Acquire(ctx)
			if err != nil {
				return nil, err
			}
			return h.Release, nil
		})
	}
	return measure(ctx, s, steps), nil
}

// goSharedCount runs recipes/sharedcount: each worker loops on
// TrySetCount(VersionedValue(), value+1) with its own client and Count.
func goSharedCount(ctx context.Context, s spec) (*Result, error) {
	cs, err := newCurators(ctx, s.connect, s.clients)
	if err != nil {
		return nil, err
	}
	defer closeCurators(cs)
	steps := make([]step, len(cs))
	for i, c := range cs {
		sc, err := sharedcount.New(c, s.path, 0)
		if err != nil {
			return nil, err
		}
		if err := sc.Start(ctx); err != nil {
			return nil, err
		}
		defer sc.Close()
		steps[i] = func(ctx context.Context, t *tally) error {
			// The write is never cut short by the end of the window, so
			// that every success is counted and the final value checks.
			octx := context.WithoutCancel(ctx)
			start := time.Now()
			v := sc.VersionedValue()
			ok, err := sc.TrySetCount(octx, v, v.Value+1)
			end := time.Now()
			if err != nil {
				return err
			}
			t.attempt(end)
			if ok {
				t.totalOK.Add(1)
				t.record(start, end)
			}
			return nil
		}
	}
	r := measure(ctx, s, steps)
	n, err := readInt(ctx, cs[0], s.path, 4)
	if err != nil {
		return nil, err
	}
	r.Final = &n
	return r, nil
}

// readInt reads a big-endian counter of size 4 or 8 bytes at path; a
// missing or empty node reads as 0.
func readInt(ctx context.Context, c *framework.Client, path string, size int) (int64, error) {
	b, _, err := c.GetData().ForPath(ctx, path)
	if err != nil {
		return 0, err
	}
	switch {
	case len(b) == 0:
		return 0, nil
	case len(b) != size:
		return 0, fmt.Errorf("counter %s holds %d bytes, want %d", path, len(b), size)
	case size == 4:
		return int64(int32(binary.BigEndian.Uint32(b))), nil
	default:
		return int64(binary.BigEndian.Uint64(b)), nil
	}
}
