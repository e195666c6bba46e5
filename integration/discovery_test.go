package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/discovery"
	"github.com/go-zookeeper/zk"
)

// newDiscovery returns a Discovery on c under base, closed at cleanup.
func newDiscovery(t testing.TB, c *framework.Client, base string) *discovery.Discovery {
	t.Helper()
	d, err := discovery.New(c, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	return d
}

// register registers in, failing t on error.
func register(t testing.TB, d *discovery.Discovery, in discovery.Instance) *discovery.Registration {
	t.Helper()
	r, err := d.Register(t.Context(), in)
	if err != nil {
		t.Fatalf("Register %s/%s: %v", in.Name, in.ID, err)
	}
	return r
}

// startDiscoveryCache starts a cache of a service, closed at cleanup.
func startDiscoveryCache(t testing.TB, d *discovery.Discovery, name string) *discovery.Cache {
	t.Helper()
	c, err := d.NewCache(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// ids returns the instances' IDs in order.
func ids(list []discovery.Instance) []string {
	out := make([]string, len(list))
	for i, in := range list {
		out[i] = in.ID
	}
	return out
}

// sameInstances describes how got differs from want, or returns "": the
// same instances, field for field (payloads compared as JSON text).
func sameInstances(want, got []discovery.Instance) string {
	enc := func(l []discovery.Instance) string {
		b, _ := json.Marshal(l)
		return string(b)
	}
	if w, g := enc(want), enc(got); w != g {
		return fmt.Sprintf("want %s\n got %s", w, g)
	}
	return ""
}

// registeredOnce reports "" when the service's nodes on the server are
// exactly the registrations' (one node each, with the registration's data)
// and each Dynamic one is owned by owner's current session; otherwise
// what differs.
func registeredOnce(ctx context.Context, owner, reader *framework.Client, base, name string, regs []*discovery.Registration) string {
	svc := base + "/" + name
	kids, err := reader.GetChildren().ForPath(ctx, svc)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err.Error()
	}
	slices.Sort(kids)
	var want []string
	for _, r := range regs {
		want = append(want, r.Instance().ID)
	}
	slices.Sort(want)
	if !slices.Equal(kids, want) {
		return fmt.Sprintf("nodes under %s: %q, want %q", svc, kids, want)
	}
	for _, r := range regs {
		data, st, err := reader.GetData().ForPath(ctx, r.Path())
		if err != nil {
			return fmt.Sprintf("%s: %v", r.Path(), err)
		}
		wantData, _ := json.Marshal(r.Instance())
		if string(data) != string(wantData) {
			return fmt.Sprintf("%s holds %s, want %s", r.Path(), data, wantData)
		}
		if r.Instance().ServiceType == discovery.Dynamic && st.EphemeralOwner != owner.SessionID() {
			return fmt.Sprintf("%s is owned by session %#x, not the client's current %#x", r.Path(), st.EphemeralOwner, owner.SessionID())
		}
	}
	return ""
}

// cacheEqualsServer reports "" when each cache holds exactly the
// service's instances on the server.
func cacheEqualsServer(ctx context.Context, d *discovery.Discovery, name string, caches ...*discovery.Cache) string {
	server, err := d.Instances(ctx, name)
	if err != nil {
		return err.Error()
	}
	for i, c := range caches {
		got, err := c.Instances()
		if err != nil {
			return err.Error()
		}
		if diff := sameInstances(server, got); diff != "" {
			return fmt.Sprintf("cache %d differs from the server: %s", i, diff)
		}
	}
	return ""
}

// until polls cond (which returns "" when it holds) every 20 ms for up to
// d, and fails t with its last answer.
func until(t testing.TB, d time.Duration, what string, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		diff := cond()
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %s", what, d, diff)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// discoveryEvents records a Cache's events as "TYPE id" lines.
type discoveryEvents struct {
	mu  sync.Mutex
	got []string
}

func (r *discoveryEvents) listen(ev discovery.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	line := ev.Type.String()
	if ev.Instance.ID != "" {
		line += " " + ev.Instance.ID
	}
	r.got = append(r.got, line)
}

func (r *discoveryEvents) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// waitFor waits until the events include want, in order (other events
// may come between).
func (r *discoveryEvents) waitFor(t testing.TB, want ...string) {
	t.Helper()
	until(t, 20*time.Second, "cache events", func() string {
		got := r.lines()
		i := 0
		for _, g := range got {
			if i < len(want) && g == want[i] {
				i++
			}
		}
		if i == len(want) {
			return ""
		}
		return fmt.Sprintf("got %q, want %q in order", got, want)
	})
}

func TestDiscovery_RegisterQueryUpdateUnregister(t *testing.T) {
	c := newClient(t)
	base := cachePath(t, c)
	d := newDiscovery(t, c, base)
	spec, err := discovery.ParseURISpec("{scheme}://{address}:{port}/v1")
	if err != nil {
		t.Fatal(err)
	}
	reader := newClient(t)
	cached := startDiscoveryCache(t, newDiscovery(t, reader, base), "billing")
	var events discoveryEvents
	cached.AddListener(events.listen)

	a := register(t, d, discovery.Instance{Name: "billing", ID: "a", Address: "10.0.0.1", Port: 8080, URISpec: spec,
		Payload: json.RawMessage(`{"zone":"eu-1"}`)})
	b := register(t, d, discovery.Instance{Name: "billing", Address: "10.0.0.2", SSLPort: 8443})
	s := register(t, d, discovery.Instance{Name: "search", ID: "s1", Address: "10.0.0.3", Port: 9200, ServiceType: discovery.Static})

	if id := b.Instance().ID; len(id) != 36 || b.Instance().RegistrationTimeUTC == 0 {
		t.Errorf("Register filled ID %q and time %d; want a UUID and the current time", id, b.Instance().RegistrationTimeUTC)
	}
	names, err := d.Names(t.Context())
	if err != nil || !slices.Equal(names, []string{"billing", "search"}) {
		t.Errorf("Names = %q, %v", names, err)
	}
	got, err := d.Instances(t.Context(), "billing")
	want := []discovery.Instance{a.Instance(), b.Instance()}
	slices.SortFunc(want, func(x, y discovery.Instance) int { return strings.Compare(x.ID, y.ID) })
	if err != nil || sameInstances(want, got) != "" {
		t.Errorf("Instances(billing): %v: %s", err, sameInstances(want, got))
	}
	one, err := d.Instance(t.Context(), "billing", "a")
	if err != nil || one.URI(nil) != "http://10.0.0.1:8080/v1" {
		t.Errorf("Instance(billing, a) = %+v, %v; URI %q", one, err, one.URI(nil))
	}
	var payload struct{ Zone string }
	if err := one.DecodePayload(&payload); err != nil || payload.Zone != "eu-1" {
		t.Errorf("payload %+v, %v", payload, err)
	}
	if _, err := d.Instance(t.Context(), "billing", "nobody"); !errors.Is(err, discovery.ErrNoInstance) {
		t.Errorf("Instance of a missing id: %v, want ErrNoInstance", err)
	}
	if diff := registeredOnce(t.Context(), c, reader, base, "billing", []*discovery.Registration{a, b}); diff != "" {
		t.Error(diff)
	}
	if _, st, err := reader.GetData().ForPath(t.Context(), s.Path()); err != nil || st.EphemeralOwner != 0 {
		t.Errorf("a Static instance's node: %v, owner %#x; want a persistent node", err, st.EphemeralOwner)
	}
	if _, err := d.Register(t.Context(), discovery.Instance{Name: "billing", ID: "a"}); !errors.Is(err, discovery.ErrAlreadyRegistered) {
		t.Errorf("a second Register of billing/a: %v, want ErrAlreadyRegistered", err)
	}

	// Update: the node and the cache follow.
	upd := a.Instance()
	upd.Payload = json.RawMessage(`{"zone":"eu-2"}`)
	upd.RegistrationTimeUTC = 0 // keeps the registration's
	if err := a.Update(t.Context(), upd); err != nil {
		t.Fatal(err)
	}
	if a.Instance().RegistrationTimeUTC == 0 {
		t.Error("Update cleared the registration time")
	}
	if err := a.Update(t.Context(), discovery.Instance{Name: "billing", ID: "other"}); !errors.Is(err, discovery.ErrInvalidArgument) {
		t.Errorf("Update to another id: %v, want ErrInvalidArgument", err)
	}
	until(t, 20*time.Second, "cache after update", func() string {
		return cacheEqualsServer(t.Context(), d, "billing", cached)
	})
	if in, _ := d.Instance(t.Context(), "billing", "a"); string(in.Payload) != `{"zone":"eu-2"}` {
		t.Errorf("after Update the server holds payload %s", in.Payload)
	}

	// Unregister: the node goes; a second Unregister says so.
	if err := b.Unregister(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := b.Unregister(t.Context()); !errors.Is(err, discovery.ErrNotRegistered) {
		t.Errorf("second Unregister: %v, want ErrNotRegistered", err)
	}
	if err := b.Update(t.Context(), b.Instance()); !errors.Is(err, discovery.ErrNotRegistered) {
		t.Errorf("Update after Unregister: %v, want ErrNotRegistered", err)
	}
	events.waitFor(t, "NODE_ADDED a", "NODE_ADDED "+b.Instance().ID, "NODE_UPDATED a", "NODE_REMOVED "+b.Instance().ID)
	if diff := registeredOnce(t.Context(), c, reader, base, "billing", []*discovery.Registration{a}); diff != "" {
		t.Error(diff)
	}

	// Close unregisters the rest, the Static instance too (as Curator's close).
	if err := d.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, reader, base+"/billing"); len(kids) != 0 {
		t.Errorf("after Close: %q left under billing", kids)
	}
	if kids := children(t, reader, base+"/search"); len(kids) != 0 {
		t.Errorf("after Close: %q left under search", kids)
	}
	if _, err := d.Register(t.Context(), discovery.Instance{Name: "billing"}); !errors.Is(err, discovery.ErrClosed) {
		t.Errorf("Register after Close: %v, want ErrClosed", err)
	}
}

func TestDiscovery_ProviderStrategiesFiltersAndDownInstances(t *testing.T) {
	c := newClient(t)
	base := cachePath(t, c)
	d := newDiscovery(t, c, base)
	var regs []*discovery.Registration
	for _, id := range []string{"w1", "w2", "w3"} {
		regs = append(regs, register(t, d, discovery.Instance{Name: "work", ID: id, Address: "127.0.0.1", Port: 7000}))
	}
	newProvider := func(opts ...discovery.ProviderOption) *discovery.Provider {
		t.Helper()
		p, err := d.NewProvider("work", opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		if err := p.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pick := func(p *discovery.Provider, n int) string {
		t.Helper()
		var got []string
		for range n {
			in, err := p.Instance()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, in.ID)
		}
		return strings.Join(got, " ")
	}

	rr := newProvider()
	if got := pick(rr, 6); got != "w1 w2 w3 w1 w2 w3" {
		t.Errorf("round robin picked %q", got)
	}
	sticky := newProvider(discovery.WithStrategy(discovery.Sticky(nil)))
	if got := pick(sticky, 3); got != "w1 w1 w1" {
		t.Errorf("sticky picked %q", got)
	}
	filtered := newProvider(discovery.WithFilter(func(in discovery.Instance) bool { return in.ID != "w2" }))
	if got := pick(filtered, 4); got != "w1 w3 w1 w3" {
		t.Errorf("filtered round robin picked %q", got)
	}

	// Curator's down-instance policy: 2 errors leave w1 out; one does not.
	rr.NoteError(regs[0].Instance())
	if all, _ := rr.Instances(); !slices.Equal(ids(all), []string{"w1", "w2", "w3"}) {
		t.Errorf("after 1 error: candidates %q", ids(all))
	}
	rr.NoteError(regs[0].Instance())
	sticky.NoteError(regs[0].Instance())
	sticky.NoteError(regs[0].Instance())
	if all, _ := rr.Instances(); !slices.Equal(ids(all), []string{"w2", "w3"}) {
		t.Errorf("after 2 errors: candidates %q, want w1 left out", ids(all))
	}
	if got := pick(sticky, 2); got != "w2 w2" && got != "w3 w3" {
		t.Errorf("sticky after its instance went down picked %q", got)
	}
	short := newProvider(discovery.WithDownPolicy(discovery.DownPolicy{Timeout: time.Millisecond, Threshold: 1}))
	short.NoteError(regs[1].Instance())
	until(t, 10*time.Second, "a down instance comes back after the policy's timeout", func() string {
		all, _ := short.Instances()
		if slices.Contains(ids(all), "w2") {
			return ""
		}
		return fmt.Sprintf("candidates %q", ids(all))
	})

	// A disabled instance is skipped; an unregistered one leaves.
	dis := regs[2].Instance()
	dis.Disabled = true
	if err := regs[2].Update(t.Context(), dis); err != nil {
		t.Fatal(err)
	}
	if err := regs[1].Unregister(t.Context()); err != nil {
		t.Fatal(err)
	}
	until(t, 20*time.Second, "provider follows", func() string {
		all, _ := filtered.Instances()
		if slices.Equal(ids(all), []string{"w1"}) {
			return ""
		}
		return fmt.Sprintf("candidates %q", ids(all))
	})
	if err := regs[0].Unregister(t.Context()); err != nil {
		t.Fatal(err)
	}
	until(t, 20*time.Second, "no candidate left", func() string {
		_, err := filtered.Instance()
		if errors.Is(err, discovery.ErrNoInstance) {
			return ""
		}
		return fmt.Sprintf("Instance: %v", err)
	})
}

// TestDiscovery_BadInputLeavesNothing: each bad call returns an error
// matching ErrInvalidArgument (and ErrTooLarge for an oversized payload),
// or ctx's error for a done ctx, and leaves no node under the base path.
func TestDiscovery_BadInputLeavesNothing(t *testing.T) {
	c := newClient(t)
	base := cachePath(t, c)
	d := newDiscovery(t, c, base)
	done, cancel := context.WithCancel(t.Context())
	cancel()
	ok := discovery.Instance{Name: "svc", ID: "i", Address: "h", Port: 1}
	for name, tc := range map[string]struct {
		ctx  context.Context
		mut  func(*discovery.Instance)
		want error
	}{
		"empty name":        {t.Context(), func(in *discovery.Instance) { in.Name = "" }, discovery.ErrInvalidArgument},
		"name with /":       {t.Context(), func(in *discovery.Instance) { in.Name = "a/b" }, discovery.ErrInvalidArgument},
		"name with NUL":     {t.Context(), func(in *discovery.Instance) { in.Name = "a\x00b" }, discovery.ErrInvalidArgument},
		"name ..":           {t.Context(), func(in *discovery.Instance) { in.Name = ".." }, discovery.ErrInvalidArgument},
		"id with /":         {t.Context(), func(in *discovery.Instance) { in.ID = "i/j" }, discovery.ErrInvalidArgument},
		"id .":              {t.Context(), func(in *discovery.Instance) { in.ID = "." }, discovery.ErrInvalidArgument},
		"port -1":           {t.Context(), func(in *discovery.Instance) { in.Port = -1 }, discovery.ErrInvalidArgument},
		"port 65536":        {t.Context(), func(in *discovery.Instance) { in.Port = 65536 }, discovery.ErrInvalidArgument},
		"sslPort 1<<20":     {t.Context(), func(in *discovery.Instance) { in.SSLPort = 1 << 20 }, discovery.ErrInvalidArgument},
		"payload not JSON":  {t.Context(), func(in *discovery.Instance) { in.Payload = json.RawMessage("{") }, discovery.ErrInvalidArgument},
		"oversized payload": {t.Context(), func(in *discovery.Instance) { in.Payload = json.RawMessage(`"` + strings.Repeat("x", 1<<20) + `"`) }, discovery.ErrTooLarge},
		"nil ctx":           {nil, func(*discovery.Instance) {}, discovery.ErrInvalidArgument},
		"done ctx":          {done, func(*discovery.Instance) {}, context.Canceled},
	} {
		t.Run(name, func(t *testing.T) {
			in := ok
			tc.mut(&in)
			r, err := d.Register(tc.ctx, in)
			if !errors.Is(err, tc.want) || r != nil {
				t.Fatalf("Register: %v, %v; want %v", r, err, tc.want)
			}
			if errors.Is(tc.want, discovery.ErrInvalidArgument) && !errors.Is(err, framework.ErrInvalidArgument) {
				t.Errorf("err %v does not match framework.ErrInvalidArgument", err)
			}
			if stat, err := c.CheckExists().ForPath(t.Context(), base); err != nil || stat != nil {
				t.Errorf("after a bad Register: %s exists (%v) with %q", base, err, children(t, c, base+"/svc"))
			}
		})
	}
	// A cancelled Register of a good instance leaves nothing either, and
	// does not count as registered.
	if _, err := d.Register(done, ok); !errors.Is(err, context.Canceled) {
		t.Errorf("Register with a done ctx: %v", err)
	}
	r := register(t, d, ok)
	if err := r.Update(t.Context(), discovery.Instance{Port: 70000}); !errors.Is(err, discovery.ErrInvalidArgument) {
		t.Errorf("Update with port 70000: %v", err)
	}
	if in, err := d.Instance(t.Context(), "svc", "i"); err != nil || in.Port != 1 {
		t.Errorf("after a bad Update the node holds %+v, %v", in, err)
	}
	// Corrupt data under a service: left out, and reported.
	if _, err := c.Create().ForPath(t.Context(), base+"/svc/junk", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	list, err := d.Instances(t.Context(), "svc")
	if !errors.Is(err, discovery.ErrCorrupt) || !slices.Equal(ids(list), []string{"i"}) {
		t.Errorf("Instances with a corrupt node: %q, %v", ids(list), err)
	}
	cached := startDiscoveryCache(t, d, "svc")
	if list, err := cached.Instances(); err != nil || !slices.Equal(ids(list), []string{"i"}) {
		t.Errorf("cache with a corrupt node: %q, %v", ids(list), err)
	}
}
