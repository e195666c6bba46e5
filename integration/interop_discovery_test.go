package integration

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/recipes/discovery"
)

// TestInteropDiscovery_GoInstanceFoundByJavaProvider: two Go instances
// with payloads and a URI spec are found by Curator's ServiceProvider
// (round robin, in turn; a disabled one never), read field for field by
// Curator's JsonInstanceSerializer, listed by queryForNames, and followed
// by Curator's ServiceCache as one leaves.
func TestInteropDiscovery_GoInstanceFoundByJavaProvider(t *testing.T) {
	c := newClient(t)
	base := cachePath(t, c)
	d := newDiscovery(t, c, base)
	spec, err := discovery.ParseURISpec("{scheme}://{address}:{port}/orders")
	if err != nil {
		t.Fatal(err)
	}
	var regs []*discovery.Registration
	for i := range 2 {
		regs = append(regs, register(t, d, discovery.Instance{Name: "orders", ID: fmt.Sprintf("go-%d", i),
			Address: "10.1.0." + fmt.Sprint(i+1), Port: 8080 + i, URISpec: spec,
			Payload: json.RawMessage(fmt.Sprintf(`{"zone":"eu-%d","weight":%d}`, i, 10*i))}))
	}
	// A disabled instance: Curator's provider skips it, its cache lists it.
	register(t, d, discovery.Instance{Name: "orders", ID: "go-off", Address: "10.1.0.9", Port: 8080, Disabled: true})
	java := interop.StartDiscovery(t, fwShared(t), 0)
	ctx := t.Context()
	if _, err := java.Call(ctx, "provider.start", base, "orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := java.Call(ctx, "cache.start", base, "orders"); err != nil {
		t.Fatal(err)
	}

	var picked []string
	for range 6 {
		doc, err := interop.JavaPick(ctx, java, base, "orders")
		if err != nil || doc == nil {
			t.Fatalf("Java pick: %s, %v", doc, err)
		}
		var in discovery.Instance
		if err := json.Unmarshal(doc, &in); err != nil {
			t.Fatalf("Java's JSON %s: %v", doc, err)
		}
		i := slices.IndexFunc(regs, func(r *discovery.Registration) bool { return r.Instance().ID == in.ID })
		if i < 0 {
			t.Fatalf("Java picked an unknown instance: %s", doc)
		}
		want := regs[i].Instance()
		// Curator writes a Map payload with its class: "@class":"java.util.LinkedHashMap".
		if !strings.Contains(string(in.Payload), `"@class":"java.util.LinkedHashMap"`) {
			t.Errorf("Java's payload %s has no @class", in.Payload)
		}
		if w, g := payloadMap(t, want), payloadMap(t, in); fmt.Sprint(w) != fmt.Sprint(g) {
			t.Errorf("Java read payload %v, want %v", g, w)
		}
		want.Payload, in.Payload = nil, nil
		if diff := sameInstances([]discovery.Instance{want}, []discovery.Instance{in}); diff != "" {
			t.Errorf("Java read instance %s as:\n%s", in.ID, diff)
		}
		picked = append(picked, in.ID)
	}
	if !slices.Contains(picked, "go-0") || !slices.Contains(picked, "go-1") || picked[0] == picked[1] || picked[1] == picked[2] {
		t.Errorf("Java's round robin picked %q", picked)
	}
	names, err := java.Fields(ctx, "names", base)
	if err != nil || !slices.Equal(names, []string{"orders"}) {
		t.Errorf("Java's queryForNames: %q, %v", names, err)
	}
	until(t, 20*time.Second, "Java's cache", func() string {
		got, err := java.Fields(ctx, "cache.ids", base, "orders")
		if err != nil || !slices.Equal(got, []string{"go-0", "go-1", "go-off"}) {
			return fmt.Sprintf("%q, %v", got, err)
		}
		return ""
	})
	if err := regs[0].Unregister(ctx); err != nil {
		t.Fatal(err)
	}
	until(t, 20*time.Second, "Java's cache after an Unregister", func() string {
		got, err := java.Fields(ctx, "cache.ids", base, "orders")
		if err != nil || !slices.Equal(got, []string{"go-1", "go-off"}) {
			return fmt.Sprintf("%q, %v", got, err)
		}
		return ""
	})
}

