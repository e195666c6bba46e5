package discovery

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/recipes/cache"
)

// Event is one change of a Cache's instances, or of its client's
// connection. Type is one of recipes/cache's event types:
// [cache.NodeAdded], [cache.NodeUpdated] and [cache.NodeRemoved] carry the
// Instance (for a removed one, its last cached state); [cache.Initialized]
// and [cache.Resynced] mark a complete view (after Start, and after a
// session change); the Connection* types are the client's states; and
// [cache.Error] reports in Err a node that could not be read or whose data
// is not an instance (matching ErrCorrupt), which the view leaves out.
type Event struct {
	Type     cache.EventType
	Instance Instance
	Err      error
}

// Cache keeps the instances of one service up to date: Curator's
// ServiceCache. It is a [cache.Children] on <base>/<name> whose entries
// are decoded (each version once). It is safe for concurrent use and must
// not be copied. Make one with [Discovery.NewCache].
type Cache struct {
	d    *Discovery
	name string
	ch   *cache.Children

	mu   sync.Mutex
	memo map[string]decoded // node path -> its decoded data
}

// decoded is a node's instance, decoded from the version whose Mzxid it
// keeps.
type decoded struct {
	mzxid int64
	inst  Instance
	err   error
}

// NewCache returns a cache of the named service's instances. It checks
// its arguments and does no I/O. [Discovery.Close] closes it, if its
// owner has not.
func (d *Discovery) NewCache(name string) (*Cache, error) {
	if err := d.usable(nil); err != nil {
		return nil, err
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	ch, err := cache.NewChildren(d.client, d.servicePath(name))
	if err != nil {
		return nil, err
	}
	c := &Cache{d: d, name: name, ch: ch, memo: make(map[string]decoded)}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	d.caches[c] = struct{}{}
	return c, nil
}

var errZeroCache = recipe.BadArg(ErrInvalidArgument, "nil or zero Cache: make one with Discovery.NewCache")

// mapCacheErr makes an error of the underlying cache match this package's
// sentinel for the same condition, with this package's message.
func mapCacheErr(err error) error {
	for _, m := range []struct{ from, to error }{
		{cache.ErrNotStarted, ErrNotStarted},
		{cache.ErrAlreadyStarted, ErrAlreadyStarted},
		{cache.ErrClosed, ErrClosed},
	} {
		if errors.Is(err, m.from) {
			return errtext.Also(m.to, err)
		}
	}
	return err
}

func (c *Cache) children() *cache.Children {
	if c == nil {
		return nil
	}
	return c.ch
}

// Start loads the instances, sets the watches and returns once the view is
// complete, as [cache.Children.Start] does. The service's node need not
// exist.
func (c *Cache) Start(ctx context.Context) error {
	if c == nil || c.ch == nil {
		return errZeroCache
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	return mapCacheErr(c.ch.Start(ctx))
}

// Close stops the cache, as [cache.Children.Close] does. It is
// idempotent, and [Discovery.Close] calls it too.
func (c *Cache) Close() error {
	if c == nil || c.ch == nil {
		return errZeroCache
	}
	if c.d != nil {
		c.d.mu.Lock()
		delete(c.d.caches, c)
		c.d.mu.Unlock()
	}
	return mapCacheErr(c.ch.Close())
}

// Name returns the service's name.
func (c *Cache) Name() string {
	if c == nil {
		return ""
	}
	return c.name
}

// Instances returns the cached instances, sorted by ID, without I/O
// (Curator's getInstances). Nodes whose data is not an instance are left
// out (a listener gets them as cache.Error events).
func (c *Cache) Instances() ([]Instance, error) {
	if c == nil || c.ch == nil {
		return nil, errZeroCache
	}
	entries, err := c.ch.Entries()
	if err != nil {
		return nil, mapCacheErr(err)
	}
	out := make([]Instance, 0, len(entries))
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := make(map[string]struct{}, len(entries))
	for _, e := range entries {
		seen[e.Path] = struct{}{}
		in, err := c.decodeLocked(e)
		if err == nil {
			out = append(out, in)
		}
	}
	for p := range c.memo {
		if _, ok := seen[p]; !ok {
			delete(c.memo, p)
		}
	}
	slices.SortFunc(out, func(a, b Instance) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// decodeLocked decodes e, once per version; c.mu is held.
func (c *Cache) decodeLocked(e cache.Entry) (Instance, error) {
	if m, ok := c.memo[e.Path]; ok && m.mzxid == e.Stat.Mzxid {
		return m.inst, m.err
	}
	in, err := decode(e.Path, e.Data)
	c.memo[e.Path] = decoded{mzxid: e.Stat.Mzxid, inst: in, err: err}
	return in, err
}

// AddListener adds fn, called with each Event on a goroutine of its own,
// in order, from an unbounded queue, as [cache.Children.AddListener]
// describes; it returns its remover. Added before Start, fn also gets the
// initial NodeAdded events and Initialized.
func (c *Cache) AddListener(fn func(Event)) (remove func()) {
	if c == nil || c.ch == nil || fn == nil {
		return func() {}
	}
	return c.ch.AddListener(func(ev cache.Event) {
		out := Event{Type: ev.Type, Err: ev.Err}
		switch ev.Type {
		case cache.NodeAdded, cache.NodeUpdated:
			in, err := decode(ev.Entry.Path, ev.Entry.Data)
			if err != nil {
				out = Event{Type: cache.Error, Err: err}
				break
			}
			out.Instance = in
		case cache.NodeRemoved:
			in, err := decode(ev.Entry.Path, ev.Entry.Data)
			if err != nil {
				_, id := framework.SplitPath(ev.Entry.Path)
				in = Instance{Name: c.name, ID: id}
			}
			out.Instance = in
		}
		fn(out)
	})
}
