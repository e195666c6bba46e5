package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

//go:embed java/CacheBench.java
var cacheBenchSource []byte

// cachePeer is bench/java/CacheBench.java running: Curator 5.4's
// CuratorCache on one CuratorFramework, driven one command at a time.
type cachePeer struct{ p *peer }

// cacheAnswer is one of CacheBench's answers.
type cacheAnswer struct {
	Fatal     string `json:"fatal"`
	LoadNs    int64  `json:"load_ns"`
	HeapBytes int64  `json:"heap_bytes"`
	Nodes     int    `json:"nodes"`
	Events    int64  `json:"events"`
}

// startCachePeer compiles and starts CacheBench against connect; its
// client is connected when it returns.
func startCachePeer(ctx context.Context, connect string) (*cachePeer, error) {
	p, err := startJava(ctx, implCurator+" CuratorCache", "CacheBench", cacheBenchSource, "-Xmx2g", connect)
	if err != nil {
		return nil, err
	}
	return &cachePeer{p}, nil
}

func (c *cachePeer) close() { c.p.close() }

// ask sends one command and reads its answer, within timeout.
func (c *cachePeer) ask(ctx context.Context, timeout time.Duration, format string, args ...any) (*cacheAnswer, error) {
	p := c.p
	if _, err := fmt.Fprintf(p.in, format+"\n", args...); err != nil {
		return nil, fmt.Errorf("%s: %w%s", p.name, err, p.stderr.tail())
	}
	type lineErr struct {
		line []byte
		err  error
	}
	ch := make(chan lineErr, 1)
	go func() {
		line, err := p.out.ReadBytes('\n')
		ch <- lineErr{line, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case le := <-ch:
		if le.err != nil {
			return nil, fmt.Errorf("%s exited: %w%s", p.name, le.err, p.stderr.tail())
		}
		var a cacheAnswer
		if err := json.Unmarshal(le.line, &a); err != nil {
			return nil, fmt.Errorf("%s: bad answer %.200q: %w", p.name, le.line, err)
		}
		if a.Fatal != "" {
			return nil, fmt.Errorf("%s: %s%s", p.name, a.Fatal, p.stderr.tail())
		}
		return &a, nil
	case <-t.C:
		p.cmd.Process.Kill()
		return nil, fmt.Errorf("%s: no answer within %v%s", p.name, timeout, p.stderr.tail())
	case <-ctx.Done():
		p.cmd.Process.Kill()
		return nil, fmt.Errorf("%s: %w", p.name, ctx.Err())
	}
}

// measureJavaCache caches the tree at root with a CuratorCache (data-less
// with noData) and measures it as measureGoCache does the Go cache.
func measureJavaCache(ctx context.Context, jp *cachePeer, connect, root string, paths []string, noData bool, window time.Duration, log io.Writer) (*cacheFigures, error) {
	f := &cacheFigures{Impl: implCurator, NoData: noData, Window: window}
	if _, err := jp.ask(ctx, time.Minute, "connect"); err != nil {
		return nil, err
	}
	defer jp.ask(ctx, time.Minute, "drop")
	w0, d0, err := watchCounts(ctx, connect)
	if err != nil {
		return nil, err
	}
	storage := "data"
	if noData {
		storage = "nodata"
	}
	a, err := jp.ask(ctx, 6*time.Minute, "load %s %s", root, storage)
	if err != nil {
		return nil, err
	}
	defer settledWatches(ctx, connect, w0) // the next measure's count starts clean
	f.Load, f.Nodes = time.Duration(a.LoadNs), a.Nodes
	f.HeapPerNode = float64(a.HeapBytes) / float64(max(a.Nodes, 1))
	w1, d1, err := watchCounts(ctx, connect)
	if err != nil {
		return nil, err
	}
	f.Watches, f.DataWatches = w1-w0, d1-d0
	if window > 0 {
		if _, err := jp.ask(ctx, time.Minute, "count"); err != nil {
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, window)
		f.Writes, err = writeLoad(wctx, connect, paths)
		cancel()
		if err != nil {
			return nil, err
		}
		time.Sleep(time.Second) // events of the window's last writes
		if a, err = jp.ask(ctx, time.Minute, "events"); err != nil {
			return nil, err
		}
		f.Events = a.Events
	}
	if _, err := jp.ask(ctx, time.Minute, "close"); err != nil {
		return nil, err
	}
	// CuratorCache removes its watch in the background after close.
	f.WatchesAfter, err = settledWatches(ctx, connect, w0)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "  %s\n", f.describe())
	return f, nil
}

// javaCycles opens and closes n CuratorCaches on root, one after the
// other on one client, and returns the server's watches left after them.
func javaCycles(ctx context.Context, jp *cachePeer, connect, root string, n int) (int64, error) {
	if _, err := jp.ask(ctx, time.Minute, "connect"); err != nil {
		return 0, err
	}
	w0, err := allWatches(ctx, connect)
	if err != nil {
		return 0, err
	}
	defer settledWatches(ctx, connect, w0)
	defer jp.ask(ctx, time.Minute, "drop")
	if _, err := jp.ask(ctx, 10*time.Minute, "cycles %s %d", root, n); err != nil {
		return 0, err
	}
	return settledWatches(ctx, connect, w0)
}
