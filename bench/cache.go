package main

// The cache bench: go run ./bench cache [-zk host:port] [-nodes N] [-d 5s] [-smoke]
//
// A tree of -nodes nodes (a root, 100 parents, the rest spread under them,
// 16 bytes of data each) is cached whole by go-curator's recipes/cache Tree
// and by Curator 5.4's CuratorCache (Java), one after the other on one
// server, in one run. For each it reports the initial load (from Start to
// a complete view), the heap the cache added per node (after a GC, with
// its client already connected), and the update events per second its
// listener received while 8 writers in this process set random nodes for
// -d. The table gives go-curator's figures as ratios to Curator's.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == "cache" {
		os.Exit(cacheMain(os.Args[2:]))
	}
}

// cacheResult is one implementation's figures.
type cacheResult struct {
	Load        time.Duration
	HeapPerNode float64 // bytes
	Nodes       int     // in the view once loaded
	Events      int64   // update events received in the window (and a 1 s drain)
	Writes      int64   // writes made in the window
	Window      time.Duration
	Goroutines  int // added by the cache (Go only)
}

func (r cacheResult) eventsPerSec() float64 { return float64(r.Events) / r.Window.Seconds() }

func cacheMain(args []string) int {
	fs := flag.NewFlagSet("bench cache", flag.ExitOnError)
	zkAddr := fs.String("zk", "", "use this ZooKeeper instead of starting a local one")
	nodes := fs.Int("nodes", 10000, "nodes in the tree")
	dur := fs.Duration("d", 5*time.Second, "update window per implementation")
	smoke := fs.Bool("smoke", false, "500 nodes and a 1 s window: keeps the bench working")
	cpuprof := fs.String("cpuprofile", "", "write a CPU profile of this (Go) process to this file")
	fs.Parse(args)
	if *smoke {
		*nodes, *dur = 500, time.Second
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	connect := *zkAddr
	if connect == "" {
		fmt.Fprintln(os.Stderr, "starting a local ZooKeeper")
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		c, err := zktest.StartLocal(sctx, 1)
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench cache: no local ZooKeeper (use -zk host:port):", err)
			return 1
		}
		defer c.Close()
		connect = c.ConnectString()
	}
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench cache:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench cache:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	goRes, javaRes, err := runCacheBench(ctx, connect, *nodes, *dur, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench cache:", err)
		return 1
	}
	writeCacheTable(os.Stdout, *nodes, goRes, javaRes)
	return 0
}

// runCacheBench builds the tree, measures go-curator, then Curator (nil if
// Java Curator is missing), and deletes the tree.
func runCacheBench(ctx context.Context, connect string, nodes int, dur time.Duration, log io.Writer) (goRes, javaRes *cacheResult, err error) {
	conn, err := newConn(ctx, connect)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	root := fmt.Sprintf("/bench-cache-%d", time.Now().UnixNano())
	fmt.Fprintf(log, "creating %d nodes under %s\n", nodes, root)
	paths, err := makeTree(conn, root, nodes)
	if err != nil {
		return nil, nil, err
	}
	defer deleteTree(conn, root, paths)

	fmt.Fprintln(log, "measuring go-curator's cache.Tree")
	goRes, err = benchGoCache(ctx, connect, root, paths, dur)
	if err != nil {
		return nil, nil, fmt.Errorf("go-curator: %w", err)
	}
	fmt.Fprintln(log, "measuring Curator's CuratorCache")
	javaRes, err = benchJavaCache(ctx, connect, root, paths, dur)
	if err != nil {
		fmt.Fprintf(log, "  Curator not measured: %v\n", err)
		return goRes, nil, nil
	}
	return goRes, javaRes, nil
}

// makeTree creates root, 100 parents and nodes-101 children, in batches of
// creates sent as one multi each, and returns every path but root's.
func makeTree(conn *zk.Conn, root string, nodes int) ([]string, error) {
	if _, err := conn.Create(root, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		return nil, err
	}
	parents := min(100, max(nodes-1, 0))
	var paths []string
	for i := range parents {
		paths = append(paths, fmt.Sprintf("%s/p%03d", root, i))
	}
	for i := 0; len(paths) < nodes-1; i++ {
		paths = append(paths, fmt.Sprintf("%s/p%03d/n%05d", root, i%parents, i))
	}
	for start := 0; start < len(paths); start += 500 {
		var ops []any
		for _, p := range paths[start:min(start+500, len(paths))] {
			ops = append(ops, &zk.CreateRequest{Path: p, Data: []byte(fmt.Sprintf("value-%010d", 0)), Acl: zk.WorldACL(zk.PermAll)})
		}
		if _, err := conn.Multi(ops...); err != nil {
			return nil, fmt.Errorf("create the tree: %w", err)
		}
	}
	return paths, nil
}