// TestInteropDiscovery_JavaInstanceFoundByGoProvider: instances that
// Curator's ServiceDiscovery registers, with Map payloads, are found by a
// Go Provider (round robin), with their payloads, by Go's queries, and
// by a Go Cache as one is unregistered.
func TestInteropDiscovery_JavaInstanceFoundByGoProvider(t *testing.T) {
	c := newClient(t)
	base := cachePath(t, c)
	java := interop.StartDiscovery(t, fwShared(t), 0)
	ctx := t.Context()
	for i := range 2 {
		payload := fmt.Sprintf(`{"zone":"us-%d","weight":%d}`, i, i+1)
		if err := interop.JavaRegister(ctx, java, base, "billing", fmt.Sprintf("java-%d", i), "10.2.0.1", 9000+i, []byte(payload)); err != nil {
			t.Fatal(err)
		}
	}
	d := newDiscovery(t, c, base)
	p, err := d.NewProvider("billing")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	var events discoveryEvents
	p.AddListener(events.listen)
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var picked []string
	for range 4 {
		in, err := p.Instance()
		if err != nil {
			t.Fatal(err)
		}
		var payload struct {
			Class  string `json:"@class"`
			Zone   string
			Weight int
		}
		if err := in.DecodePayload(&payload); err != nil {
			t.Fatalf("payload %s: %v", in.Payload, err)
		}
		n := strings.TrimPrefix(in.ID, "java-")
		if in.Name != "billing" || in.Address != "10.2.0.1" || fmt.Sprint(in.Port-9000) != n || in.SSLPort != 0 ||
			in.ServiceType != discovery.Dynamic || in.Disabled || in.RegistrationTimeUTC == 0 ||
			payload.Zone != "us-"+n || fmt.Sprint(payload.Weight-1) != n || payload.Class == "" {
			t.Errorf("Go read Java's instance as %+v, payload %+v (%s)", in, payload, in.Payload)
		}
		picked = append(picked, in.ID)
	}
	if want := []string{"java-0", "java-1", "java-0", "java-1"}; !slices.Equal(picked, want) {
		t.Errorf("Go's round robin picked %q, want %q", picked, want)
	}
	list, err := d.Instances(ctx, "billing")
	if err != nil || !slices.Equal(ids(list), []string{"java-0", "java-1"}) {
		t.Errorf("Instances: %q, %v", ids(list), err)
	}
	// Java's own reading of what it wrote equals Go's.
	out, err := java.Fields(ctx, "query", base, "billing")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := interop.DecodeHexJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	var javaList []discovery.Instance
	for _, doc := range docs {
		var in discovery.Instance
		if err := json.Unmarshal(doc, &in); err != nil {
			t.Fatal(err)
		}
		javaList = append(javaList, in)
	}
	if diff := sameInstances(javaList, list); diff != "" {
		t.Errorf("Go's and Java's queries differ: %s", diff)
	}

	if _, err := java.Call(ctx, "unregister", base, "billing", "java-0"); err != nil {
		t.Fatal(err)
	}
	events.waitFor(t, "NODE_REMOVED java-0")
	if in, err := p.Instance(); err != nil || in.ID != "java-1" {
		t.Errorf("after Java unregistered java-0 Go picked %s, %v", in.ID, err)
	}
}

