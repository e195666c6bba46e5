package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
)

// baseline returns the Curator result of the same case, or nil.
func (rep *report) baseline(caseName string) *Result {
	return rep.find(caseName, baselineImpl)
}

func (rep *report) find(caseName, impl string) *Result {
	for _, r := range rep.results {
		if r.Case == caseName && r.Impl == impl && r.Skipped == "" {
			return r
		}
	}
	return nil
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

// topology names the ZooKeeper the run used.
func (rep *report) topology() string {
	if rep.cfg.topology == "" {
		return "given"
	}
	return rep.cfg.topology
}

// notes describes a result's checks: overlaps, errors, final values.
func (rep *report) notes(r *Result) string {
	var n []string
	if r.Overlaps >= 0 {
		n = append(n, fmt.Sprintf("overlaps %d", r.Overlaps))
	}
	if r.Attempts > 0 {
		n = append(n, fmt.Sprintf("%d calls (%.0f%% ok)", r.Attempts, 100*float64(r.Ops)/float64(r.Attempts)))
	}
	if r.Final != nil {
		mark := "="
		if *r.Final != r.TotalOK {
			mark = "≠ (WRONG)"
		}
		n = append(n, fmt.Sprintf("final %d %s successes %d", *r.Final, mark, r.TotalOK))
	}
	if r.Impl == implGo && r.Case == "mutex uncontended" {
		if p := rep.paired; p != nil && p.n > 0 {
			n = append(n, fmt.Sprintf("paired with the raw floor cycle by cycle (%d each): %.1f%% of its throughput, p50 %s vs %s ms",
				p.n, 100*p.ratio(), ms(p.goP50), ms(p.rawP50)))
		} else if f := rep.find(r.Case, floorImplName); f != nil {
			n = append(n, fmt.Sprintf("%.1f%% of raw floor", 100*r.OpsPerSec()/f.OpsPerSec()))
		}
	}
	if r.ReqsPerOp() > 0 {
		n = append(n, fmt.Sprintf("%.1f req/op, %.2f ms/op in the server", r.ReqsPerOp(), float64(r.ServerPerOp())/1e6))
	}
	if r.CPUPerOp() > 0 {
		n = append(n, fmt.Sprintf("client CPU %.0f µs/op (%.0f%% of a core)", float64(r.CPUPerOp())/1e3, 100*r.CPUShare()))
	}
	if r.Errors > 0 {
		n = append(n, fmt.Sprintf("%d errors (first: %s)", r.Errors, oneLine(r.FirstError, 80)))
	}
	if s := spreadNote(r); s != "" {
		n = append(n, s)
	}
	n = append(n, r.Notes...)
	return strings.Join(n, "; ")
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// writeTable writes the results as a markdown table, then the scale case
// and the targets.
func (rep *report) writeTable(w io.Writer) {
	cfg := rep.cfg
	fmt.Fprintf(w, "go-curator bench, %s: %v measured per case and implementation in %d round(s), each after a %v warm-up; ZooKeeper %s, %s, at %s; %d CPUs; %s\n\n",
		rep.started.Format("2006-01-02 15:04"), cfg.w.dur, cfg.rounds, cfg.w.warm, rep.zkVersion, rep.topology(), cfg.connect, runtime.NumCPU(), runtime.Version())
	if rep.etcd != "" {
		fmt.Fprintf(w, "The %s rows are a reference, not a target: they run on another server, %s, beside the ZooKeeper above on the same machine; their ratios compare the two systems, not the libraries.\n\n", implEtcd, rep.etcd)
	}
	if len(rep.results) > 0 {
		fmt.Fprintln(w, "| case | implementation | ops/s | p50 ms | p99 ms | ops/s vs Curator | p99 vs Curator | notes |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---|")
	}
	for _, r := range rep.results {
		if r.Skipped != "" {
			fmt.Fprintf(w, "| %s | %s | – | – | – | – | – | not run: %s |\n", r.Case, r.Impl, r.Skipped)
			continue
		}
		base := rep.baseline(r.Case)
		opsRatio, p99Ratio := "–", "–"
		if base != nil {
			opsRatio = ratio(r.OpsPerSec(), base.OpsPerSec())
			p99Ratio = ratio(float64(r.Percentile(0.99)), float64(base.Percentile(0.99)))
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %s | %s | %s | %s | %s |\n", r.Case, r.Impl, r.OpsPerSec(),
			ms(r.Percentile(0.5)), ms(r.Percentile(0.99)), opsRatio, p99Ratio, rep.notes(r))
	}
	if s := rep.scale; s != nil {
		fmt.Fprintf(w, "\nScale: %d waiters queued on one go-curator mutex through one client (one process)\n\n", s.Waiters)
		fmt.Fprintln(w, "| measure | value |")
		fmt.Fprintln(w, "|---|---:|")
		fmt.Fprintf(w, "| time to queue them all | %.1f s |\n", s.QueueTime.Seconds())
		fmt.Fprintf(w, "| heap per waiter | %.0f B |\n", s.HeapPer)
		fmt.Fprintf(w, "| goroutine stack per waiter (the caller's own goroutine) | %.0f B |\n", s.StackPer)
		fmt.Fprintf(w, "| goroutines per waiter | %.3f |\n", s.GoroutPer)
		fmt.Fprintf(w, "| server watches while queued (wchs), per waiter | %.3f |\n", float64(s.WatchesHeld)/float64(s.Waiters))
		fmt.Fprintf(w, "| watch notifications per release (mntr) | %.3f (%d for %d hand-offs) |\n", float64(s.Notifications)/float64(s.Handoffs), s.Notifications, s.Handoffs)
		if s.WatchesAfter >= 0 {
			fmt.Fprintf(w, "| watches left after the queue drained | %d |\n", s.WatchesAfter)
		}
		fmt.Fprintf(w, "| waiters that acquired before the drain stopped | %d of %d in %.1f s |\n", s.Handoffs, s.Waiters, s.ChainTime.Seconds())
		fmt.Fprintf(w, "| hand-offs per second while draining | %.0f |\n", float64(s.Handoffs)/s.ChainTime.Seconds())
		fmt.Fprintf(w, "| FIFO order | %v (%d of %d out of order) |\n", s.FIFO, s.OutOfOrd, s.Handoffs)
		if s.Errors > 0 {
			fmt.Fprintf(w, "| errors | %d (first: %s) |\n", s.Errors, oneLine(s.FirstErr, 80))
		}
	} else if rep.scaleErr != nil {
		fmt.Fprintf(w, "\nScale: failed: %v\n", rep.scaleErr)
	}
	if rep.cache != nil {
		rep.cache.writeTable(w)
	} else if rep.cacheErr != nil {
		fmt.Fprintf(w, "\nCache: failed: %v\n", rep.cacheErr)
	}
	if rep.queue != nil {
		rep.queue.writeTable(w)
	}
	if rep.queueErr != nil {
		fmt.Fprintf(w, "\nQueue: failed: %v\n", rep.queueErr)
	}
	if ts := rep.targets(); len(ts) > 0 {
		fmt.Fprintln(w, "\nTargets (issue 9, and the later issues named), as ratios to Curator in this run:")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| target | measured | met |")
		fmt.Fprintln(w, "|---|---|---|")
		for _, t := range ts {
			met := "yes"
			if !t.met {
				met = "**no**"
			}
			fmt.Fprintf(w, "| %s | %s | %s |\n", t.what, t.got, met)
		}
	}
	fmt.Fprintln(w, "\nops/s counts operations that ended inside the measured windows (successful ones for atomiclong and sharedcount); p50 and p99 are of the whole cycle (uncontended), the acquire (contended, semaphore), the increment, or the successful TrySetCount. req/op is the server's requests per operation (mntr zk_packets_received; per call for the compare-and-set cases); client CPU is the client process's user+system time (/proc).")
	for name, why := range rep.missing {
		fmt.Fprintf(w, "\n%s did not run: %s\n", name, why)
	}
}
