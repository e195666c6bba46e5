package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/discovery"
	"github.com/go-curator/curator/zktest"
	"go.uber.org/goleak"
)

// TestServices_ListsRegisteredInstances: instances registered with
// recipes/discovery under a base path are listed by `services`, all
// services or one, as text and as JSON, with their URI, ephemeral owner
// and payload; a bad name is a usage error.
func TestServices_ListsRegisteredInstances(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreAnyFunction(zktest.ServerWaitFunction)) }) // after the client's cleanup
	server := zktest.Shared(t).ConnectString()
	c := client(t, server)
	base := "/ctl/services"
	d, err := discovery.New(c, base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(t.Context())
	spec, _ := discovery.ParseURISpec("{scheme}://{address}:{port}/api")
	for _, in := range []discovery.Instance{
		{Name: "billing", ID: "b1", Address: "10.0.0.1", Port: 8080, URISpec: spec, Payload: json.RawMessage(`{"zone":"eu"}`)},
		{Name: "billing", ID: "b2", Address: "10.0.0.2", Port: 8080, URISpec: spec, Disabled: true},
		{Name: "search", ID: "s1", Address: "10.0.0.3", SSLPort: 9443, ServiceType: discovery.Permanent},
	} {
		if _, err := d.Register(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
	session := fmt.Sprintf("%#x", c.SessionID())

	out, errs, code := ctl(t, server, "services", "--base", base)
	if code != 0 {
		t.Fatalf("services: exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		"billing\tb1\t10.0.0.1:8080\turi=http://10.0.0.1:8080/api\tdynamic\tsession=" + session + "\tage=",
		"billing\tb2\t10.0.0.2:8080\turi=http://10.0.0.2:8080/api\tdynamic\tdisabled\tsession=" + session + "\tage=",
		"search\ts1\t10.0.0.3\tssl=9443\tpermanent\tage=",
	}
	if len(lines) != len(want) {
		t.Fatalf("services printed %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], w)
		}
	}
	if !strings.HasSuffix(lines[0], `payload={"zone":"eu"}`) {
		t.Errorf("line 0 = %q: no payload", lines[0])
	}

	out, errs, code = ctl(t, server, "--json", "services", "--base="+base, "search")
	if code != 0 {
		t.Fatalf("--json services search: exit %d: %s", code, errs)
	}
	var got []service
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got) != 1 || got[0].Path != base+"/search/s1" || got[0].SSLPort != 9443 || got[0].URI != "" ||
		got[0].ServiceType != "PERMANENT" || !got[0].Enabled || got[0].Session != "" || got[0].RegistrationTimeUTC == 0 {
		t.Errorf("--json services search = %+v", got)
	}

	out, _, code = ctl(t, server, "--json", "services", "--base", base+"/none")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("services under a missing base: exit %d, %q; want 0 and []", code, out)
	}
	for _, args := range [][]string{
		{"services", "--base", base, "a/b"},
		{"services", "--base", "relative"},
		{"services", "--base"},
		{"services", "one", "two"},
		{"services", "--bogus"},
	} {
		if _, errs, code := ctl(t, server, args...); code != 2 {
			t.Errorf("%q: exit %d (%s), want 2", args, code, strings.TrimSpace(errs))
		}
	}
}

// TestServices_DynamicSequentialPathAndSession: a DYNAMIC_SEQUENTIAL
// instance's node is named <id><sequence> (Curator's layout), so
// `services` prints the node's own path and its owner; before issue 32 it
// printed <base>/<name>/<id>, a path with no node, and no session. One
// node is written as Java's ServiceDiscovery writes it, one is registered
// by go-curator.
func TestServices_DynamicSequentialPathAndSession(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreAnyFunction(zktest.ServerWaitFunction)) })
	server := zktest.Shared(t).ConnectString()
	c := client(t, server)
	base := "/ctl/services-seq"
	d, err := discovery.New(c, base)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(t.Context())
	javaLike := `{"name":"jobs","id":"java","address":"10.0.0.9","port":1,"sslPort":null,"payload":null,` +
		`"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC_SEQUENTIAL","uriSpec":null}`
	javaPath, err := c.Create().CreatingParentContainersIfNeeded().WithMode(framework.EphemeralSequential).
		ForPath(t.Context(), base+"/jobs/java", []byte(javaLike))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := d.Register(t.Context(), discovery.Instance{Name: "jobs", ID: "go", Address: "10.0.0.8", Port: 2,
		ServiceType: discovery.DynamicSequential})
	if err != nil {
		t.Fatal(err)
	}
	session := fmt.Sprintf("%#x", c.SessionID())
	out, errs, code := ctl(t, server, "--json", "services", "--base", base, "jobs")
	if code != 0 {
		t.Fatalf("services: exit %d: %s", code, errs)
	}
	var got []service
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := map[string]string{"go": reg.Path(), "java": javaPath}
	if len(got) != 2 {
		t.Fatalf("services listed %d instances, want 2:\n%s", len(got), out)
	}
	for _, s := range got {
		if s.Path != want[s.ID] || s.Session != session || s.ServiceType != "DYNAMIC_SEQUENTIAL" {
			t.Errorf("instance %s: path %q session %q type %s; want path %q, session %s", s.ID, s.Path, s.Session, s.ServiceType, want[s.ID], session)
		}
		if !strings.HasPrefix(s.Path, base+"/jobs/"+s.ID) || len(s.Path) != len(base+"/jobs/"+s.ID)+10 {
			t.Errorf("path %q is not <base>/jobs/%s<10 digits>", s.Path, s.ID)
		}
	}
}
