package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"time"

	"github.com/go-curator/curator/zktest"
)

func main() {
	if serveEtcdMember() {
		return // this process was an etcd member of a bench run
	}
	var (
		zkAddr  = flag.String("zk", "", "use this ZooKeeper (host:port[,...]) instead of starting a local one")
		dur     = flag.Duration("d", 5*time.Second, "measured time per case and implementation")
		warm    = flag.Duration("warm", 0, "warm-up before each measurement (default: 500ms, 200ms with -smoke)")
		smoke   = flag.Bool("smoke", false, "smoke mode: about a second per case and 200 waiters, to keep the harness working")
		rounds  = flag.Int("rounds", 0, "split each case's time into this many rounds, alternating the implementations' order (default: 3, 1 with -smoke)")
		waiters = flag.Int("waiters", 0, "waiters in the scale case (default: 10000, 200 with -smoke; -1 skips it)")
		drain   = flag.Duration("drain", 45*time.Second, "stop the scale case's drain after this long (the rest leave with the session)")
		out     = flag.String("out", "", "also write the table to this file")
		cases   = flag.String("cases", "", "run only the cases whose names match this regexp (\"scale\" selects the scale case)")
		impls   = flag.String("impls", "", "run only the implementations whose names match this regexp")
		cpuprof = flag.String("cpuprofile", "", "write a CPU profile of this (Go) process to this file")
		ensem   = flag.Bool("ensemble", false, "start a 3-node ZooKeeper ensemble on loopback (and a 3-member etcd cluster) instead of one standalone server")
		cacheN  = flag.Int("cache-nodes", 0, "the cache case's tree (default: 20000, 300 with -smoke; -1 skips the case)")
		cacheB  = flag.Int("cache-big", 0, "the cache case's data-less tree (default: 100000, none with -smoke; -1: none)")
		cacheC  = flag.Int("cache-cycles", 0, "the cache case's open/close cycles on one client (default: 1000, 20 with -smoke; -1: none)")
		svg     = flag.String("svg", "", "write the chart (ops/s ratios, contended latency CDFs) to this SVG file (default: results/latest.svg in the bench module, none with -smoke; \"-\": none)")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *ensem && *zkAddr != "" {
		fmt.Fprintln(os.Stderr, "bench: -ensemble starts its own servers: drop -zk")
		os.Exit(2)
	}
	cc := cacheDefaults(*smoke, *dur, *cacheN, *cacheB, *cacheC)
	if err := mainErr(ctx, *zkAddr, *dur, *warm, *smoke, *rounds, *waiters, *drain, *out, *cases, *impls, *cpuprof, *ensem, *svg, cc); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func mainErr(ctx context.Context, zkAddr string, dur, warm time.Duration, smoke bool, rounds, waiters int, drain time.Duration,
	out, cases, impls, cpuprof string, ensemble bool, svg string, cc cacheConfig) error {
	cfg, err := newConfig(zkAddr, dur, warm, smoke, rounds, waiters, cases, impls)
	if err != nil {
		return err
	}
	cfg.cache = cc
	cfg.queue = queueDefaults(smoke, cfg.w.warm, cfg.w.dur, queueBigEnv(zkAddr != ""))
	cfg.log = os.Stderr
	cfg.drain = drain
	cfg.topology, cfg.etcdMembers = "given (-zk)", 1
	if cfg.connect == "" {
		n := 1
		cfg.topology = "standalone"
		if ensemble {
			n, cfg.etcdMembers = 3, 3
			cfg.topology = "3-node ensemble on loopback"
		}
		fmt.Fprintf(os.Stderr, "starting a local ZooKeeper: %s\n", cfg.topology)
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		c, err := zktest.StartLocal(sctx, n)
		cancel()
		if err != nil {
			return fmt.Errorf("no local ZooKeeper (use -zk host:port, or apt-get install -y zookeeper): %w", err)
		}
		defer c.Close()
		cfg.connect = c.ConnectString()
	}
	if cpuprof != "" {
		f, err := os.Create(cpuprof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	rep, err := run(ctx, cfg)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	rep.writeTable(&buf)
	os.Stdout.Write(buf.Bytes())
	if out != "" {
		if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if svg == "" && !smoke {
		svg = defaultSVG()
	}
	if svg != "" && svg != "-" && !rep.hasRatios() {
		fmt.Fprintf(os.Stderr, "no chart: %v\n", errNoRatios)
		svg = ""
	}
	if svg != "" && svg != "-" {
		if err := rep.writeSVG(svg); err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		fmt.Fprintf(os.Stderr, "chart written to %s\n", svg)
	}
	return nil
}

// cacheDefaults fills in the cache case's defaults: 0 takes the default,
// a negative figure none.
func cacheDefaults(smoke bool, window time.Duration, nodes, big, cycles int) cacheConfig {
	def := func(v, full, small int) int {
		switch {
		case v < 0:
			return 0
		case v > 0:
			return v
		case smoke:
			return small
		}
		return full
	}
	cc := cacheConfig{nodes: def(nodes, 20000, 300), big: def(big, 100000, 0), cycles: def(cycles, 1000, 20), window: window}
	if smoke {
		cc.window = time.Second
	}
	return cc
}

// defaultSVG is results/latest.svg of the bench module, seen from the
// working directory: the repository's root (go run ./bench, make bench) or
// the bench module.
func defaultSVG() string {
	if _, err := os.Stat(filepath.Join("bench", "go.mod")); err == nil {
		return filepath.Join("bench", "results", "latest.svg")
	}
	return filepath.Join("results", "latest.svg")
}

// newConfig checks the flags and fills in the smoke mode's defaults.
func newConfig(zkAddr string, dur, warm time.Duration, smoke bool, rounds, waiters int, cases, impls string) (config, error) {
	cfg := config{connect: zkAddr, w: window{warm: warm, dur: dur}, rounds: rounds, waiters: waiters, log: io.Discard}
	if cfg.rounds == 0 {
		cfg.rounds = 3
		if smoke {
			cfg.rounds = 1
		}
	}
	if smoke {
		cfg.w.dur = time.Second
	}
	if cfg.w.warm == 0 {
		cfg.w.warm = 500 * time.Millisecond
		if smoke {
			cfg.w.warm = 200 * time.Millisecond
		}
	}
	switch {
	case waiters == 0 && smoke:
		cfg.waiters = 200
	case waiters == 0:
		cfg.waiters = 10000
	case waiters < 0:
		cfg.waiters = 0
	}
	if cfg.w.dur <= 0 || cfg.w.warm < 0 {
		return cfg, fmt.Errorf("durations must be positive: -d %v, -warm %v", dur, warm)
	}
	if cfg.rounds < 1 {
		return cfg, fmt.Errorf("-rounds %d: need at least one", rounds)
	}
	var err error
	if cases != "" {
		if cfg.cases, err = regexp.Compile(cases); err != nil {
			return cfg, fmt.Errorf("-cases: %w", err)
		}
	}
	if impls != "" {
		if cfg.impls, err = regexp.Compile(impls); err != nil {
			return cfg, fmt.Errorf("-impls: %w", err)
		}
	}
	return cfg, nil
}
