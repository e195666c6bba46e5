package main

// The queue case: go run ./bench queue [-zk host:port] [-d 5s] [-big N]
// [-big-max 10m] [-parts tput,herd,big] [-smoke]; make bench runs it too
// (BENCH_QUEUE_BIG=N sets its big queue there).
//
// Three parts, on one server in one run:
//
//   - throughput: 4 producers and 4 consumers, each its own session, put
//     and take 32-byte items for -d after a warm-up, with at most 16 items
//     put and not yet taken at any time (so that the latency is the
//     pipeline's, not a backlog's): items/s taken in the window and the
//     put-to-take latency (the item carries its put's start, in epoch
//     microseconds; every process runs on this machine's clock). Rows:
//     go-curator's recipes/queue plain and lock-safe (WithLockPath),
//     Curator 5.4's DistributedQueue without and with lockPath
//     (java/QueueBench.java), Kazoo 2.8's Queue and LockingQueue
//     (kazoo/kazoo_queue_bench.py).
//   - herd: 16 idle consumers, each its own session, and one producer that
//     puts 50 items one at a time, each after the last was taken: the
//     server's watch notifications per item (mntr's zk_sum_node_*
//     _watch_count sums, before and after). go-curator and Curator.
//   - big queue: -big items (1,000,000 by default with -zk; 200,000 on the
//     bench's own server, whose 256 MB heap cannot hold a million; 20,000
//     with -smoke) are written straight to the queue in Curator's layout
//     and encoding (multi requests of 1,000 creates, with go-zookeeper),
//     then one consumer on its own client drains them: the rate over the first and over the
//     last tenth of the items, and the heap the consumer's process holds at
//     half-drain after a GC, less before. go-curator and Curator (its JVM
//     with -Xmx3g and jute.maxbuffer set to 256 MB, since it reads the
//     whole directory in one reply).

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/go-curator/curator/zktest"
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == "queue" {
		os.Exit(queueMain(os.Args[2:]))
	}
}

// The queue case's fixed shape.
const (
	queueProducers = 4
	queueConsumers = 4
	queueInflight  = 16
	herdConsumers  = 16
	herdItems      = 50 // by default
	itemBytes      = 32
)

// queueConfig is one run of the queue case.
type queueConfig struct {
	warm, dur time.Duration
	big       int             // items of the big queue; 0 skips it
	bigMax    time.Duration   // a drain stops after this
	curator   bool            // measure Curator too
	kazoo     bool            // measure Kazoo too
	skip      map[string]bool // parts not to run: "tput", "herd", "big"
	noWarmup  bool            // no warm-up run before each throughput row
	herdItems int             // the herd part's puts
	rounds    int             // the throughput window is split into this many rounds
}

// queueDefaults fills in the queue case's defaults.
func queueDefaults(smoke bool, warm, dur time.Duration, big int) queueConfig {
	qc := queueConfig{warm: warm, dur: dur, big: big, bigMax: 10 * time.Minute, curator: true, kazoo: true, herdItems: herdItems, rounds: 3}
	switch {
	case big < 0:
		qc.big = 0
	case big == 0 && smoke:
		qc.big = 20000
	case big == 0:
		qc.big = 1000000
	}
	if smoke {
		qc.dur, qc.bigMax, qc.rounds = time.Second, 2*time.Minute, 1
	}
	return qc
}

// localBig is the big queue's default on a server the bench starts
// itself: zktest runs it with a 256 MB heap, which 1,000,000 queued items
// (about 250 bytes each in the server) do not fit.
const localBig = 200000

// queueBigEnv is BENCH_QUEUE_BIG, the big queue's items for make bench;
// when it is unset (or not a number): 0, the default 1,000,000, against
// a server given with -zk (external), and localBig against the bench's
// own. -1 skips the big queue.
func queueBigEnv(external bool) int {
	n, err := strconv.Atoi(os.Getenv("BENCH_QUEUE_BIG"))
	if err != nil && !external {
		return localBig
	}
	return n
}