// deleteTree deletes the tree, children first.
func deleteTree(conn *zk.Conn, root string, paths []string) {
	for end := len(paths); end > 0; end -= 500 {
		var ops []any
		for i := end - 1; i >= max(end-500, 0); i-- {
			ops = append(ops, &zk.DeleteRequest{Path: paths[i], Version: -1})
		}
		conn.Multi(ops...)
	}
	conn.Delete(root, -1)
}

// writeLoad sets random nodes from 8 goroutines until ctx ends, and
// returns how many writes it made.
func writeLoad(ctx context.Context, connect string, paths []string) (int64, error) {
	conn, err := newConn(ctx, connect)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var n atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for ctx.Err() == nil {
				if _, err := conn.Set(paths[rng.IntN(len(paths))], fmt.Appendf(nil, "value-%010d", n.Load()), -1); err == nil {
					n.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return n.Load(), nil
}

func benchGoCache(ctx context.Context, connect, root string, paths []string, dur time.Duration) (*cacheResult, error) {
	client, err := newCurator(ctx, connect)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	g0 := runtime.NumGoroutine()
	tree, err := cache.NewTree(client, root)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	t0 := time.Now()
	if err := tree.Start(ctx); err != nil {
		return nil, err
	}
	res := &cacheResult{Load: time.Since(t0), Window: dur}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	entries, err := tree.Entries()
	if err != nil {
		return nil, err
	}
	res.Nodes = len(entries)
	entries = nil
	res.HeapPerNode = float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(res.Nodes)
	res.Goroutines = runtime.NumGoroutine() - g0

	var events atomic.Int64
	tree.AddListener(func(ev cache.Event) {
		if ev.Type == cache.NodeUpdated {
			events.Add(1)
		}
	})
	wctx, cancel := context.WithTimeout(ctx, dur)
	res.Writes, err = writeLoad(wctx, connect, paths)
	cancel()
	time.Sleep(time.Second) // events of the window's last writes
	res.Events = events.Load()
	return res, err
}

// writeCacheTable prints the figures as a markdown table.
func writeCacheTable(w io.Writer, nodes int, g, j *cacheResult) {
	fmt.Fprintf(w, "\n| %d-node tree | go-curator cache.Tree | Curator 5.4 CuratorCache | go-curator / Curator |\n|---|---|---|---|\n", nodes)
	row := func(name string, gv, jv float64, format string) {
		if j == nil {
			fmt.Fprintf(w, "| %s | "+format+" | not measured | |\n", name, gv)
			return
		}
		fmt.Fprintf(w, "| %s | "+format+" | "+format+" | %.2f |\n", name, gv, jv, gv/jv)
	}
	jv := func(f func(*cacheResult) float64) float64 {
		if j == nil {
			return 0
		}
		return f(j)
	}
	row("initial load (s)", g.Load.Seconds(), jv(func(r *cacheResult) float64 { return r.Load.Seconds() }), "%.2f")
	row("heap per cached node (bytes)", g.HeapPerNode, jv(func(r *cacheResult) float64 { return r.HeapPerNode }), "%.0f")
	row("update events/s to a listener", g.eventsPerSec(), jv(func(r *cacheResult) float64 { return r.eventsPerSec() }), "%.0f")
	row("writes/s in the window", float64(g.Writes)/g.Window.Seconds(),
		jv(func(r *cacheResult) float64 { return float64(r.Writes) / r.Window.Seconds() }), "%.0f")
	fmt.Fprintf(w, "\nNodes in each view: go-curator %d", g.Nodes)
	if j != nil {
		fmt.Fprintf(w, ", Curator %d", j.Nodes)
	}
	fmt.Fprintf(w, ". go-curator's cache added %d goroutines for the whole tree.\n", g.Goroutines)
	fmt.Fprintln(w, "Heap is Go's HeapAlloc and the JVM's used heap, each after a full GC, before and after the load; events/s counts NODE_CHANGED/NodeUpdated events for the window's writes (changes made between a watch's event and its re-read are folded into one event).")
}
