// Package observe reports the recipes' lock and lease waits and holds to
// the client's metrics hook (framework.Metrics's AcquireStarted,
// AcquireDone, HoldStarted and Released). Without those funcs it reads no
// clock and costs a nil check.
//
// Every Begin must be matched by one Wait.End, and every Held by one
// Hold.Release or Hold.End, on every path (errors and losses included):
// a metrics adapter keeps gauges of the acquires waiting and the holds
// held from the difference.
package observe

import (
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
)

// Wait is one acquire being timed. The zero Wait reports nothing.
type Wait struct {
	done  func(framework.AcquireInfo)
	kind  string
	start time.Time
}

// Begin reports the start of an acquire of a lock or lease of kind (one
// of the framework's Kind constants) to c's hook, and starts timing it.
func Begin(c *framework.Client, kind string) Wait {
	m := c.Metrics()
	if m.AcquireStarted != nil {
		m.AcquireStarted(framework.AcquireStartInfo{Kind: kind})
	}
	if m.AcquireDone == nil {
		return Wait{}
	}
	return Wait{done: m.AcquireDone, kind: kind, start: time.Now()}
}

// End reports the acquire: held (ok), or not, with err (see
// framework.OutcomeOf).
func (w Wait) End(ok bool, err error) {
	if w.done == nil {
		return
	}
	info := framework.AcquireInfo{Kind: w.kind, Duration: time.Since(w.start), Outcome: framework.OutcomeOf(ok, err)}
	if info.Outcome == framework.OutcomeError || info.Outcome == framework.OutcomeCancelled {
		info.Err = err
	}
	w.done(info)
}

// Hold is one hold or lease being timed. The zero Hold reports nothing.
type Hold struct {
	released func(framework.HoldInfo)
	kind     string
	start    time.Time
}

// Held reports the grant of a hold of kind to c's hook, and starts
// timing it.
func Held(c *framework.Client, kind string) Hold {
	m := c.Metrics()
	if m.HoldStarted != nil {
		m.HoldStarted(framework.HoldStartInfo{Kind: kind})
	}
	if m.Released == nil {
		return Hold{}
	}
	return Hold{released: m.Released, kind: kind, start: time.Now()}
}

// Release reports the hold's release; lost is its Lost channel.
func (h Hold) Release(lost <-chan struct{}) {
	if h.released != nil {
		h.End(chans.IsClosed(lost))
	}
}

// End reports the end of the hold: lost, or released while trusted.
func (h Hold) End(lost bool) {
	if h.released == nil {
		return
	}
	h.released(framework.HoldInfo{Kind: h.kind, Duration: time.Since(h.start), Lost: lost})
}
