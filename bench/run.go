package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// config is one bench run.
type config struct {
	connect string
	w       window
	rounds  int            // each case's window is split into this many rounds
	waiters int            // the scale case's queue; 0 skips it
	drain   time.Duration  // the scale case's drain stops after this
	cases   *regexp.Regexp // which cases run (by name); nil: all
	impls   *regexp.Regexp // which implementations run; nil: all
	log     io.Writer      // progress lines
	// topology says which ZooKeeper the run used, for the table:
	// "standalone", "3-node ensemble", or "given" (-zk).
	topology string
	// etcdMembers is the size of the etcd cluster the reference peer
	// starts: 1, or 3 beside a ZooKeeper ensemble.
	etcdMembers int
	// cache is the cache case's configuration; cache.nodes 0 skips it.
	cache cacheConfig
	// queue is the queue case's configuration; queue.dur 0 skips it.
	queue queueConfig
}

// report is everything one bench run measured.
type report struct {
	cfg      config
	started  time.Time
	results  []*Result
	scale    *ScaleResult
	paired   *pairedFloor // go-curator and the floor, cycle by cycle
	scaleErr error
	cache    *CacheResult
	cacheErr error
	queue    *QueueResult
	queueErr error
	// missing names peers that could not start, with the reason.
	missing map[string]string
	// etcd describes the etcd server of the reference rows, if they ran.
	etcd string
	// zkVersion is the server's version (mntr zk_version, up to the
	// first space or hyphen), or "?".
	zkVersion string
}