// TestInteropDiscovery_JavaSessionExpirySeenByGo: a Java service's
// session expires. A Go cache sees its instance leave and come back
// (Curator registers it again on its new session), and ends equal to the
// server, where the instance is one node of Java's new session.
func TestInteropDiscovery_JavaSessionExpirySeenByGo(t *testing.T) {
	c := newClient(t)
	base := cachePath(t, c)
	java := interop.StartDiscovery(t, fwShared(t), 4*time.Second)
	ctx := t.Context()
	if err := interop.JavaRegister(ctx, java, base, "search", "java-s", "10.3.0.1", 9200, []byte(`{"shard":7}`)); err != nil {
		t.Fatal(err)
	}
	d := newDiscovery(t, c, base)
	ch, err := d.NewCache("search")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	var events discoveryEvents
	ch.AddListener(events.listen)
	if err := ch.Start(ctx); err != nil {
		t.Fatal(err)
	}
	events.waitFor(t, "NODE_ADDED java-s", "INITIALIZED")

	old, err := java.Call(ctx, "expire")
	if err != nil {
		t.Fatal(err)
	}
	events.waitFor(t, "NODE_ADDED java-s", "INITIALIZED", "NODE_REMOVED java-s", "NODE_ADDED java-s")
	until(t, 30*time.Second, "Java's instance back, on its new session, in Go's cache", func() string {
		now, err := java.Call(ctx, "session")
		if err != nil {
			return err.Error()
		}
		if now == old {
			return "Java still on session " + old
		}
		_, st, err := c.GetData().ForPath(ctx, base+"/search/java-s")
		if err != nil {
			return err.Error()
		}
		if got := fmt.Sprintf("%x", st.EphemeralOwner); got != now {
			return fmt.Sprintf("node owned by %s, Java's session is %s", got, now)
		}
		if kids := children(t, c, base+"/search"); !slices.Equal(kids, []string{"java-s"}) {
			return fmt.Sprintf("nodes %q", kids)
		}
		return cacheEqualsServer(ctx, d, "search", ch)
	})
	list, _ := ch.Instances()
	var payload struct{ Shard int }
	if len(list) != 1 || list[0].DecodePayload(&payload) != nil || payload.Shard != 7 {
		t.Errorf("Go's cache after the expiry: %+v", list)
	}
}

// payloadMap decodes an instance's object payload, without Java's
// "@class".
func payloadMap(t *testing.T, in discovery.Instance) map[string]any {
	t.Helper()
	var m map[string]any
	if err := in.DecodePayload(&m); err != nil {
		t.Fatalf("payload %s: %v", in.Payload, err)
	}
	delete(m, "@class")
	return m
}

