package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Result is what one implementation did on one case.
type Result struct {
	Case    string // e.g. "mutex-contended-16"
	Impl    string // e.g. "go-curator"
	Ops     int    // operations completed inside the window
	Seconds float64
	Lat     []time.Duration // latency of each of those operations

	Overlaps   int64 // -1 when the case has no witness
	MaxHolders int64
	Errors     int64
	FirstError string
	Attempts   int64 // calls in the window, for compare-and-set cases
	TotalOK    int64 // successes over the whole run, warm-up included
	Final      *int64
	Notes      []string
	Skipped    string // why there are no figures
	// PerClient counts each client's operations that ended inside the
	// window, one entry per client and round; nil when not measured.
	PerClient []int64
	// Slowest is the longest call that ended inside or after the window,
	// successful or not: what the unluckiest caller waited. 0: not measured.
	Slowest time.Duration

	// What the probe saw inside the windows: server requests, the client
	// process's CPU time, the windows' length, and the operations (calls,
	// for compare-and-set cases) they are divided by. Zero when unknown.
	probeReqs     int64
	probeServerMS int64 // time requests spent in the server
	probeCPU      time.Duration
	probeWindow   time.Duration
	probeOps      int
}

// ReqsPerOp is the server requests per operation, or 0 if unknown.
func (r *Result) ReqsPerOp() float64 {
	if r.probeOps == 0 {
		return 0
	}
	return float64(r.probeReqs) / float64(r.probeOps)
}

// ServerPerOp is the time the server spent on one operation's requests,
// from receipt to response, or 0 if unknown.
func (r *Result) ServerPerOp() time.Duration {
	if r.probeOps == 0 {
		return 0
	}
	return time.Duration(float64(r.probeServerMS) * float64(time.Millisecond) / float64(r.probeOps))
}

// CPUPerOp is the client process's CPU time per operation, or 0.
func (r *Result) CPUPerOp() time.Duration {
	if r.probeOps == 0 {
		return 0
	}
	return r.probeCPU / time.Duration(r.probeOps)
}

// CPUShare is the client process's CPU use as a share of one core.
func (r *Result) CPUShare() float64 {
	if r.probeWindow == 0 {
		return 0
	}
	return float64(r.probeCPU) / float64(r.probeWindow)
}

// merge adds another round of the same case and implementation to r.
func (r *Result) merge(o *Result) {
	r.Ops += o.Ops
	r.Seconds += o.Seconds
	r.Lat = append(r.Lat, o.Lat...)
	slices.Sort(r.Lat)
	if r.Overlaps >= 0 && o.Overlaps >= 0 {
		r.Overlaps += o.Overlaps
	}
	r.MaxHolders = max(r.MaxHolders, o.MaxHolders)
	if r.Errors == 0 {
		r.FirstError = o.FirstError
	}
	r.Errors += o.Errors
	r.Attempts += o.Attempts
	r.TotalOK += o.TotalOK
	r.PerClient = append(r.PerClient, o.PerClient...)
	r.Slowest = max(r.Slowest, o.Slowest)
	if r.Final != nil && o.Final != nil {
		sum := *r.Final + *o.Final
		r.Final = &sum
	} else {
		r.Final = nil
	}
	r.probeReqs += o.probeReqs
	r.probeServerMS += o.probeServerMS
	r.probeCPU += o.probeCPU
	r.probeWindow += o.probeWindow
	r.probeOps += o.probeOps
}

// OpsPerSec is the throughput inside the window.
func (r *Result) OpsPerSec() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Seconds
}

// Percentile returns the nearest-rank percentile p (0 < p <= 1) of the
// latencies, or 0 when there are none. Lat must be sorted.
func (r *Result) Percentile(p float64) time.Duration {
	n := len(r.Lat)
	if n == 0 {
		return 0
	}
	i := int(float64(n)*p+0.999999999) - 1
	return r.Lat[min(max(i, 0), n-1)]
}

// tally is the shared state of one measured run: the window, the witness
// and the counters. Workers call its methods concurrently.
type tally struct {
	t0, t1 time.Time // the measured window

	holders    atomic.Int64
	maxHolders atomic.Int64
	overlaps   atomic.Int64
	errors     atomic.Int64
	attempts   atomic.Int64
	totalOK    atomic.Int64

	mu       sync.Mutex
	firstErr string
	lat      []time.Duration
}

// enter marks a holder in, and counts an overlap when more than limit hold.
func (t *tally) enter(limit int64) {
	n := t.holders.Add(1)
	for {
		m := t.maxHolders.Load()
		if n <= m || t.maxHolders.CompareAndSwap(m, n) {
			break
		}
	}
	if n > limit {
		t.overlaps.Add(1)
	}
}

func (t *tally) leave() { t.holders.Add(-1) }

func (t *tally) inWindow(end time.Time) bool { return !end.Before(t.t0) && !end.After(t.t1) }

// record keeps an operation that ended inside the window.
func (t *tally) record(start, end time.Time) {
	if !t.inWindow(end) {
		return
	}
	t.mu.Lock()
	t.lat = append(t.lat, end.Sub(start))
	t.mu.Unlock()
}

// attempt counts a compare-and-set call that ended inside the window.
func (t *tally) attempt(end time.Time) {
	if t.inWindow(end) {
		t.attempts.Add(1)
	}
}

func (t *tally) fail(err error) {
	if t.errors.Add(1) == 1 {
		t.mu.Lock()
		t.firstErr = err.Error()
		t.mu.Unlock()
	}
}

// step is one operation of one worker. ctx ends at the end of the window;
// a step that ctx ends is not an error.
type step func(ctx context.Context, t *tally) error

// window is how long a case warms up and then measures.
type window struct {
	warm, dur time.Duration
}

// measure runs one step function per worker until s's window closes, and
// returns the tallies. Steps are built before the clock starts.
func measure(ctx context.Context, s spec, steps []step) *Result {
	w := s.w
	t := &tally{}
	start := time.Now()
	t.t0 = start.Add(w.warm)
	t.t1 = t.t0.Add(w.dur)
	if s.onStart != nil {
		s.onStart(t.t0, t.t1)
	}
	runCtx, cancel := context.WithDeadline(ctx, t.t1)
	defer cancel()
	var wg sync.WaitGroup
	for _, st := range steps {
		wg.Go(func() {
			for runCtx.Err() == nil {
				if err := st(runCtx, t); err != nil && runCtx.Err() == nil {
					t.fail(err)
					time.Sleep(10 * time.Millisecond) // no hot loop on a persistent error
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(t.lat)
	return &Result{
		Ops:        len(t.lat),
		Seconds:    w.dur.Seconds(),
		Lat:        t.lat,
		Overlaps:   t.overlaps.Load(),
		MaxHolders: t.maxHolders.Load(),
		Errors:     t.errors.Load(),
		FirstError: t.firstErr,
		Attempts:   t.attempts.Load(),
		TotalOK:    t.totalOK.Load(),
	}
}

// since formats a duration for the table, in milliseconds.
func ms(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond))
}
