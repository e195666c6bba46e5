package discovery

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/go-curator/curator/framework"
)

// javaMap is what Curator 5.4's JsonInstanceSerializer wrote (captured
// from /usr/share/java/curator-x-discovery.jar) for an instance with a
// HashMap payload and a URI spec.
const javaMap = `{"name":"svc","id":"id1","address":"10.0.0.1","port":8080,"sslPort":null,` +
	`"payload":{"@class":"java.util.HashMap","k":"v"},"registrationTimeUTC":1795721266380,` +
	`"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},` +
	`{"value":"://","variable":false},{"value":"address","variable":true},{"value":":","variable":false},` +
	`{"value":"port","variable":true},{"value":"/x/","variable":false},{"value":"custom","variable":true}]}}`

// javaString: a String payload, an SSL port only, no URI spec.
const javaString = `{"name":"svc","id":"id2","address":"h","port":null,"sslPort":443,"payload":"hello",` +
	`"registrationTimeUTC":1795721266580,"serviceType":"DYNAMIC","uriSpec":null}`

func TestInstance_DecodesJava(t *testing.T) {
	var in Instance
	if err := json.Unmarshal([]byte(javaMap), &in); err != nil {
		t.Fatal(err)
	}
	if in.Name != "svc" || in.ID != "id1" || in.Address != "10.0.0.1" || in.Port != 8080 || in.SSLPort != 0 ||
		in.RegistrationTimeUTC != 1795721266380 || in.ServiceType != Dynamic || in.Disabled {
		t.Errorf("decoded %+v", in)
	}
	var payload map[string]string
	if err := in.DecodePayload(&payload); err != nil || payload["k"] != "v" {
		t.Errorf("payload %v, %v", payload, err)
	}
	if got, want := in.URI(map[string]any{"custom": "C"}), "http://10.0.0.1:8080/x/C"; got != want {
		t.Errorf("URI = %q, want %q (Java's buildUriSpec)", got, want)
	}
	if got, want := in.URI(nil), "http://10.0.0.1:8080/x/"; got != want {
		t.Errorf("URI without custom = %q, want %q", got, want)
	}
	if err := json.Unmarshal([]byte(javaString), &in); err != nil {
		t.Fatal(err)
	}
	var s string
	if in.Port != 0 || in.SSLPort != 443 || in.URISpec != nil || in.DecodePayload(&s) != nil || s != "hello" {
		t.Errorf("decoded %+v (payload %q)", in, s)
	}
}

func TestInstance_EncodesInCuratorsOrder(t *testing.T) {
	spec, err := ParseURISpec("{scheme}://{address}:{port}/x/{custom}")
	if err != nil {
		t.Fatal(err)
	}
	in := Instance{Name: "svc", ID: "id1", Address: "10.0.0.1", Port: 8080, RegistrationTimeUTC: 1795721266380,
		Payload: json.RawMessage(`{"@class":"java.util.HashMap","k":"v"}`), URISpec: spec}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	// Java's bytes, plus "enabled", which Curator's compatible mode leaves out.
	want := strings.TrimSuffix(javaMap, "}") + `,"enabled":true}`
	if string(b) != want {
		t.Errorf("encoded\n%s\nwant\n%s", b, want)
	}
	in.Disabled, in.Payload, in.URISpec, in.Address = true, nil, nil, ""
	b, _ = json.Marshal(in)
	if want := `{"name":"svc","id":"id1","address":null,"port":8080,"sslPort":null,"payload":null,` +
		`"registrationTimeUTC":1795721266380,"serviceType":"DYNAMIC","uriSpec":null,"enabled":false}`; string(b) != want {
		t.Errorf("encoded\n%s\nwant\n%s", b, want)
	}
	var back Instance
	if err := json.Unmarshal(b, &back); err != nil || !back.Disabled || back.Payload != nil || back.Address != "" {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}

func TestJavaPayload(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{map[string]int{"a": 1}, `{"@class":"com.example.Details","a":1}`},
		{struct{}{}, `{"@class":"com.example.Details"}`},
	} {
		got, err := JavaPayload("com.example.Details", tc.v)
		if err != nil || string(got) != tc.want {
			t.Errorf("JavaPayload(%v) = %s, %v; want %s", tc.v, got, err, tc.want)
		}
	}
	for _, v := range []any{"text", 3, []int{1}} {
		if _, err := JavaPayload("com.example.Details", v); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("JavaPayload(%v): err = %v, want ErrInvalidArgument", v, err)
		}
	}
}

func TestInstance_BadInput(t *testing.T) {
	ok := Instance{Name: "svc", ID: "a", Port: 1, RegistrationTimeUTC: 1}
	for name, mut := range map[string]func(*Instance){
		"empty name":       func(in *Instance) { in.Name = "" },
		"name with /":      func(in *Instance) { in.Name = "a/b" },
		"name ..":          func(in *Instance) { in.Name = ".." },
		"name with NUL":    func(in *Instance) { in.Name = "a\x00" },
		"id with /":        func(in *Instance) { in.ID = "x/y" },
		"id with control":  func(in *Instance) { in.ID = "x\ny" },
		"port -1":          func(in *Instance) { in.Port = -1 },
		"port 65536":       func(in *Instance) { in.Port = 65536 },
		"sslPort 70000":    func(in *Instance) { in.SSLPort = 70000 },
		"payload not JSON": func(in *Instance) { in.Payload = json.RawMessage("{") },
		"unknown type":     func(in *Instance) { in.ServiceType = "EPHEMERAL" },
		"oversized payload": func(in *Instance) {
			in.Payload = json.RawMessage(`"` + strings.Repeat("x", MaxInstanceSize) + `"`)
		},
	} {
		t.Run(name, func(t *testing.T) {
			in := ok
			mut(&in)
			_, err := in.encode()
			if !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, framework.ErrInvalidArgument) {
				t.Fatalf("err = %v, want ErrInvalidArgument", err)
			}
			if name == "oversized payload" && !errors.Is(err, ErrTooLarge) {
				t.Errorf("err = %v, want ErrTooLarge too", err)
			}
			if msg := err.Error(); strings.Count(msg, "discovery: ") != 1 || strings.Contains(msg, "\n") {
				t.Errorf("message %q: want one prefix, one line", msg)
			}
		})
	}
	if _, err := ok.encode(); err != nil {
		t.Errorf("valid instance: %v", err)
	}
}

