package discovery

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-curator/curator/internal/recipe"
)

// Provider picks an instance of one service for each call a client makes:
// Curator's ServiceProvider. It reads a Cache it owns, so a pick does no
// I/O. An instance is a candidate when it is enabled, passes every
// filter, and is not down under the provider's DownPolicy; the Strategy
// picks among the candidates. It is safe for concurrent use and must not
// be copied. Make one with [Discovery.NewProvider], then Start it.
type Provider struct {
	cache    *Cache
	strategy Strategy
	filters  []func(Instance) bool
	down     *downList
}

// ProviderOption configures a Provider. An option given a bad value
// returns an error matching [ErrInvalidArgument], which
// [Discovery.NewProvider] returns.
type ProviderOption func(*providerOptions) error

// providerOptions are what the ProviderOptions set.
type providerOptions struct {
	strategy Strategy
	filters  []func(Instance) bool
	down     DownPolicy
}

// WithStrategy sets the provider's strategy (default RoundRobin, as in
// Curator).
func WithStrategy(s Strategy) ProviderOption {
	return func(p *providerOptions) error {
		if s == nil {
			return recipe.BadArg(ErrInvalidArgument, "nil Strategy")
		}
		p.strategy = s
		return nil
	}
}

// WithFilter adds a filter (Curator's InstanceFilter): an instance for
// which f returns false is not a candidate. f is called from any
// goroutine, without locks held; it must not block.
func WithFilter(f func(Instance) bool) ProviderOption {
	return func(p *providerOptions) error {
		if f == nil {
			return recipe.BadArg(ErrInvalidArgument, "nil filter")
		}
		p.filters = append(p.filters, f)
		return nil
	}
}

// WithDownPolicy sets when an instance reported by NoteError is skipped
// (Curator's downInstancePolicy; the default is 2 errors, skipped for 30 s
// from the first). Negative values are an error; zero ones take the
// default.
func WithDownPolicy(dp DownPolicy) ProviderOption {
	return func(p *providerOptions) error {
		if dp.Timeout < 0 || dp.Threshold < 0 {
			return recipe.BadArg(ErrInvalidArgument, "negative DownPolicy %+v", dp)
		}
		p.down = dp
		return nil
	}
}

// NewProvider returns a provider of the named service's instances. It
// checks its arguments and does no I/O. [Discovery.Close] closes it, if
// its owner has not.
func (d *Discovery) NewProvider(name string, opts ...ProviderOption) (*Provider, error) {
	c, err := d.NewCache(name)
	if err != nil {
		return nil, err
	}
	o := providerOptions{strategy: RoundRobin()}
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	return &Provider{cache: c, strategy: o.strategy, filters: o.filters, down: newDownList(o.down)}, nil
}

var errZeroProvider = recipe.BadArg(ErrInvalidArgument, "nil or zero Provider: make one with Discovery.NewProvider")

// Start starts the provider's cache and returns once it is loaded.
func (p *Provider) Start(ctx context.Context) error {
	if p == nil || p.cache == nil {
		return errZeroProvider
	}
	return p.cache.Start(ctx)
}

// Close stops the provider's cache. It is idempotent, and
// [Discovery.Close] calls it too.
func (p *Provider) Close() error {
	if p == nil || p.cache == nil {
		return errZeroProvider
	}
	return p.cache.Close()
}

// Instance returns the strategy's pick among the candidates (Curator's
// getInstance), without I/O. With no candidate it returns an error
// matching ErrNoInstance, and when the strategy declines to pick (where
// Curator's getInstance returns null) one matching ErrDeclined and
// ErrNoInstance. A strategy that returns an instance it was not given is
// a bug, reported as an error matching ErrInvalidArgument.
func (p *Provider) Instance() (Instance, error) {
	cands, err := p.Instances()
	if err != nil {
		return Instance{}, err
	}
	if len(cands) == 0 {
		return Instance{}, fmt.Errorf("%w: no instance of %s is available", ErrNoInstance, p.cache.name)
	}
	in, ok := p.strategy.Pick(cands)
	if !ok {
		return Instance{}, fmt.Errorf("%w: %s, among %d candidates", ErrDeclined, p.cache.name, len(cands))
	}
	if !slices.ContainsFunc(cands, func(c Instance) bool { return c.ID == in.ID && c.Name == in.Name }) {
		return Instance{}, recipe.BadArg(ErrInvalidArgument, "the strategy picked %s/%s, which is not a candidate", in.Name, in.ID)
	}
	return in, nil
}

// Instances returns the candidates, sorted by ID (Curator's
// getAllInstances, which also applies the filters).
func (p *Provider) Instances() ([]Instance, error) {
	if p == nil || p.cache == nil {
		return nil, errZeroProvider
	}
	all, err := p.cache.Instances()
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, in := range all {
		if p.candidate(in) {
			out = append(out, in)
		}
	}
	return out, nil
}

// candidate reports whether in may be picked.
func (p *Provider) candidate(in Instance) bool {
	for _, f := range p.filters {
		if !f(in) {
			return false
		}
	}
	return p.down.up(in) && !in.Disabled
}

// NoteError reports that a call to in failed (Curator's noteError): once
// an instance has Threshold errors it is not a candidate until Timeout
// after its first, as the DownPolicy says.
func (p *Provider) NoteError(in Instance) {
	if p == nil || p.down == nil {
		return
	}
	p.down.note(in)
}

// AddListener adds a listener to the provider's cache, as
// [Cache.AddListener] does.
func (p *Provider) AddListener(fn func(Event)) (remove func()) {
	if p == nil || p.cache == nil {
		return func() {}
	}
	return p.cache.AddListener(fn)
}
