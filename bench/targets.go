package main

import "fmt"

// target is one of the issues' goals (9's unless another is named),
// checked against this run.
type target struct {
	what string
	got  string
	met  bool
}

// targets checks issue 9's goals on the figures of this run. A goal whose
// figures are missing (a case not run, a peer not installed) is left out.
func (rep *report) targets() []target {
	var ts []target
	pair := func(caseName string) (g, c *Result) {
		return rep.find(caseName, implGo), rep.find(caseName, implCurator)
	}
	opsR := func(g, c *Result) float64 { return g.OpsPerSec() / c.OpsPerSec() }
	p99R := func(g, c *Result) float64 {
		return float64(g.Percentile(0.99)) / float64(c.Percentile(0.99))
	}
	valid := func(g, c *Result) bool { return g != nil && c != nil && g.Ops > 0 && c.Ops > 0 }

	// floor says what the same ZooKeeper operations with nothing around
	// them reached against Curator: no lock that keeps the algorithm's
	// round trips can beat that by much.
	floor := func(caseName string, p99 bool) string {
		f, c := rep.find(caseName, implRaw), rep.find(caseName, implCurator)
		if !valid(f, c) {
			return ""
		}
		if p99 {
			return fmt.Sprintf(" (raw floor: %.2f×)", p99R(f, c))
		}
		return fmt.Sprintf(" (raw floor: %.2f×)", opsR(f, c))
	}
	if g, c := pair("mutex uncontended"); valid(g, c) {
		r := opsR(g, c)
		ts = append(ts, target{"uncontended cycles/s ≥ 1.25× Curator", fmt.Sprintf("%.2f×%s", r, floor("mutex uncontended", false)), r >= 1.25})
	}
	if p := rep.paired; p != nil && p.n > 0 {
		r := p.ratio()
		ts = append(ts, target{"uncontended within 3% of the raw floor", fmt.Sprintf("%.1f%% of the floor's cycles/s, paired cycle by cycle", 100*r), r >= 0.97})
	} else if g, f := rep.find("mutex uncontended", implGo), rep.find("mutex uncontended", implRaw); valid(g, f) {
		r := opsR(g, f)
		ts = append(ts, target{"uncontended within 3% of the raw floor", fmt.Sprintf("%.1f%% of the floor", 100*r), r >= 0.97})
	}
	if g, c := pair("mutex contended ×16"); valid(g, c) {
		r, p := opsR(g, c), p99R(g, c)
		ts = append(ts,
			target{"contended ×16 acquisitions/s ≥ 1.5× Curator", fmt.Sprintf("%.2f×%s", r, floor("mutex contended ×16", false)), r >= 1.5},
			target{"contended ×16 p99 ≤ 0.6× Curator", fmt.Sprintf("%.2f×%s", p, floor("mutex contended ×16", true)), p <= 0.6})
	}
	for _, n := range []string{"mutex contended ×4", "mutex contended ×16"} {
		g, c := pair(n)
		f := rep.find(n, implRaw)
		if !valid(g, c) || !valid(f, c) {
			continue
		}
		r, rf := opsR(g, c), opsR(g, f)
		ts = append(ts, target{n + " ≥ 1.5× Curator and ≥ 1.15× the raw floor (issue 25)",
			fmt.Sprintf("%.2f× Curator, %.2f× the floor", r, rf), r >= 1.5 && rf >= 1.15})
		if n == "mutex contended ×16" {
			p := p99R(g, c)
			ts = append(ts, target{n + " p99 ≤ 0.8× Curator (issue 25)", fmt.Sprintf("%.2f×", p), p <= 0.8})
		}
	}
	if g, c := pair("semaphore 2 leases ×16"); valid(g, c) {
		r := opsR(g, c)
		ts = append(ts, target{"semaphore ≥ 2× Curator", fmt.Sprintf("%.2f×", r), r >= 2})
	}
	if g, c := pair("atomiclong increment ×16"); valid(g, c) {
		r, p := opsR(g, c), p99R(g, c)
		ts = append(ts,
			target{"atomiclong p99 ≤ 0.1× Curator", fmt.Sprintf("%.2f×", p), p <= 0.1},
			target{"atomiclong throughput ≥ 1× Curator", fmt.Sprintf("%.2f×", r), r >= 1})
	}
	if g, c := pair("atomiclong increment ×4"); valid(g, c) {
		r := opsR(g, c)
		ts = append(ts, target{"atomiclong ×4 throughput ≥ 1× Curator (issue 24)", fmt.Sprintf("%.2f×", r), r >= 1})
	}
	ts = append(ts, rep.spreadTargets()...)
	if g, c := pair("sharedcount TrySetCount ×16"); valid(g, c) {
		r := opsR(g, c)
		ts = append(ts, target{"sharedcount ≥ 1.3× Curator", fmt.Sprintf("%.2f×", r), r >= 1.3})
	}
	if s := rep.scale; s != nil {
		per := float64(s.Notifications) / float64(s.Handoffs)
		ts = append(ts,
			target{"≤ 5 KB heap per waiter", fmt.Sprintf("%.0f B", s.HeapPer), s.HeapPer <= 5*1024},
			target{"≤ 1 goroutine per waiter", fmt.Sprintf("%.3f", s.GoroutPer), s.GoroutPer <= 1.0},
			// No herd: the woken waiter's watch, and the event the
			// client's children view gets for the same delete (a long
			// queue's waiters decide from the view; lockcore's doc).
			// (+2: the holder's own release, and the last waiter's.)
			target{"no herd: ≤ 2 watch notifications per release", fmt.Sprintf("%.3f", per), s.Notifications <= 2*int64(s.Handoffs)+2},
			target{"waiters acquire in FIFO order", fmt.Sprintf("%v", s.FIFO), s.FIFO})
		if g := rep.find("mutex contended ×16", implGo); g != nil && g.Ops > 0 && s.ChainTime > 0 {
			drain := float64(s.Handoffs) / s.ChainTime.Seconds()
			r := drain / g.OpsPerSec()
			ts = append(ts, target{"scale drain ≥ 50 % of the ×16 hand-off rate (issue 17)",
				fmt.Sprintf("%.0f/s = %.0f %%", drain, 100*r), r >= 0.5})
			ts = append(ts, target{"10,000 waiters: drain ≥ the ×16 rate, FIFO, ≤ 2 KB heap per waiter (issue 25)",
				fmt.Sprintf("%.2f× the ×16 rate, FIFO %v, %.0f B", r, s.FIFO, s.HeapPer),
				r >= 1 && s.FIFO && s.HeapPer <= 2048 && s.Waiters >= 10000})
		}
	}
	if rep.cache != nil {
		ts = append(ts, rep.cache.targets()...)
	}
	var overlaps int64
	checked := 0
	for _, r := range rep.results {
		if r.Skipped == "" && r.Overlaps >= 0 {
			overlaps += r.Overlaps
			checked++
		}
	}
	if checked > 0 {
		ts = append(ts, target{"no overlapping holders, any implementation", fmt.Sprintf("%d overlaps", overlaps), overlaps == 0})
	}
	for _, r := range rep.results {
		if r.Skipped == "" && r.Final != nil && *r.Final != r.TotalOK {
			ts = append(ts, target{r.Impl + " " + r.Case + ": final value = successes",
				fmt.Sprintf("%d vs %d", *r.Final, r.TotalOK), false})
		}
	}
	return ts
}
