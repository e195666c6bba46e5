package main

// The cache case: go run ./bench cache [-zk host:port] [-nodes N] [-big N]
// [-cycles N] [-d 5s] [-smoke] [-memprofile FILE]; make bench runs it too
// (-cache-nodes, -cache-big, -cache-cycles).
//
// A tree of -nodes nodes (a root, 100 parents, the rest spread under them,
// 16 bytes of data each) is cached whole, on one server in one run, by
// go-curator's recipes/cache Tree and by Curator 5.4's CuratorCache (Java,
// bench/java/CacheBench.java), each with its data and without it
// (cache.WithoutData, CuratorCacheStorage.dataNotCached). For each: the
// initial load (from Start to a complete view), the heap the cache added
// per node (Go: runtime.ReadMemStats after a GC, before and after, with
// its client already connected; Java: the used heap after System.gc()),
// the server watches the cache set (mntr's zk_watch_count, data and child watches, against the count before it
// started), the server watches left once it is closed (its client still
// connected), and, with data, the update events per second its listener
// received while 8 writers set random nodes for -d. Then each opens and
// closes -cycles caches of a 10-node tree on one client and counts the
// watches left; and a data-less go-curator Tree caches a tree of -big
// nodes alone (issue 31's 100 B per node goal).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
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

// cacheConfig is one run of the cache case.
type cacheConfig struct {
	nodes   int           // the tree both caches load
	big     int           // the data-less go-curator Tree's tree; 0 skips it
	cycles  int           // open/close cycles on one client; 0 skips them
	window  time.Duration // the update window; 0 skips it
	curator bool          // measure Curator too
	memprof string        // write the Go Tree's heap profile here after its load
}

// cacheFigures are one cache's figures.
type cacheFigures struct {
	Impl         string
	NoData       bool
	Nodes        int           // in the view once loaded
	Load         time.Duration // Start to a complete view
	HeapPerNode  float64       // bytes
	Watches      int64         // server watches the cache set (mntr: data and child)
	DataWatches  int64         // of which data watches (wchs)
	WatchesAfter int64         // server watches left after Close (mntr)
	Events       int64         // update events in the window (and a 1 s drain)
	Writes       int64         // writes made in the window
	Window       time.Duration
}

func (f *cacheFigures) eventsPerSec() float64 { return float64(f.Events) / f.Window.Seconds() }

func (f *cacheFigures) describe() string {
	kind := "with data"
	if f.NoData {
		kind = "data-less"
	}
	return fmt.Sprintf("%s, %s: %d nodes in %.2f s, %.0f B/node, %d server watches (wchs %d), %d after Close",
		f.Impl, kind, f.Nodes, f.Load.Seconds(), f.HeapPerNode, f.Watches, f.DataWatches, f.WatchesAfter)
}

// CacheResult is what the cache case measured.
type CacheResult struct {
	Nodes                  int
	Go, GoNoData           *cacheFigures
	Curator, CuratorNoData *cacheFigures // nil when Curator was not measured
	CuratorMissing         string        // why, when it was not
	Cycles                 int
	CyclesGo               int64 // server watches left after the cycles
	CyclesCurator          int64 // -1: not measured
	Big                    *cacheFigures
}

