package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/recipes/discovery"
	"github.com/go-curator/curator/zktest"
)

// TestDiscovery_CloseClosesCachesAndProviders: Discovery.Close closes the
// caches and providers made from it (started, never started, or already
// closed by their owner), then unregisters; each then reports ErrClosed,
// and another Discovery on the same client is untouched.
func TestDiscovery_CloseClosesCachesAndProviders(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	ctx := t.Context()
	d, err := discovery.New(c, base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	reg := register(t, d, discovery.Instance{Name: "api", ID: "a", Port: 80})

	started, err := d.NewCache("api")
	if err != nil {
		t.Fatal(err)
	}
	if err := started.Start(ctx); err != nil {
		t.Fatal(err)
	}
	prov, err := d.NewProvider("api")
	if err != nil {
		t.Fatal(err)
	}
	if err := prov.Start(ctx); err != nil {
		t.Fatal(err)
	}
	idle, err := d.NewProvider("api")
	if err != nil {
		t.Fatal(err)
	}
	ownerClosed, err := d.NewCache("api")
	if err != nil {
		t.Fatal(err)
	}
	if err := ownerClosed.Close(); err != nil {
		t.Fatal(err)
	}
	if in, err := prov.Instance(); err != nil || in.ID != "a" {
		t.Fatalf("provider before Close: %v, %v; want a", in.ID, err)
	}
	other := newDiscovery(t, c, base)
	otherCache := startDiscoveryCache(t, other, "api")

	if err := d.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := started.Instances(); !errors.Is(err, discovery.ErrClosed) {
		t.Errorf("started cache after Discovery.Close: Instances = %v; want ErrClosed", err)
	}
	if _, err := prov.Instance(); !errors.Is(err, discovery.ErrClosed) {
		t.Errorf("started provider after Discovery.Close: Instance = %v; want ErrClosed", err)
	}
	if err := idle.Start(ctx); !errors.Is(err, discovery.ErrClosed) {
		t.Errorf("never started provider after Discovery.Close: Start = %v; want ErrClosed", err)
	}
	if _, err := d.NewCache("api"); !errors.Is(err, discovery.ErrClosed) {
		t.Errorf("NewCache after Close: %v; want ErrClosed", err)
	}
	if _, err := d.NewProvider("api"); !errors.Is(err, discovery.ErrClosed) {
		t.Errorf("NewProvider after Close: %v; want ErrClosed", err)
	}
	for what, closeAgain := range map[string]func() error{
		"cache": started.Close, "provider": prov.Close, "idle provider": idle.Close, "owner-closed cache": ownerClosed.Close,
	} {
		if err := closeAgain(); err != nil {
			t.Errorf("%s: Close after Discovery.Close = %v; want nil (idempotent)", what, err)
		}
	}
	if st, err := c.CheckExists().ForPath(ctx, reg.Path()); st != nil || err != nil {
		t.Errorf("instance node after Close: %v, %v; want gone", st, err)
	}
	// The other Discovery's cache still follows the service.
	register(t, other, discovery.Instance{Name: "api", ID: "b", Port: 81})
	until(t, 10*time.Second, "the other Discovery's cache sees b", func() string {
		got, err := otherCache.Instances()
		if err != nil || !slices.Equal(ids(got), []string{"b"}) {
			return "instances " + strings.Join(ids(got), ",") + " " + errString(err)
		}
		return ""
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// strategyFunc is a Strategy written as a func.
type strategyFunc func([]discovery.Instance) (discovery.Instance, bool)

func (f strategyFunc) Pick(in []discovery.Instance) (discovery.Instance, bool) { return f(in) }

// TestDiscovery_StrategyDeclines: a strategy that finds no instance it
// wants declines, and the provider returns ErrDeclined, which matches
// ErrNoInstance; a strategy that returns an instance it was not given is
// reported, not handed out.
func TestDiscovery_StrategyDeclines(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	d := newDiscovery(t, c, base)
	for _, z := range []struct{ id, zone string }{{"a", "eu-1"}, {"b", "us-1"}} {
		p, err := discovery.JavaPayload("com.example.InstanceDetails", map[string]string{"zone": z.zone})
		if err != nil {
			t.Fatal(err)
		}
		register(t, d, discovery.Instance{Name: "api", ID: z.id, Port: 80, Payload: p})
	}
	want := "ap-1"
	inZone := strategyFunc(func(list []discovery.Instance) (discovery.Instance, bool) {
		for _, in := range list {
			var details struct{ Zone string }
			if in.DecodePayload(&details) == nil && details.Zone == want {
				return in, true
			}
		}
		return discovery.Instance{}, false
	})
	p, err := d.NewProvider("api", discovery.WithStrategy(inZone))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	in, err := p.Instance()
	if !errors.Is(err, discovery.ErrDeclined) || !errors.Is(err, discovery.ErrNoInstance) || in.ID != "" {
		t.Fatalf("pick with no instance in %s: %q, %v; want no instance and ErrDeclined, ErrNoInstance", want, in.ID, err)
	}
	if !strings.HasPrefix(err.Error(), "discovery: ") {
		t.Errorf("message %q; want the discovery: prefix", err)
	}
	want = "us-1"
	if in, err := p.Instance(); err != nil || in.ID != "b" {
		t.Fatalf("pick in us-1: %q, %v; want b", in.ID, err)
	}

	foreign := strategyFunc(func([]discovery.Instance) (discovery.Instance, bool) {
		return discovery.Instance{Name: "api", ID: "nobody"}, true
	})
	fp, err := d.NewProvider("api", discovery.WithStrategy(foreign))
	if err != nil {
		t.Fatal(err)
	}
	if err := fp.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if in, err := fp.Instance(); !errors.Is(err, discovery.ErrInvalidArgument) || in.ID != "" {
		t.Errorf("a strategy's pick that is no candidate: %q, %v; want ErrInvalidArgument and no instance", in.ID, err)
	}
}

// TestDiscovery_UpdateZeroValuesFollowRegister: Update reads in's zero
// fields as Register does: Update(Instance{}) after Register(Instance{Name})
// writes the same bytes, the local IP address included, and takes back
// every field an earlier Update set; an Update that changes the service
// type is refused and changes nothing.
func TestDiscovery_UpdateZeroValuesFollowRegister(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	ctx := t.Context()
	d := newDiscovery(t, c, base)
	r := register(t, d, discovery.Instance{Name: "api"})
	read := func() []byte {
		t.Helper()
		b, _, err := c.GetData().ForPath(ctx, r.Path())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := read()
	var in discovery.Instance
	if err := json.Unmarshal(first, &in); err != nil {
		t.Fatal(err)
	}
	checkLocalAddress(t, in.Address)

	spec, err := discovery.ParseURISpec("{scheme}://{address}:{port}")
	if err != nil {
		t.Fatal(err)
	}
	full := discovery.Instance{Address: "10.9.9.9", Port: 81, SSLPort: 444, Payload: json.RawMessage(`{"k":1}`), URISpec: spec, Disabled: true}
	if err := r.Update(ctx, full); err != nil {
		t.Fatal(err)
	}
	var got discovery.Instance
	if err := json.Unmarshal(read(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "api" || got.ID != in.ID || got.RegistrationTimeUTC != in.RegistrationTimeUTC || got.ServiceType != discovery.Dynamic ||
		got.Address != "10.9.9.9" || got.Port != 81 || got.SSLPort != 444 || string(got.Payload) != `{"k":1}` || got.URISpec == nil || !got.Disabled {
		t.Fatalf("after a full Update the node reads %+v", got)
	}
	if err := r.Update(ctx, discovery.Instance{}); err != nil {
		t.Fatal(err)
	}
	if now := read(); !bytes.Equal(now, first) {
		t.Fatalf("Update(Instance{}) wrote\n%s\nwant Register's\n%s", now, first)
	}
	if err := r.Update(ctx, discovery.Instance{ServiceType: discovery.Static}); !errors.Is(err, discovery.ErrInvalidArgument) {
		t.Errorf("Update to another service type: %v; want ErrInvalidArgument", err)
	}
	if now := read(); !bytes.Equal(now, first) {
		t.Errorf("a refused Update changed the node to %s", now)
	}
}

// checkLocalAddress fails t unless a is an address of one of this host's
// interfaces, neither loopback nor link-local (or "" when it has none).
func checkLocalAddress(t testing.TB, a string) {
	t.Helper()
	var local []string
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range addrs {
		if n, ok := x.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			local = append(local, n.IP.String())
		}
	}
	if len(local) == 0 && a == "" {
		return
	}
	if !slices.Contains(local, a) {
		t.Fatalf("default address %q; want one of the host's %q", a, local)
	}
}

// TestInteropDiscovery_LocalAddressAndTypedPayload: against Curator's
// discovery with a payload class of its own (JsonInstanceSerializer of
// that class, as Curator's docs show): Go's default address is one of
// Curator's local IPs; a Go instance whose payload is the package doc's
// JavaPayload shape is read by Java as that class, where a plain JSON
// object is not; a Java instance (builder defaults) is read by Go, with
// Curator's default address and the payload decoded.
func TestInteropDiscovery_LocalAddressAndTypedPayload(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j := interop.StartPayload(t, zktest.Shared(t).ConnectString())
	d := newDiscovery(t, c, base)

	javaIPs, err := j.Fields(javaCtx(t, 10*time.Second), "localips")
	if err != nil {
		t.Fatal(err)
	}
	goReg := register(t, d, discovery.Instance{Name: "typed", ID: "go-1", Port: 80})
	if !slices.ContainsFunc(javaIPs, func(s string) bool { return sameIP(s, goReg.Instance().Address) }) {
		t.Errorf("Go's default address %q is not among Curator's local IPs %q", goReg.Instance().Address, javaIPs)
	}

	// The doc's first payload: JavaPayload(class, map{"zone": ...}).
	payload, err := discovery.JavaPayload(interop.PayloadClass, map[string]string{"zone": "eu-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := goReg.Update(t.Context(), discovery.Instance{Port: 80, Payload: payload}); err != nil {
		t.Fatal(err)
	}
	got, err := j.Call(javaCtx(t, 10*time.Second), "query", base, "typed")
	if want := "go-1=" + interop.PayloadClass + ":eu-1"; err != nil || got != want {
		t.Errorf("Curator reads the Go instance as %q (err %v); want %q", got, err, want)
	}
	register(t, d, discovery.Instance{Name: "untyped", ID: "go-2", Port: 80, Payload: json.RawMessage(`{"zone":"eu-1"}`)})
	if got, err := j.Call(javaCtx(t, 10*time.Second), "query", base, "untyped"); err == nil && strings.Contains(got, interop.PayloadClass) {
		t.Errorf("Curator read a payload without @class as %q; the doc's JavaPayload would not be needed", got)
	}

	javaDo(t, j, "register", base, "typed", "java-1", "us-1")
	javaAddr, err := j.Call(javaCtx(t, 10*time.Second), "builder.address")
	if err != nil {
		t.Fatal(err)
	}
	in, err := d.Instance(t.Context(), "typed", "java-1")
	if err != nil {
		t.Fatal(err)
	}
	var details struct{ Zone string }
	if err := in.DecodePayload(&details); err != nil || details.Zone != "us-1" {
		t.Errorf("Go decodes Curator's typed payload %s as %+v (err %v); want zone us-1", in.Payload, details, err)
	}
	if want := strings.TrimSuffix(javaAddr, "-"); in.Address != want {
		t.Errorf("Curator's instance address reads %q in Go; Curator's builder gives %q", in.Address, javaAddr)
	}
}

// sameIP reports whether a Java address text (perhaps with a %zone) and a
// Go one name the same IP.
func sameIP(java, goAddr string) bool {
	java, _, _ = strings.Cut(java, "%")
	a, b := net.ParseIP(java), net.ParseIP(goAddr)
	return a != nil && a.Equal(b)
}
