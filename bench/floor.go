package main

import (
	"context"
	"slices"
	"time"

	"github.com/go-curator/curator/recipes/mutex"
)

// pairedFloor compares go-curator's uncontended cycle with the raw floor's
// cycle by cycle: one goroutine alternates a go-curator Acquire+Release
// and the same create, getChildren and delete with go-zookeeper alone
// (ABBA, on two sessions and two paths), so that the server's drift over
// time (fsync stalls, other load) hits both alike. Separate windows, even
// interleaved, differ by more than the few percent this compares.
type pairedFloor struct {
	n             int // cycles of each
	goSum, rawSum time.Duration
	goP50, rawP50 time.Duration
}

// ratio is go-curator's throughput as a share of the floor's.
func (p *pairedFloor) ratio() float64 { return float64(p.rawSum) / float64(p.goSum) }

func runPairedFloor(ctx context.Context, connect, path string, w window) (*pairedFloor, error) {
	c, err := newCurator(ctx, connect)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	m, err := mutex.New(c, path+"/go")
	if err != nil {
		return nil, err
	}
	conn, err := newConn(ctx, connect)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	raw := rawLock{conn: conn, path: path + "/raw", data: c.DefaultData()}
	if err := ensurePath(conn, raw.path); err != nil {
		return nil, err
	}
	goCycle := func() (time.Duration, error) {
		start := time.Now()
		h, err := m.Acquire(ctx)
		if err != nil {
			return 0, err
		}
		if err := h.Release(ctx); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	rawCycle := func() (time.Duration, error) {
		start := time.Now()
		node, err := raw.acquire(ctx)
		if err != nil {
			return 0, err
		}
		if err := conn.Delete(node, -1); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}

	var goLat, rawLat []time.Duration
	t0 := time.Now().Add(w.warm)
	t1 := t0.Add(w.dur)
	for i := 0; time.Now().Before(t1); i++ {
		first, second := goCycle, rawCycle
		if i%2 == 1 {
			first, second = rawCycle, goCycle
		}
		a, err := first()
		if err != nil {
			return nil, err
		}
		b, err := second()
		if err != nil {
			return nil, err
		}
		if time.Now().Before(t0) {
			continue
		}
		if i%2 == 1 {
			a, b = b, a
		}
		goLat, rawLat = append(goLat, a), append(rawLat, b)
	}
	p := &pairedFloor{n: len(goLat)}
	if p.n == 0 {
		return p, nil
	}
	for i := range goLat {
		p.goSum += goLat[i]
		p.rawSum += rawLat[i]
	}
	slices.Sort(goLat)
	slices.Sort(rawLat)
	p.goP50, p.rawP50 = goLat[p.n/2], rawLat[p.n/2]
	return p, nil
}
