package main

import (
	"fmt"
	"slices"
	"time"
)

// spread is how evenly one result's operations fell on its clients, and
// how long its unluckiest call waited: a counter whose throughput and p99
// look fine can still starve one caller (issue 24).
type spread struct {
	min, max int64
	mean     float64
	slowest  time.Duration
	p99      time.Duration
}

// spreadOf returns r's spread, or false when r measured none.
func spreadOf(r *Result) (spread, bool) {
	if len(r.PerClient) == 0 {
		return spread{}, false
	}
	var sum int64
	for _, n := range r.PerClient {
		sum += n
	}
	return spread{
		min:     slices.Min(r.PerClient),
		max:     slices.Max(r.PerClient),
		mean:    float64(sum) / float64(len(r.PerClient)),
		slowest: r.Slowest,
		p99:     r.Percentile(0.99),
	}, true
}

// minShare is the least client's operations over the mean client's.
func (s spread) minShare() float64 {
	if s.mean == 0 {
		return 0
	}
	return float64(s.min) / s.mean
}

// slowestOverP99 is the slowest call over the p99 of the successful ones.
func (s spread) slowestOverP99() float64 {
	if s.p99 == 0 {
		return 0
	}
	return float64(s.slowest) / float64(s.p99)
}

// spreadNote describes r's spread for the table's notes, or "".
func spreadNote(r *Result) string {
	s, ok := spreadOf(r)
	if !ok {
		return ""
	}
	return fmt.Sprintf("per client and round: min %d, mean %.0f, max %d (min %.0f%% of mean); slowest call %s ms (%.1f× p99)",
		s.min, s.mean, s.max, 100*s.minShare(), ms(s.slowest), s.slowestOverP99())
}

// spreadTargets checks issue 24's goals for the atomic long: at ×4 and
// ×16, every client makes at least a quarter of the mean client's
// increments, and no call waits more than 10 times the p99.
func (rep *report) spreadTargets() []target {
	var ts []target
	for _, c := range allCases() {
		if c.kind != kindAtomicLong {
			continue
		}
		g := rep.find(c.name, implGo)
		if g == nil || g.Ops == 0 {
			continue
		}
		s, ok := spreadOf(g)
		if !ok {
			continue
		}
		ts = append(ts,
			target{c.name + ": least client ≥ 25% of the mean (issue 24)", fmt.Sprintf("%.0f%%", 100*s.minShare()), s.minShare() >= 0.25},
			target{c.name + ": slowest call ≤ 10× p99 (issue 24)", fmt.Sprintf("%.1f×", s.slowestOverP99()), s.slowestOverP99() <= 10})
	}
	return ts
}