// TestInteropDiscovery_DynamicSequentialBothWays: Curator registers a
// DYNAMIC_SEQUENTIAL instance (its node <id><10 digits>) and Go finds it,
// with its node's path and owner, and hands it out; Go registers one in
// the same layout and Curator's queries and cache find it. Before issue
// 32 Go refused to register the type.
func TestInteropDiscovery_DynamicSequentialBothWays(t *testing.T) {
	c := newClient(t)
	base := cachePath(t, c)
	java := interop.StartDiscovery(t, fwShared(t), 0)
	ctx := t.Context()
	if err := interop.JavaRegisterType(ctx, java, base, "jobs", "java-w", "10.4.0.1", 9300, []byte(`{"k":"v"}`), "DYNAMIC_SEQUENTIAL"); err != nil {
		t.Fatal(err)
	}
	javaSession, err := java.Call(ctx, "session")
	if err != nil {
		t.Fatal(err)
	}
	d := newDiscovery(t, c, base)
	r := register(t, d, discovery.Instance{Name: "jobs", ID: "go-w", Address: "10.4.0.2", Port: 9301,
		ServiceType: discovery.DynamicSequential})

	nodes, err := d.InstanceNodes(ctx, "jobs")
	if err != nil || len(nodes) != 2 {
		t.Fatalf("InstanceNodes: %+v, %v", nodes, err)
	}
	for _, n := range nodes {
		owner := fmt.Sprintf("%x", n.Owner)
		want := javaSession
		if n.Instance.ID == "go-w" {
			want = fmt.Sprintf("%x", c.SessionID())
			if n.Path != r.Path() {
				t.Errorf("Go's node at %s, its Registration says %s", n.Path, r.Path())
			}
		}
		if !seqName(n.Path, base+"/jobs/"+n.Instance.ID) || owner != want || n.Instance.ServiceType != discovery.DynamicSequential {
			t.Errorf("instance %s: node %s owned by %s (want <id><10 digits>, owner %s), type %s",
				n.Instance.ID, n.Path, owner, want, n.Instance.ServiceType)
		}
	}
	p, err := d.NewProvider("jobs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := p.Instances(); err != nil || !slices.Equal(ids(got), []string{"go-w", "java-w"}) {
		t.Errorf("Go's provider: %q, %v", ids(got), err)
	}

	out, err := java.Fields(ctx, "query", base, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := interop.DecodeHexJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	var javaIDs []string
	for _, doc := range docs {
		var in discovery.Instance
		if err := json.Unmarshal(doc, &in); err != nil {
			t.Fatal(err)
		}
		if in.ServiceType != discovery.DynamicSequential {
			t.Errorf("Java read %s as %s", in.ID, in.ServiceType)
		}
		javaIDs = append(javaIDs, in.ID)
	}
	slices.Sort(javaIDs)
	if !slices.Equal(javaIDs, []string{"go-w", "java-w"}) {
		t.Errorf("Java's queryForInstances: %q", javaIDs)
	}
	if _, err := java.Call(ctx, "cache.start", base, "jobs"); err != nil {
		t.Fatal(err)
	}
	until(t, 20*time.Second, "Java's cache", func() string {
		got, err := java.Fields(ctx, "cache.ids", base, "jobs")
		if err != nil || !slices.Equal(got, []string{"go-w", "java-w"}) {
			return fmt.Sprintf("%q, %v", got, err)
		}
		return ""
	})
	if err := r.Unregister(ctx); err != nil {
		t.Fatal(err)
	}
	until(t, 20*time.Second, "Java's cache after Go's Unregister", func() string {
		got, err := java.Fields(ctx, "cache.ids", base, "jobs")
		if err != nil || !slices.Equal(got, []string{"java-w"}) {
			return fmt.Sprintf("%q, %v", got, err)
		}
		return ""
	})
}

// TestInteropDiscovery_JSONBytesAsJackson: an instance with "&", "<" and
// ">" in its ID, address, URI spec and payload is written by Go with the
// bytes Curator's JsonInstanceSerializer writes for it (Java reads Go's
// node and serializes it again), and Go's encoding of Java's node gives
// Java's bytes back; the only difference is "enabled", which Curator's
// compatible mode leaves out. Before issue 32 Go wrote \u0026, \u003c and
// \u003e.
func TestInteropDiscovery_JSONBytesAsJackson(t *testing.T) {
	c := newClient(t)
	base := cachePath(t, c)
	java := interop.StartDiscovery(t, fwShared(t), 0)
	ctx := t.Context()
	d := newDiscovery(t, c, base)
	spec, err := discovery.ParseURISpec("{scheme}://{address}:{port}/q?a=1&b=<2>")
	if err != nil {
		t.Fatal(err)
	}
	r := register(t, d, discovery.Instance{Name: "html", ID: "go&<1>", Address: "h&<>", Port: 80, URISpec: spec,
		Payload: json.RawMessage(`{"@class":"java.util.LinkedHashMap","q":"x&y<z>"}`)})
	goBytes, _, err := c.GetData().ForPath(ctx, r.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := interop.JavaRegister(ctx, java, base, "html", "java&<2>", "j&<>", 81, []byte(`{"q":"a&b<c>"}`)); err != nil {
		t.Fatal(err)
	}
	out, err := java.Fields(ctx, "query", base, "html")
	if err != nil {
		t.Fatal(err)
	}
	docs, err := interop.DecodeHexJSON(out)
	if err != nil || len(docs) != 2 {
		t.Fatalf("Java's query: %d documents, %v", len(docs), err)
	}
	javaOfGo, javaOwn := docs[0], docs[1] // sorted by id: "go&<1>", "java&<2>"
	if got := encodedLikeJava(t, goBytes); got != string(javaOfGo) {
		t.Errorf("Go wrote\n%s\nJava writes for the same instance\n%s", got, javaOfGo)
	}
	if strings.Contains(string(goBytes), `\u00`) || strings.HasSuffix(string(goBytes), "\n") {
		t.Errorf("Go's bytes %q escape HTML characters or end in a newline", goBytes)
	}
	javaNode, _, err := c.GetData().ForPath(ctx, base+"/html/java&<2>")
	if err != nil {
		t.Fatal(err)
	}
	if string(javaNode) != string(javaOwn) {
		t.Fatalf("Java's node %s differs from its serializer's %s", javaNode, javaOwn)
	}
	var in discovery.Instance
	if err := json.Unmarshal(javaNode, &in); err != nil {
		t.Fatal(err)
	}
	again, err := in.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if got := encodedLikeJava(t, again); got != string(javaNode) {
		t.Errorf("Go encodes Java's instance as\n%s\nJava wrote\n%s", got, javaNode)
	}
}
