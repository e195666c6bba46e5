package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/recipes/discovery"
	"github.com/go-curator/curator/recipes/persistentnode"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// Issue 32, section 3: discovery as Curator does it.

// TestDiscovery_RestartWithSameIDReplacesStaleNode: an instance's process
// crashes (its session lives on in the server until its timeout) and
// restarts with the same ID: Register replaces the stale node at once, as
// Curator does, instead of waiting out the old session. The old session's
// registration, if it is in fact alive, then waits for the node to go
// rather than deleting it back. Before the fix Register waited for the old
// node to go and failed with the ctx's bare deadline.
func TestDiscovery_RestartWithSameIDReplacesStaleNode(t *testing.T) {
	cacheNoLeaks(t)
	logged := &logCounter{}
	old := startClient(t, builder(t, zktest.Shared(t).ConnectString()).Logger(slog.New(logged)))
	c := newClient(t)
	base := cachePath(t, c)
	in := discovery.Instance{Name: "api", ID: "fixed-id", Address: "10.0.0.1", Port: 80}
	register(t, newDiscovery(t, old, base), in) // the "crashed" process: never unregisters

	d := newDiscovery(t, c, base)
	ctx, cancel := context.WithTimeout(t.Context(), pnWait) // a bound for a broken build, not a timing
	defer cancel()
	in.Port = 81
	r, err := d.Register(ctx, in)
	if err != nil {
		t.Fatalf("Register over a stale node: %v", err)
	}
	if diff := registeredOnce(t.Context(), c, old, base, "api", []*discovery.Registration{r}); diff != "" {
		t.Fatal(diff)
	}
	// The old registration lost its node; it waits, and does not take it
	// back.
	waitFor(t, func() string {
		if logged.count(waitMsg) == 0 {
			return "the old registration has not found the new node"
		}
		return ""
	})
	if diff := registeredOnce(t.Context(), c, old, base, "api", []*discovery.Registration{r}); diff != "" {
		t.Fatalf("after the old registration saw the new node: %s", diff)
	}
}

// TestDiscovery_RegisterRefusedFailsAtOnce: Register under a path where the
// server refuses the node for good (the base path is an ephemeral node; the
// service's node forbids create) fails at once, with an error matching
// ErrCannotRegister, persistentnode.ErrCannotCreate and the server's
// sentinel, carrying one package prefix, and leaves nothing; Curator fails
// at once too. Before the fix Register retried until its ctx ended (forever
// with context.Background()).
func TestDiscovery_RegisterRefusedFailsAtOnce(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	dir := cachePath(t, c)
	eph := dir + "/ephemeral"
	if _, err := c.Create().CreatingParentsIfNeeded().WithMode(framework.Ephemeral).ForPath(t.Context(), eph, nil); err != nil {
		t.Fatal(err)
	}
	ro := dir + "/readonly"
	if _, err := c.Create().CreatingParentsIfNeeded().WithACL(zk.WorldACL(zk.PermRead)...).ForPath(t.Context(), ro+"/api", nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, base string
		typ        discovery.ServiceType
		want       error
	}{
		{"EphemeralBase", eph, discovery.Dynamic, zk.ErrNoChildrenForEphemerals},
		{"EphemeralBaseSequential", eph, discovery.DynamicSequential, zk.ErrNoChildrenForEphemerals},
		{"EphemeralBasePermanent", eph, discovery.Permanent, zk.ErrNoChildrenForEphemerals},
		{"ReadOnlyService", ro, discovery.Dynamic, zk.ErrNoAuth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDiscovery(t, c, tc.base)
			ctx, cancel := context.WithTimeout(t.Context(), pnWait)
			defer cancel()
			for range 2 { // and again: the failed one is forgotten
				_, err := d.Register(ctx, discovery.Instance{Name: "api", ID: "x", ServiceType: tc.typ})
				if !errors.Is(err, discovery.ErrCannotRegister) || !errors.Is(err, persistentnode.ErrCannotCreate) ||
					!errors.Is(err, tc.want) {
					t.Fatalf("Register = %v; want ErrCannotRegister, persistentnode.ErrCannotCreate and %v", err, tc.want)
				}
				if strings.Count(err.Error(), "discovery:") != 1 || strings.Contains(err.Error(), "persistentnode:") ||
					strings.Contains(err.Error(), "framework:") {
					t.Errorf("message %q: want one package prefix", err)
				}
			}
			if kids := children(t, c, tc.base+"/api"); len(kids) != 0 {
				t.Errorf("nodes left: %q", kids)
			}
		})
	}
}