func TestDecode_Corrupt(t *testing.T) {
	for _, data := range []string{"", "not json", `{"name":"svc"}`, `[1]`} {
		if _, err := decode("/s/svc/x", []byte(data)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode(%q): err = %v, want ErrCorrupt", data, err)
		}
	}
}

func TestURISpec(t *testing.T) {
	in := Instance{Name: "svc", ID: "i", Address: "h", Port: 80, SSLPort: 443, RegistrationTimeUTC: 7, ServiceType: Static}
	vars := map[string]any{"custom": "V"}
	for _, tc := range []struct {
		spec, want string
		vars       map[string]any
	}{
		{"{scheme}://{address}:{ssl-port}/{name}/{id}", "https://h:443/svc/i", nil},
		{"{ scheme }:{port}", "https:80", nil},
		{"{[}literal{]}", "{literal}", nil},
		{"t={registration-time-utc} {service-type}", "t=7 static", nil},
		{"a{}b{missing}c", "abc", vars},
		{"{custom}", "V", vars},
		{"{port}", "99", map[string]any{"port": 99}}, // the caller's variable wins, as in Curator
		{"", "", nil},
	} {
		s, err := ParseURISpec(tc.spec)
		if err != nil {
			t.Fatalf("ParseURISpec(%q): %v", tc.spec, err)
		}
		if got := s.Build(in, tc.vars); got != tc.want {
			t.Errorf("%q built %q, want %q", tc.spec, got, tc.want)
		}
		b, _ := json.Marshal(s)
		var back URISpec
		if err := json.Unmarshal(b, &back); err != nil || back.String() != s.String() {
			t.Errorf("round trip of %q: %s -> %q, %v", tc.spec, b, back.String(), err)
		}
	}
	in.SSLPort, in.Port = 0, 0
	s, _ := ParseURISpec("{scheme}://{address}:{port}")
	if got := s.Build(in, nil); got != "http://h:" {
		t.Errorf("no ports: %q", got)
	}
	for _, bad := range []string{"{a{b}}", "a}", "{open"} {
		if _, err := ParseURISpec(bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ParseURISpec(%q): err = %v, want ErrInvalidArgument", bad, err)
		}
	}
	var nilSpec *URISpec
	if nilSpec.Build(in, nil) != "" || nilSpec.String() != "" {
		t.Error("nil spec builds something")
	}
}

// Jackson writes "&", "<" and ">" as they are; so does Register (issue
// 32). Before, Go wrote \u0026, \u003c and \u003e.
func TestInstance_EncodesHTMLCharactersAsJackson(t *testing.T) {
	spec, err := ParseURISpec("{scheme}://{address}/a?x=1&y=<2>")
	if err != nil {
		t.Fatal(err)
	}
	in := Instance{Name: "a&b", ID: "<id>", Address: "h&<>", RegistrationTimeUTC: 1, URISpec: spec,
		Payload: json.RawMessage(`{"q":"x&y<z>"}`)}
	b, err := in.encode()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `\u00`) || !strings.Contains(string(b), `"name":"a&b","id":"<id>","address":"h&<>"`) ||
		!strings.Contains(string(b), `"payload":{"q":"x&y<z>"}`) || !strings.Contains(string(b), `{"value":"/a?x=1&y=<2>","variable":false}`) {
		t.Errorf("encoded %s", b)
	}
	if strings.HasSuffix(string(b), "\n") {
		t.Errorf("encoded with a trailing newline: %q", b)
	}
	p, err := JavaPayload("C", map[string]string{"k": "<&>"})
	if err != nil || string(p) != `{"@class":"C","k":"<&>"}` {
		t.Errorf("JavaPayload = %s, %v", p, err)
	}
}

// A node whose serviceType is none of Curator's four is not an instance
// (issue 32): before, it was decoded and handed out.
func TestDecode_UnknownServiceType(t *testing.T) {
	for _, typ := range []string{`"EPHEMERAL"`, `"dynamic"`, `""`, `7`} {
		doc := `{"name":"svc","id":"x","serviceType":` + typ + `}`
		_, err := decode("/s/svc/x", []byte(doc))
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode(%s) = %v, want ErrCorrupt", doc, err)
		}
	}
	for _, typ := range []string{`"DYNAMIC"`, `"STATIC"`, `"PERMANENT"`, `"DYNAMIC_SEQUENTIAL"`, `null`} {
		doc := `{"name":"svc","id":"x","serviceType":` + typ + `}`
		if _, err := decode("/s/svc/x", []byte(doc)); err != nil {
			t.Errorf("decode(%s) = %v", doc, err)
		}
	}
}