// run measures every selected case with every implementation in turn, on
// the server at cfg.connect, then the scale case.
func run(ctx context.Context, cfg config) (*report, error) {
	rep := &report{cfg: cfg, started: time.Now(), missing: map[string]string{}, zkVersion: "?"}
	if m, err := mntr(ctx, cfg.connect); err == nil && m["zk_version"] != "" {
		rep.zkVersion, _, _ = strings.Cut(m["zk_version"], "-")
	}
	want := func(name string) bool { return cfg.impls == nil || cfg.impls.MatchString(name) }
	var cases []benchCase
	for _, c := range allCases() {
		if cfg.cases == nil || cfg.cases.MatchString(c.name) {
			cases = append(cases, c)
		}
	}

	impls := map[string]impl{
		implGo: {name: implGo, run: goRunners, missing: goMissing},
		implZkLock: {name: implZkLock, run: map[string]runner{
			kindUncontended: zkLockRunner, kindContended: zkLockRunner,
		}},
		implRaw: {name: implRaw, run: map[string]runner{
			kindUncontended: rawRunner(false), kindContended: rawRunner(false),
		}},
		implRawTrip: {name: implRawTrip, run: map[string]runner{kindUncontended: rawRunner(true)}},
	}
	peerKinds := map[string][]string{
		implCurator: {kindUncontended, kindContended, kindSemaphore, kindAtomicLong, kindSharedCount},
		implKazoo:   {kindUncontended, kindContended, kindSemaphore, kindAtomicLong},
	}
	starters := map[string]func(context.Context, string) (*peer, error){
		implCurator: startCurator, implKazoo: startKazoo,
	}
	for _, name := range []string{implCurator, implKazoo} {
		if !want(name) || len(cases) == 0 {
			continue
		}
		fmt.Fprintf(cfg.log, "starting %s\n", name)
		p, err := starters[name](ctx, cfg.connect)
		if err != nil {
			if !errors.Is(err, errPeerMissing) {
				return nil, err
			}
			rep.missing[name] = err.Error()
			fmt.Fprintf(cfg.log, "  %v\n", err)
			continue
		}
		defer p.close()
		// Load and compile the peer's classes before anything is measured.
		ws := spec{kind: kindUncontended, clients: 1, connect: cfg.connect,
			w: window{dur: max(cfg.w.warm, cfg.w.dur/2)}, path: fmt.Sprintf("/bench-warmup/%s", slug(name))}
		if _, err := p.run(ctx, ws); err != nil {
			return nil, fmt.Errorf("warm up %s: %w", name, err)
		}
		m := map[string]runner{}
		for _, k := range peerKinds[name] {
			m[k] = p.run
		}
		impls[name] = impl{name: name, run: m, pid: p.cmd.Process.Pid}
	}

	if want(implEtcd) && slices.ContainsFunc(cases, func(c benchCase) bool { return supports(etcdKinds, c.kind) }) {
		n := max(cfg.etcdMembers, 1)
		fmt.Fprintf(cfg.log, "starting %s: an etcd %s cluster of %d, embedded, in child processes\n", implEtcd, etcdVersion, n)
		ec, err := startEtcd(ctx, n)
		if err != nil {
			rep.missing[implEtcd] = err.Error()
			fmt.Fprintf(cfg.log, "  %v\n", err)
		} else {
			defer ec.close()
			m := map[string]runner{}
			for _, k := range etcdKinds {
				m[k] = etcdMutexRunner(ec.endpoints)
			}
			impls[implEtcd] = impl{name: implEtcd, run: m, etcd: true}
			rep.etcd = fmt.Sprintf("etcd %s (go.etcd.io/etcd/server/v3/embed), %d member(s) at %s, fsync on every commit", etcdVersion, n, strings.Join(ec.endpoints, ","))
		}
	}

	runID := time.Now().Format("150405")
	if len(cases) > 0 {
		// A fresh server runs slowly for its first seconds (its JIT):
		// warm it up so that the first implementation measured is not
		// the one that pays for it.
		d := max(cfg.w.dur, time.Second)
		fmt.Fprintf(cfg.log, "warming the server up for %v\n", 2*d)
		for _, ws := range []spec{
			{kind: kindContended, clients: 16, w: window{dur: d}},
			{kind: kindUncontended, clients: 1, w: window{dur: d}},
		} {
			ws.connect = cfg.connect
			ws.path = fmt.Sprintf("/bench-%s/server-warmup/%s", runID, slug(ws.kind))
			if _, err := rawRunner(false)(ctx, ws); err != nil {
				return nil, fmt.Errorf("warm the server up: %w", err)
			}
		}
	}
	for _, c := range cases {
		// Rows in implOrder; each skipped row once, each measured row
		// merged over the rounds.
		rows := map[string]*Result{}
		var order []string
		var runs []string // implementations measured in this case
		for _, name := range implOrder {
			if !want(name) {
				continue
			}
			im, ok := impls[name]
			switch {
			case !ok:
				if why, ok := rep.missing[name]; ok && (supports(peerKinds[name], c.kind) || name == implEtcd && supports(etcdKinds, c.kind)) {
					rows[name] = &Result{Case: c.name, Impl: name, Skipped: why}
					order = append(order, name)
				}
			case im.run[c.kind] == nil:
				if why := im.missing[c.kind]; why != "" {
					rows[name] = &Result{Case: c.name, Impl: name, Skipped: why}
					order = append(order, name)
				}
			default:
				order = append(order, name)
				runs = append(runs, name)
			}
		}
		// Rounds alternate the order of the implementations, so that a
		// machine that drifts over the case favours none of them.
		for round := range cfg.rounds {
			seq := slices.Clone(runs)
			if round%2 == 1 {
				slices.Reverse(seq)
			}
			for _, name := range seq {
				im := impls[name]
				s := spec{
					kind: c.kind, clients: c.clients, connect: cfg.connect,
					w:    window{warm: cfg.w.warm, dur: cfg.w.dur / time.Duration(cfg.rounds)},
					path: fmt.Sprintf("/bench-%s/%s/%s-%d-r%d", runID, slug(c.kind), slug(name), c.clients, round),
				}
				pid := im.pid
				if pid == 0 {
					pid = os.Getpid()
				}
				pr := &probe{connect: cfg.connect, pid: pid}
				if im.etcd {
					pr.connect = "" // ZooKeeper's counters say nothing of etcd's work
				}
				s.onStart = pr.start
				fmt.Fprintf(cfg.log, "%-28s %-26s r%d ", c.name, name, round+1)
				rctx, cancel := context.WithTimeout(ctx, runTimeout(s.w, s.clients))
				res, err := im.run[c.kind](rctx, s)
				cancel()
				if err != nil {
					return nil, fmt.Errorf("%s: %w", s.describe(name), err)
				}
				pr.annotate(res)
				res.Case, res.Impl = c.name, name
				if c.limit == 0 {
					res.Overlaps = -1
				}
				fmt.Fprintf(cfg.log, "%8.0f ops/s  p50 %s ms  p99 %s ms\n", res.OpsPerSec(), ms(res.Percentile(0.5)), ms(res.Percentile(0.99)))
				if res.Errors > 0 {
					fmt.Fprintf(cfg.log, "  %d errors, first: %s\n", res.Errors, res.FirstError)
				}
				if prev := rows[name]; prev != nil {
					prev.merge(res)
				} else {
					rows[name] = res
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
		}
		for _, name := range order {
			rep.results = append(rep.results, rows[name])
		}
		if c.kind == kindUncontended && rows[implGo] != nil && rows[implRaw] != nil {
			fmt.Fprintf(cfg.log, "%-28s go-curator and the raw floor, cycle by cycle\n", c.name)
			var err error
			rep.paired, err = runPairedFloor(ctx, cfg.connect, fmt.Sprintf("/bench-%s/paired-floor", runID), cfg.w)
			if err != nil {
				return nil, fmt.Errorf("paired floor: %w", err)
			}
		}
	}

	if cfg.waiters > 0 && want(implGo) && (cfg.cases == nil || cfg.cases.MatchString("scale")) {
		fmt.Fprintf(cfg.log, "scale: %d waiters on one mutex, one client\n", cfg.waiters)
		sctx, cancel := context.WithTimeout(ctx, 10*time.Minute+cfg.drain)
		rep.scale, rep.scaleErr = runScale(sctx, cfg.connect, fmt.Sprintf("/bench-%s/scale", runID), cfg.waiters, cfg.drain)
		cancel()
		if rep.scaleErr != nil {
			fmt.Fprintf(cfg.log, "  scale: %v\n", rep.scaleErr)
		}
	}

	if cfg.cache.nodes > 0 && want(implGo) && (cfg.cases == nil || cfg.cases.MatchString("cache")) {
		cc := cfg.cache
		cc.curator = want(implCurator)
		cctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
		rep.cache, rep.cacheErr = runCacheCase(cctx, cfg.connect, cc, cfg.log)
		cancel()
		if rep.cacheErr != nil {
			fmt.Fprintf(cfg.log, "  cache: %v\n", rep.cacheErr)
		}
	}

	if cfg.queue.dur > 0 && want(implGo) && (cfg.cases == nil || cfg.cases.MatchString("queue")) {
		qc := cfg.queue
		qc.curator, qc.kazoo = want(implCurator), want(implKazoo)
		rep.queue, rep.queueErr = runQueueCase(ctx, cfg.connect, qc, cfg.log)
	}
	return rep, nil
}

func supports(kinds []string, kind string) bool {
	for _, k := range kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// slug turns a name into a path segment.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