func cacheMain(args []string) int {
	fs := flag.NewFlagSet("bench cache", flag.ExitOnError)
	zkAddr := fs.String("zk", "", "use this ZooKeeper instead of starting a local one")
	nodes := fs.Int("nodes", 20000, "nodes in the tree")
	big := fs.Int("big", 100000, "nodes in the data-less go-curator Tree's tree (0: skip)")
	cycles := fs.Int("cycles", 1000, "open/close cycles on one client (0: skip)")
	dur := fs.Duration("d", 5*time.Second, "update window per cache with data (0: skip)")
	smoke := fs.Bool("smoke", false, "300 nodes, 20 cycles, no big tree and a 1 s window: keeps the bench working")
	cpuprof := fs.String("cpuprofile", "", "write a CPU profile of this (Go) process to this file")
	memprof := fs.String("memprofile", "", "write a heap profile of the loaded go-curator Tree (with data) to this file")
	fs.Parse(args)
	if *smoke {
		*nodes, *big, *cycles, *dur = 300, 0, 20, time.Second
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
	cfg := cacheConfig{nodes: *nodes, big: *big, cycles: *cycles, window: *dur, curator: true, memprof: *memprof}
	res, err := runCacheCase(ctx, connect, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench cache:", err)
		return 1
	}
	res.writeTable(os.Stdout)
	writeTargets(os.Stdout, "Targets (issue 31), as ratios to Curator in this run:", res.targets())
	return 0
}

// runCacheCase builds the trees, measures go-curator's caches and
// Curator's (unless cfg.curator is false or Java Curator is missing), and
// deletes the trees.
func runCacheCase(ctx context.Context, connect string, cfg cacheConfig, log io.Writer) (*CacheResult, error) {
	res := &CacheResult{Nodes: cfg.nodes, Cycles: cfg.cycles, CyclesCurator: -1}
	conn, err := newConn(ctx, connect)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	stamp := time.Now().UnixNano()
	root := fmt.Sprintf("/bench-cache-%d", stamp)
	fmt.Fprintf(log, "cache: creating %d nodes under %s\n", cfg.nodes, root)
	paths, err := makeTree(conn, root, cfg.nodes)
	if err != nil {
		return nil, err
	}
	defer deleteTree(conn, root, paths)
	// A fresh server reads slowly for its first seconds (its JIT): read
	// the tree once, so that the first cache measured does not pay.
	if err := readTree(conn, root, paths); err != nil {
		return nil, err
	}

	var jp *cachePeer
	if cfg.curator {
		fmt.Fprintln(log, "cache: starting Curator's CacheBench")
		jp, err = startCachePeer(ctx, connect)
		switch {
		case err == nil:
			defer jp.close()
		case errors.Is(err, errPeerMissing):
			res.CuratorMissing = err.Error()
			fmt.Fprintf(log, "  %v\n", err)
		default:
			return nil, err
		}
	} else {
		res.CuratorMissing = "not selected"
	}
	for _, noData := range []bool{false, true} {
		window := cfg.window
		if noData {
			window = 0
		}
		memprof := cfg.memprof
		if noData {
			memprof = ""
		}
		g, err := measureGoCache(ctx, connect, root, paths, noData, window, memprof, log)
		if err != nil {
			return nil, fmt.Errorf("go-curator: %w", err)
		}
		var j *cacheFigures
		if jp != nil {
			if j, err = measureJavaCache(ctx, jp, connect, root, paths, noData, window, log); err != nil {
				return nil, fmt.Errorf("Curator: %w", err)
			}
		}
		if noData {
			res.GoNoData, res.CuratorNoData = g, j
		} else {
			res.Go, res.Curator = g, j
		}
	}

	if cfg.cycles > 0 {
		small := root + "-cycles"
		smallPaths, err := makeTree(conn, small, 10)
		if err != nil {
			return nil, err
		}
		defer deleteTree(conn, small, smallPaths)
		fmt.Fprintf(log, "cache: %d open/close cycles of a 10-node Tree on one client\n", cfg.cycles)
		if res.CyclesGo, err = goCycles(ctx, connect, small, cfg.cycles); err != nil {
			return nil, fmt.Errorf("go-curator cycles: %w", err)
		}
		if jp != nil {
			fmt.Fprintf(log, "cache: %d open/close cycles of a 10-node CuratorCache on one client\n", cfg.cycles)
			if res.CyclesCurator, err = javaCycles(ctx, jp, connect, small, cfg.cycles); err != nil {
				return nil, fmt.Errorf("Curator cycles: %w", err)
			}
		}
	}

	if cfg.big > 0 {
		bigRoot := fmt.Sprintf("/bench-cache-big-%d", stamp)
		fmt.Fprintf(log, "cache: creating %d nodes under %s\n", cfg.big, bigRoot)
		bigPaths, err := makeTree(conn, bigRoot, cfg.big)
		if err != nil {
			return nil, err
		}
		defer deleteTree(conn, bigRoot, bigPaths)
		if res.Big, err = measureGoCache(ctx, connect, bigRoot, bigPaths, true, 0, "", log); err != nil {
			return nil, fmt.Errorf("go-curator, %d nodes: %w", cfg.big, err)
		}
	}
	return res, nil
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
		paths = append(paths, fmt.Sprintf("%s/p%03d/n%06d", root, i%parents, i))
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

// readTree reads every node's data once, from 8 goroutines.
func readTree(conn *zk.Conn, root string, paths []string) error {
	var next atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(paths); i = int(next.Add(1)) - 1 {
				if _, _, err := conn.Get(paths[i]); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return fmt.Errorf("read the tree under %s: %w", root, err)
	}
	return nil
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

// allWatches returns the server's watches, data and child watches alike
// (mntr's zk_watch_count; wchs counts the data watches only). A
// persistent recursive watch counts once.
func allWatches(ctx context.Context, connect string) (int64, error) {
	m, err := mntr(ctx, connect)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(m["zk_watch_count"], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("mntr zk_watch_count = %q: %w", m["zk_watch_count"], err)
	}
	return n, nil
}

// watchCounts returns the server's watches (allWatches) and its data
// watches (wchs).
func watchCounts(ctx context.Context, connect string) (all, data int64, err error) {
	if all, err = allWatches(ctx, connect); err != nil {
		return 0, 0, err
	}
	data, err = totalWatches(ctx, connect)
	return all, data, err
}

// settledWatches returns the server's watches beyond base, once they are
// down to base or after 3 s (a closed CuratorCache removes its watch in
// the background, a closed client's session ends as the server gets to
// it).
func settledWatches(ctx context.Context, connect string, base int64) (int64, error) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		n, err := allWatches(ctx, connect)
		if err != nil || n <= base || time.Now().After(deadline) {
			return n - base, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// measureGoCache caches the tree at root with a go-curator Tree (data-less
// with noData) on a client of its own, and measures it.
func measureGoCache(ctx context.Context, connect, root string, paths []string, noData bool, window time.Duration, memprof string, log io.Writer) (*cacheFigures, error) {
	f := &cacheFigures{Impl: implGo, NoData: noData, Window: window}
	client, err := newCurator(ctx, connect)
	if err != nil {
		return nil, err
	}
	w0, d0, err := watchCounts(ctx, connect)
	if err != nil {
		client.Close()
		return nil, err
	}
	defer settledWatches(ctx, connect, w0) // the next measure's count starts clean
	defer client.Close()
	var opts []cache.TreeOption
	if noData {
		opts = append(opts, cache.WithoutData())
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	tree, err := cache.NewTree(client, root, opts...)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	t0 := time.Now()
	if err := tree.Start(ctx); err != nil {
		return nil, err
	}
	f.Load = time.Since(t0)
	runtime.GC()
	runtime.ReadMemStats(&m1)
	if memprof != "" {
		if err := writeHeapProfile(memprof); err != nil {
			return nil, err
		}
	}
	entries, err := tree.Entries()
	if err != nil {
		return nil, err
	}
	f.Nodes = len(entries)
	entries = nil
	f.HeapPerNode = float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(max(f.Nodes, 1))
	w1, d1, err := watchCounts(ctx, connect)
	if err != nil {
		return nil, err
	}
	f.Watches, f.DataWatches = w1-w0, d1-d0

	if window > 0 {
		var events atomic.Int64
		tree.AddListener(func(ev cache.Event) {
			if ev.Type == cache.NodeUpdated {
				events.Add(1)
			}
		})
		wctx, cancel := context.WithTimeout(ctx, window)
		f.Writes, err = writeLoad(wctx, connect, paths)
		cancel()
		if err != nil {
			return nil, err
		}
		time.Sleep(time.Second) // events of the window's last writes
		f.Events = events.Load()
	}
	tree.Close()
	if f.WatchesAfter, err = settledWatches(ctx, connect, w0); err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "  %s\n", f.describe())
	return f, nil
}

func writeHeapProfile(name string) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// goCycles opens and closes n Trees of root, one after the other on one
// client, and returns the server's watches left after them.
func goCycles(ctx context.Context, connect, root string, n int) (int64, error) {
	client, err := newCurator(ctx, connect)
	if err != nil {
		return 0, err
	}
	w0, err := allWatches(ctx, connect)
	if err != nil {
		client.Close()
		return 0, err
	}
	defer settledWatches(ctx, connect, w0)
	defer client.Close()
	for range n {
		tree, err := cache.NewTree(client, root)
		if err != nil {
			return 0, err
		}
		err = tree.Start(ctx)
		tree.Close()
		if err != nil {
			return 0, err
		}
	}
	return settledWatches(ctx, connect, w0)
}

// writeTable prints the figures as a markdown table.
func (r *CacheResult) writeTable(w io.Writer) {
	fmt.Fprintf(w, "\nCache: a %d-node tree cached whole on one server, go-curator's cache.Tree beside Curator 5.4's CuratorCache\n\n", r.Nodes)
	fmt.Fprintln(w, "| measure | go-curator cache.Tree | Curator 5.4 CuratorCache | go-curator / Curator |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	row := func(name, format string, g, j *cacheFigures, v func(*cacheFigures) float64) {
		if g == nil {
			return
		}
		if j == nil {
			fmt.Fprintf(w, "| %s | "+format+" | not measured | |\n", name, v(g))
			return
		}
		fmt.Fprintf(w, "| %s | "+format+" | "+format+" | %s |\n", name, v(g), v(j), ratio(v(g), v(j)))
	}
	for _, set := range []struct {
		label string
		g, j  *cacheFigures
	}{{"", r.Go, r.Curator}, {"data-less: ", r.GoNoData, r.CuratorNoData}} {
		row(set.label+"initial load (s)", "%.2f", set.g, set.j, func(f *cacheFigures) float64 { return f.Load.Seconds() })
		row(set.label+"heap per cached node (B)", "%.0f", set.g, set.j, func(f *cacheFigures) float64 { return f.HeapPerNode })
		row(set.label+"server watches held (mntr zk_watch_count)", "%.0f", set.g, set.j, func(f *cacheFigures) float64 { return float64(f.Watches) })
		row(set.label+"of which data watches (wchs)", "%.0f", set.g, set.j, func(f *cacheFigures) float64 { return float64(f.DataWatches) })
		row(set.label+"server watches after Close", "%.0f", set.g, set.j, func(f *cacheFigures) float64 { return float64(f.WatchesAfter) })
		if set.g != nil && set.g.Window > 0 {
			row(set.label+"update events/s to a listener (8 writers)", "%.0f", set.g, set.j, (*cacheFigures).eventsPerSec)
			row(set.label+"writes/s in the window", "%.0f", set.g, set.j, func(f *cacheFigures) float64 { return float64(f.Writes) / f.Window.Seconds() })
		}
	}
	if r.Cycles > 0 {
		jv := "not measured"
		if r.CyclesCurator >= 0 {
			jv = fmt.Sprint(r.CyclesCurator)
		}
		fmt.Fprintf(w, "| server watches after %d open/close cycles on one client (10-node tree) | %d | %s | |\n", r.Cycles, r.CyclesGo, jv)
	}
	if b := r.Big; b != nil {
		fmt.Fprintf(w, "| data-less, %d nodes: initial load (s) | %.2f | not measured | |\n", b.Nodes, b.Load.Seconds())
		fmt.Fprintf(w, "| data-less, %d nodes: heap per cached node (B) | %.0f | not measured | |\n", b.Nodes, b.HeapPerNode)
		fmt.Fprintf(w, "| data-less, %d nodes: server watches held | %d | not measured | |\n", b.Nodes, b.Watches)
	}
	fmt.Fprintln(w)
	if r.CuratorMissing != "" {
		fmt.Fprintf(w, "Curator was not measured: %s\n\n", r.CuratorMissing)
	}
	fmt.Fprintln(w, "Heap is Go's HeapAlloc and the JVM's used heap, each after a full GC, before and after the load, per node in the view; server watches are mntr's zk_watch_count (data and child watches; wchs counts the data watches only, and ZooKeeper 3.8 counts a persistent recursive watch in both) while the cache is open and once it is closed (its client still connected), less the count before it started (each cache on a client, so a session, of its own); events/s counts NODE_CHANGED/NodeUpdated for the window's writes (go-curator folds changes made between a watch's event and its re-read into one event).")
}

// targets checks issue 31's goals on the figures.
func (r *CacheResult) targets() []target {
	var ts []target
	if g, j := r.Go, r.Curator; g != nil && j != nil {
		h, l := g.HeapPerNode/j.HeapPerNode, g.Load.Seconds()/j.Load.Seconds()
		ts = append(ts,
			target{fmt.Sprintf("cache, %d nodes: heap per node ≤ 1.0× Curator's CuratorCache (issue 31)", r.Nodes),
				fmt.Sprintf("%.2f× (%.0f B vs %.0f B)", h, g.HeapPerNode, j.HeapPerNode), h <= 1.0},
			target{fmt.Sprintf("cache, %d nodes: initial load ≤ 0.8× Curator's (issue 31)", r.Nodes),
				fmt.Sprintf("%.2f× (%.2f s vs %.2f s)", l, g.Load.Seconds(), j.Load.Seconds()), l <= 0.8})
	}
	if g := r.Go; g != nil {
		ts = append(ts,
			target{"cache: 1 server watch per cache, wchs (issue 31)", fmt.Sprintf("%d (%d in all, data and child)", g.DataWatches, g.Watches), g.DataWatches == 1},
			target{"cache: 0 server watches after Close (issue 31)", fmt.Sprintf("%d", g.WatchesAfter), g.WatchesAfter == 0})
	}
	if r.Cycles > 0 {
		ts = append(ts, target{fmt.Sprintf("cache: 0 server watches after %d open/close cycles on one client (issue 31)", r.Cycles),
			fmt.Sprintf("%d", r.CyclesGo), r.CyclesGo == 0})
	}
	if b := r.Big; b != nil {
		ts = append(ts, target{fmt.Sprintf("data-less cache of %d nodes < 100 B per node (issue 31)", b.Nodes),
			fmt.Sprintf("%.0f B", b.HeapPerNode), b.HeapPerNode < 100})
	}
	return ts
}

// writeTargets prints ts as a markdown table under title.
func writeTargets(w io.Writer, title string, ts []target) {
	if len(ts) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n\n| target | measured | met |\n|---|---|---|\n", title)
	for _, t := range ts {
		met := "yes"
		if !t.met {
			met = "**no**"
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.what, t.got, met)
	}
}
