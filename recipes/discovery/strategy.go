package discovery

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Strategy picks one instance from those a Provider may use: Curator's
// ProviderStrategy. Pick is given at least one instance, sorted by ID, and
// returns its pick and true, or false to decline (as a Curator strategy
// returns null): [Provider.Instance] then returns an error matching
// [ErrDeclined] (and [ErrNoInstance]). Pick must return one of the
// instances it was given. It is called from any goroutine: an
// implementation must be safe for concurrent use. A Strategy is used by
// one Provider; do not share one between providers.
type Strategy interface {
	Pick(instances []Instance) (Instance, bool)
}

// RoundRobin returns Curator's RoundRobinStrategy: each pick takes the
// next instance in ID order, wrapping around.
func RoundRobin() Strategy { return &roundRobin{} }

type roundRobin struct{ next atomic.Uint64 }

func (r *roundRobin) Pick(instances []Instance) (Instance, bool) {
	return instances[(r.next.Add(1)-1)%uint64(len(instances))], true
}

// Random returns Curator's RandomStrategy: each pick is uniform.
func Random() Strategy { return random{} }

type random struct{}

func (random) Pick(instances []Instance) (Instance, bool) {
	return instances[rand.IntN(len(instances))], true
}

// Sticky returns Curator's StickyStrategy: it keeps returning the same
// instance while that instance is available (registered, enabled, passing
// the filters and not down), and otherwise picks a new one with next (nil
// means RoundRobin); when next declines, so does Sticky, and it keeps no
// instance.
func Sticky(next Strategy) Strategy {
	if next == nil {
		next = RoundRobin()
	}
	return &sticky{next: next}
}

type sticky struct {
	next Strategy
	mu   sync.Mutex
	ours *Instance
}

func (s *sticky) Pick(instances []Instance) (Instance, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ours != nil {
		for _, in := range instances {
			if in.Name == s.ours.Name && in.ID == s.ours.ID {
				s.ours = &in
				return in, true
			}
		}
	}
	in, ok := s.next.Pick(instances)
	if !ok {
		s.ours = nil
		return Instance{}, false
	}
	s.ours = &in
	return in, true
}

// DownPolicy is Curator's DownInstancePolicy: an instance reported with
// [Provider.NoteError] Threshold times is left out of the provider's picks
// until Timeout after its first reported error. The zero value means
// Curator's defaults: 30 s and 2 errors.
type DownPolicy struct {
	Timeout   time.Duration
	Threshold int
}

// downList counts the errors noted per instance, as Curator's
// DownInstanceManager does.
type downList struct {
	policy DownPolicy
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]downEntry // key: name + "/" + id
}

type downEntry struct {
	first  time.Time
	errors int
}

func newDownList(p DownPolicy) *downList {
	if p.Timeout == 0 {
		p.Timeout = 30 * time.Second
	}
	if p.Threshold == 0 {
		p.Threshold = 2
	}
	return &downList{policy: p, now: time.Now, entries: make(map[string]downEntry)}
}

func downKey(in Instance) string { return in.Name + "/" + in.ID }

// note counts one error of in.
func (d *downList) note(in Instance) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.purge()
	e, ok := d.entries[downKey(in)]
	if !ok {
		e.first = d.now()
	}
	e.errors++
	d.entries[downKey(in)] = e
}

// up reports whether in may be picked.
func (d *downList) up(in Instance) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.purge()
	e, ok := d.entries[downKey(in)]
	return !ok || e.errors < d.policy.Threshold
}

// purge forgets the entries whose timeout has passed; d.mu is held.
func (d *downList) purge() {
	now := d.now()
	for k, e := range d.entries {
		if now.Sub(e.first) >= d.policy.Timeout {
			delete(d.entries, k)
		}
	}
}