func queueMain(args []string) int {
	fs := flag.NewFlagSet("bench queue", flag.ExitOnError)
	zkAddr := fs.String("zk", "", "use this ZooKeeper instead of starting a local one")
	dur := fs.Duration("d", 5*time.Second, "measured time per throughput row")
	warm := fs.Duration("warm", 500*time.Millisecond, "warm-up before each throughput row")
	big := fs.Int("big", 0, "items of the big queue (default 1,000,000 with -zk, 200,000 on the bench's own server, 20,000 with -smoke; -1 skips it)")
	smoke := fs.Bool("smoke", false, "a second per row and a 20,000-item big queue")
	noJava := fs.Bool("no-curator", false, "skip Curator")
	noKazoo := fs.Bool("no-kazoo", false, "skip Kazoo")
	parts := fs.String("parts", "tput,herd,big", "the parts to run")
	bigMax := fs.Duration("big-max", 0, "stop each drain of the big queue after this long (default 10m, 2m with -smoke)")
	fs.Parse(args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	n := *big
	if n == 0 && !*smoke {
		n = queueBigEnv(*zkAddr != "")
	}
	qc := queueDefaults(*smoke, *warm, *dur, n)
	qc.curator, qc.kazoo = !*noJava, !*noKazoo
	if *bigMax > 0 {
		qc.bigMax = *bigMax
	}
	qc.skip = map[string]bool{"tput": true, "herd": true, "big": true}
	for _, p := range strings.Split(*parts, ",") {
		delete(qc.skip, strings.TrimSpace(p))
	}
	connect := *zkAddr
	if connect == "" {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		c, err := zktest.StartLocal(sctx, 1)
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench queue: no local ZooKeeper:", err)
			return 1
		}
		defer c.Close()
		connect = c.ConnectString()
	}
	res, err := runQueueCase(ctx, connect, qc, os.Stderr)
	if res != nil {
		res.writeTable(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench queue:", err)
		return 1
	}
	return 0
}

// QueueResult is everything the queue case measured.
type QueueResult struct {
	cfg   queueConfig
	tput  []*Result      // throughput rows
	herd  []herdFigures  // herd rows
	big   []drainFigures // big-queue rows
	notes []string       // what could not run, and why
}

type herdFigures struct {
	impl          string
	items         int
	notifications int64
}

type drainFigures struct {
	impl         string
	items, taken int
	first, last  time.Duration // time to drain the first and the last tenth
	span         time.Duration // from the first item taken to the last
	heap         int64         // bytes held at half-drain, after a GC
	heapAtStop   bool          // heap is at the drain's stop: half was not reached
}

// rate is the items per second of a tenth that took part (the first
// tenth's clock starts at the first item taken, so it leaves out the
// consumer's start).
func (d drainFigures) rate(part time.Duration) float64 {
	if part <= 0 {
		return 0
	}
	return float64(max(1, d.items/10)) / part.Seconds()
}

// runQueueCase measures the queue case against connect.
func runQueueCase(ctx context.Context, connect string, qc queueConfig, log io.Writer) (*QueueResult, error) {
	res := &QueueResult{cfg: qc}
	runID := time.Now().Format("150405")
	var java, kazoo *peer
	if qc.curator {
		p, err := startJava(ctx, implCurator+" queue", "QueueBench", queueBenchSource, "-Xmx3g", connect)
		if err != nil {
			res.notes = append(res.notes, fmt.Sprintf("%s: %v", implCurator, err))
		} else {
			java = p
			defer p.close()
		}
	}
	if qc.kazoo {
		p, err := startKazooScript(ctx, "kazoo_queue_bench.py", kazooQueueSource, connect)
		if err != nil {
			res.notes = append(res.notes, fmt.Sprintf("%s: %v", implKazoo, err))
		} else {
			kazoo = p
			defer p.close()
		}
	}

	// Throughput: each implementation once to warm it (and the server),
	// then measured.
	type row struct {
		impl   string
		locked bool
		run    func(ctx context.Context, locked bool, warm, dur time.Duration, path string) (*Result, error)
	}
	rows := []row{{implGo, false, goQueueTput(connect)}, {implGo, true, goQueueTput(connect)}}
	if java != nil {
		rows = append(rows, row{implCurator, false, java.queueTput}, row{implCurator, true, java.queueTput})
	}
	if kazoo != nil {
		rows = append(rows, row{implKazoo, false, kazoo.queueTput}, row{implKazoo, true, kazoo.queueTput})
	}
	// Each row warms up once, then the window is split into rounds that
	// alternate the rows' order, so that a machine that drifts favours
	// none of them.
	rounds := max(qc.rounds, 1)
	merged := make([]*Result, len(rows))
	for round := range rounds {
		if qc.skip["tput"] {
			break
		}
		order := make([]int, len(rows))
		for i := range order {
			order[i] = i
			if round%2 == 1 {
				order[i] = len(rows) - 1 - i
			}
		}
		for _, i := range order {
			r := rows[i]
			name := queueRowName(r.impl, r.locked)
			path := fmt.Sprintf("/bench-%s/queue/tput-%d-r%d", runID, i, round)
			fmt.Fprintf(log, "queue throughput %-44s r%d ", name, round+1)
			if round == 0 && !qc.noWarmup {
				if _, err := r.run(ctx, r.locked, 0, qc.warm+qc.dur/2, path+"-warmup"); err != nil {
					return res, fmt.Errorf("queue throughput, %s (warm-up): %w", name, err)
				}
			}
			out, err := r.run(ctx, r.locked, qc.warm, qc.dur/time.Duration(rounds), path)
			if err != nil {
				return res, fmt.Errorf("queue throughput, %s: %w", name, err)
			}
			fmt.Fprintf(log, "%8.0f items/s  p50 %s ms  p99 %s ms\n", out.OpsPerSec(), ms(out.Percentile(0.5)), ms(out.Percentile(0.99)))
			if merged[i] == nil {
				out.Case, out.Impl, out.Overlaps = "queue 4 producers, 4 consumers", name, -1
				merged[i] = out
			} else {
				merged[i].merge(out)
			}
		}
	}
	for _, m := range merged {
		if m != nil {
			res.tput = append(res.tput, m)
		}
	}

	// Herd.
	if !qc.skip["herd"] {
		if err := res.runHerd(ctx, connect, java, runID, log); err != nil {
			return res, err
		}
	}
	// Big queue.
	if qc.big > 0 && !qc.skip["big"] {
		for _, impl := range []string{implGo, implCurator} {
			if impl == implCurator && java == nil {
				continue
			}
			path := fmt.Sprintf("/bench-%s/queue/big-%s", runID, slug(impl))
			fmt.Fprintf(log, "queue big: filling %s with %d items for %s\n", path, qc.big, impl)
			if err := fillQueue(ctx, connect, path, qc.big); err != nil {
				return res, fmt.Errorf("queue big: fill: %w", err)
			}
			var (
				d   drainFigures
				err error
			)
			if impl == implGo {
				d, err = goQueueDrain(ctx, connect, path, qc.big, qc.bigMax)
			} else {
				d, err = java.queueDrain(ctx, path, qc.big, qc.bigMax)
			}
			if err != nil {
				return res, fmt.Errorf("queue big, %s: %w", impl, err)
			}
			fmt.Fprintf(log, "  %s: %d/%d taken, first tenth %.0f items/s, last tenth %.0f items/s, heap %.1f MB\n",
				impl, d.taken, d.items, d.rate(d.first), d.rate(d.last), float64(d.heap)/1e6)
			res.big = append(res.big, d)
			if err := clearQueue(ctx, connect, path); err != nil {
				fmt.Fprintf(log, "  clean %s: %v\n", path, err)
			}
		}
	}
	return res, nil
}

// runHerd measures the herd part, go-curator then Curator (java, if not
// nil).
func (res *QueueResult) runHerd(ctx context.Context, connect string, java *peer, runID string, log io.Writer) error {
	n := res.cfg.herdItems
	fmt.Fprintf(log, "queue herd: %d idle consumers, %d puts\n", herdConsumers, n)
	h, err := goQueueHerd(ctx, connect, fmt.Sprintf("/bench-%s/queue/herd-go", runID), n)
	if err != nil {
		return fmt.Errorf("queue herd, %s: %w", implGo, err)
	}
	res.herd = append(res.herd, h)
	if java != nil {
		h, err := java.queueHerd(ctx, connect, fmt.Sprintf("/bench-%s/queue/herd-java", runID), n)
		if err != nil {
			return fmt.Errorf("queue herd, %s: %w", implCurator, err)
		}
		res.herd = append(res.herd, h)
	}
	return nil
}

// queueRowName names a throughput row.
func queueRowName(impl string, locked bool) string {
	switch {
	case impl == implKazoo && locked:
		return impl + " LockingQueue"
	case impl == implKazoo:
		return impl + " Queue"
	case impl == implCurator && locked:
		return impl + " DistributedQueue, lockPath"
	case impl == implCurator:
		return impl + " DistributedQueue"
	case locked:
		return impl + " queue.New, WithLockPath"
	}
	return impl + " queue.New"
}

// writeTable writes the queue case's tables and its targets (issue 33).
func (r *QueueResult) writeTable(w io.Writer) {
	if len(r.tput) > 0 {
		r.writeTput(w)
	}
	r.writeRest(w)
}

func (r *QueueResult) writeTput(w io.Writer) {
	fmt.Fprintf(w, "\nQueue (issue 33): %d producers and %d consumers, each its own session, at most %d items in flight, %d-byte items\n\n",
		queueProducers, queueConsumers, queueInflight, itemBytes)
	fmt.Fprintln(w, "| implementation | items/s | p50 ms | p99 ms | items/s vs Curator | p99 vs Curator | errors |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	base := func(locked bool) *Result {
		for _, t := range r.tput {
			if t.Impl == queueRowName(implCurator, locked) {
				return t
			}
		}
		return nil
	}
	for _, t := range r.tput {
		b := base(strings.Contains(t.Impl, "Lock"))
		opsRatio, p99Ratio := "–", "–"
		if b != nil {
			opsRatio = ratio(t.OpsPerSec(), b.OpsPerSec())
			p99Ratio = ratio(float64(t.Percentile(0.99)), float64(b.Percentile(0.99)))
		}
		errs := fmt.Sprint(t.Errors)
		if t.Errors > 0 {
			errs += " (first: " + oneLine(t.FirstError, 60) + ")"
		}
		fmt.Fprintf(w, "| %s | %.0f | %s | %s | %s | %s | %s |\n", t.Impl, t.OpsPerSec(),
			ms(t.Percentile(0.5)), ms(t.Percentile(0.99)), opsRatio, p99Ratio, errs)
	}
}

func (r *QueueResult) writeRest(w io.Writer) {
	if len(r.herd) > 0 {
		fmt.Fprintf(w, "\nQueue herd: %d idle consumers, each its own session; %d puts, each after the last was taken\n\n", herdConsumers, r.cfg.herdItems)
		fmt.Fprintln(w, "| implementation | watch notifications per put (mntr) |")
		fmt.Fprintln(w, "|---|---:|")
		for _, h := range r.herd {
			fmt.Fprintf(w, "| %s | %.1f (%d for %d) |\n", h.impl, float64(h.notifications)/float64(h.items), h.notifications, h.items)
		}
	}
	if len(r.big) > 0 {
		fmt.Fprintf(w, "\nQueue big: %d queued items drained by one consumer (for at most %v)\n\n", r.cfg.big, r.cfg.bigMax)
		if r.cfg.big == localBig {
			fmt.Fprintf(w, "(%d, not 1,000,000: the bench's own ZooKeeper has a 256 MB heap; BENCH_QUEUE_BIG=1000000 with -zk and a server of 2 GB or more for the full figure)\n\n", localBig)
		}
		fmt.Fprintln(w, "| implementation | taken | items/s, first tenth | items/s, last tenth | heap at half-drain |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
		for _, d := range r.big {
			first := fmt.Sprintf("%.0f", d.rate(d.first))
			if d.first <= 0 && d.span > 0 {
				first = fmt.Sprintf("not reached: %.0f over the %d taken", float64(d.taken-1)/d.span.Seconds(), d.taken)
			}
			last := "not reached"
			if d.last > 0 {
				last = fmt.Sprintf("%.0f", d.rate(d.last))
			}
			heap := "not reached"
			if d.heap != 0 {
				heap = fmt.Sprintf("%.1f MB", float64(d.heap)/1e6)
			}
			if d.heapAtStop {
				heap += " (at the stop, half not reached)"
			}
			fmt.Fprintf(w, "| %s | %d of %d | %s | %s | %s |\n", d.impl, d.taken, d.items, first, last, heap)
		}
	}
	for _, ts := range r.targets() {
		met := "yes"
		if !ts.met {
			met = "**no**"
		}
		fmt.Fprintf(w, "\n- target: %s: %s (met: %s)", ts.what, ts.got, met)
	}
	for _, n := range r.notes {
		fmt.Fprintf(w, "\n- not run: %s", n)
	}
	fmt.Fprintln(w)
}

// targets are issue 33's throughput goals, plain mode against Curator's
// DistributedQueue, lock-safe against its lockPath mode.
func (r *QueueResult) targets() []target {
	var ts []target
	for _, locked := range []bool{false, true} {
		var g, c *Result
		for _, t := range r.tput {
			switch t.Impl {
			case queueRowName(implGo, locked):
				g = t
			case queueRowName(implCurator, locked):
				c = t
			}
		}
		if g == nil || c == nil || c.Ops == 0 || g.Ops == 0 {
			continue
		}
		opsR := g.OpsPerSec() / c.OpsPerSec()
		p99R := float64(g.Percentile(0.99)) / float64(c.Percentile(0.99))
		ts = append(ts,
			target{what: "queue items/s >= 1.5x Curator (" + g.Impl + ")", got: fmt.Sprintf("%.2fx", opsR), met: opsR >= 1.5},
			target{what: "queue p99 put-to-take <= 0.5x Curator (" + g.Impl + ")", got: fmt.Sprintf("%.2fx", p99R), met: p99R <= 0.5})
	}
	return ts
}