// TestDiscovery_UnknownServiceTypeIsSkipped: a node whose serviceType is
// none of Curator's four is left out by Instances, a Cache and a Provider,
// and reported as the undecodable nodes are (ErrCorrupt from Instances, a
// cache.Error event). Before the fix it was decoded and handed out.
func TestDiscovery_UnknownServiceTypeIsSkipped(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	base := cachePath(t, c)
	d := newDiscovery(t, c, base)
	register(t, d, discovery.Instance{Name: "api", ID: "good", Address: "10.0.0.1", Port: 80})
	bad := `{"name":"api","id":"bad","address":"10.0.0.2","port":80,"sslPort":null,"payload":null,` +
		`"registrationTimeUTC":1,"serviceType":"EPHEMERAL","uriSpec":null}`
	if _, err := c.Create().ForPath(t.Context(), base+"/api/bad", []byte(bad)); err != nil {
		t.Fatal(err)
	}
	list, err := d.Instances(t.Context(), "api")
	if !errors.Is(err, discovery.ErrCorrupt) || !strings.Contains(err.Error(), "EPHEMERAL") || !slices.Equal(ids(list), []string{"good"}) {
		t.Errorf("Instances = %q, %v; want [good] and ErrCorrupt naming the type", ids(list), err)
	}
	p, err := d.NewProvider("api")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	errs := make(chan error, 10)
	p.AddListener(func(ev discovery.Event) {
		if ev.Type == cache.Error {
			errs <- ev.Err
		}
	})
	if err := p.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		if !errors.Is(err, discovery.ErrCorrupt) {
			t.Errorf("cache.Error event: %v, want ErrCorrupt", err)
		}
	case <-time.After(pnWait):
		t.Fatal("no cache.Error event for the node of an unknown type")
	}
	for range 4 {
		in, err := p.Instance()
		if err != nil || in.ID != "good" {
			t.Fatalf("Provider.Instance = %s, %v; want good", in.ID, err)
		}
	}
}

// TestDiscovery_DynamicSequential: Go registers a DYNAMIC_SEQUENTIAL
// instance in Curator's layout, <base>/<name>/<id><10 digits>, an
// ephemeral node of the client's session, found by queries and caches,
// updated, made again with a new sequence after a delete, and deleted by
// Unregister. Before the fix Register refused the type.
func TestDiscovery_DynamicSequential(t *testing.T) {
	cacheNoLeaks(t)
	c, obs := newClient(t), newClient(t)
	base := cachePath(t, c)
	d := newDiscovery(t, c, base)
	ch := startDiscoveryCache(t, newDiscovery(t, obs, base), "jobs")
	r := register(t, d, discovery.Instance{Name: "jobs", ID: "w", Address: "10.0.0.1", Port: 1, ServiceType: discovery.DynamicSequential})
	first := r.Path()
	if !seqName(first, base+"/jobs/w") {
		t.Fatalf("Path() = %q, want %s/jobs/w<10 digits>", first, base)
	}
	check := func(data string) string {
		kids := children(t, obs, base+"/jobs")
		if len(kids) != 1 || base+"/jobs/"+kids[0] != r.Path() {
			return fmt.Sprintf("nodes %q, registration at %s", kids, r.Path())
		}
		got, st, err := obs.GetData().ForPath(t.Context(), r.Path())
		if err != nil {
			return err.Error()
		}
		if st.EphemeralOwner != c.SessionID() {
			return fmt.Sprintf("owner %#x, want %#x", st.EphemeralOwner, c.SessionID())
		}
		if !strings.Contains(string(got), data) || !strings.Contains(string(got), `"serviceType":"DYNAMIC_SEQUENTIAL"`) {
			return fmt.Sprintf("data %s", got)
		}
		return cacheEqualsServer(t.Context(), d, "jobs", ch)
	}
	until(t, pnWait, "one sequential node", func() string { return check(`"port":1,`) })
	in := r.Instance()
	in.Port = 2
	if err := r.Update(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	until(t, pnWait, "the update", func() string { return check(`"port":2,`) })
	if err := obs.Delete().ForPath(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	until(t, pnWait, "made again", func() string {
		if r.Path() == first || !seqName(r.Path(), base+"/jobs/w") {
			return "Path() = " + r.Path()
		}
		return check(`"port":2,`)
	})
	if err := r.Unregister(t.Context()); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, obs, base+"/jobs"); len(kids) != 0 {
		t.Errorf("nodes after Unregister: %q", kids)
	}
}

// seqName reports whether p is prefix followed by 10 digits.
func seqName(p, prefix string) bool {
	seq, ok := strings.CutPrefix(p, prefix)
	return ok && len(seq) == 10 && strings.Trim(seq, "0123456789") == ""
}

// encodedLikeJava returns Go's JSON of in without "enabled", the field
// Curator's compatible mode does not write.
func encodedLikeJava(t *testing.T, data []byte) string {
	t.Helper()
	s := string(data)
	for _, e := range []string{`,"enabled":true}`, `,"enabled":false}`} {
		if strings.HasSuffix(s, e) {
			return strings.TrimSuffix(s, e) + "}"
		}
	}
	return s
}
