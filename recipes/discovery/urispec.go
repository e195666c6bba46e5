package discovery

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-curator/curator/internal/recipe"
)

// URISpec is a template for an instance's URI: Curator's UriSpec. Text in
// braces is a variable, replaced when the URI is built:
//
//	{scheme}                 "https" if the instance has an SSL port, else "http"
//	{name}, {id}, {address}  the instance's fields
//	{port}, {ssl-port}       its ports ("" when none)
//	{registration-time-utc}  its registration time in milliseconds
//	{service-type}           its type in lower case ("dynamic")
//	{[}, {]}                 a literal "{" and "}"
//	{anything-else}          the caller's variable of that name
//
// A variable without a value is replaced by "", as in Curator. A URISpec
// is immutable once parsed and safe for concurrent use; it is encoded in
// an instance's JSON as Curator encodes it (a list of parts).
type URISpec struct {
	parts []uriPart
}

// uriPart is one part of a URISpec, literal text or a variable, as
// Curator's UriSpec.Part is written in JSON.
type uriPart struct {
	Value    string `json:"value"`
	Variable bool   `json:"variable"`
}

// ParseURISpec parses a URI template such as
// "{scheme}://{address}:{port}/api". Like Curator, it rejects a "{"
// inside a variable, a "}" outside one, and an unclosed variable; a
// variable's name is trimmed of spaces, and "{}" is dropped.
func ParseURISpec(s string) (*URISpec, error) {
	spec := &URISpec{}
	inVar := false
	for s != "" {
		i := strings.IndexAny(s, "{}")
		if i < 0 {
			i = len(s)
		}
		if i > 0 {
			tok := s[:i]
			if inVar {
				tok = strings.TrimSpace(tok)
			}
			spec.parts = append(spec.parts, uriPart{Value: tok, Variable: inVar})
			s = s[i:]
			continue
		}
		switch s[0] {
		case '{':
			if inVar {
				return nil, recipe.BadArg(ErrInvalidArgument, "URI spec: { inside a variable")
			}
			inVar = true
		case '}':
			if !inVar {
				return nil, recipe.BadArg(ErrInvalidArgument, "URI spec: } without {")
			}
			inVar = false
		}
		s = s[1:]
	}
	if inVar {
		return nil, recipe.BadArg(ErrInvalidArgument, "URI spec: variable not closed, expected }")
	}
	return spec, nil
}

// String returns the template the spec was parsed from (with variable
// names trimmed).
func (s *URISpec) String() string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range s.parts {
		if p.Variable {
			b.WriteString("{" + p.Value + "}")
		} else {
			b.WriteString(p.Value)
		}
	}
	return b.String()
}

// Build returns the URI for in, with vars' values (formatted with
// fmt.Sprint) for custom variables; vars take precedence over in's
// fields, as in Curator. A nil spec builds "".
func (s *URISpec) Build(in Instance, vars map[string]any) string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range s.parts {
		if !p.Variable {
			b.WriteString(p.Value)
			continue
		}
		if v, ok := vars[p.Value]; ok {
			if v != nil {
				b.WriteString(fmt.Sprint(v))
			}
			continue
		}
		b.WriteString(in.field(p.Value))
	}
	return b.String()
}

// field returns the value of the built-in variable name for in, or "".
func (in Instance) field(name string) string {
	port := func(p int) string {
		if p == 0 {
			return ""
		}
		return strconv.Itoa(p)
	}
	switch name {
	case "[":
		return "{"
	case "]":
		return "}"
	case "scheme":
		if in.SSLPort != 0 {
			return "https"
		}
		return "http"
	case "name":
		return in.Name
	case "id":
		return in.ID
	case "address":
		return in.Address
	case "port":
		return port(in.Port)
	case "ssl-port":
		return port(in.SSLPort)
	case "registration-time-utc":
		return strconv.FormatInt(in.RegistrationTimeUTC, 10)
	case "service-type":
		t := in.ServiceType
		if t == "" {
			t = Dynamic
		}
		return strings.ToLower(string(t))
	}
	return ""
}

// URI builds the instance's URI from its URISpec and vars; "" without a
// spec.
func (in Instance) URI(vars map[string]any) string {
	return in.URISpec.Build(in, vars)
}

// MarshalJSON encodes the spec as Curator does: {"parts":[...]}.
func (s *URISpec) MarshalJSON() ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	parts := s.parts
	if parts == nil {
		parts = []uriPart{}
	}
	return marshal(struct {
		Parts []uriPart `json:"parts"`
	}{parts})
}

// UnmarshalJSON decodes a spec as Curator writes it.
func (s *URISpec) UnmarshalJSON(b []byte) error {
	var w struct {
		Parts []uriPart `json:"parts"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	s.parts = w.Parts
	return nil
}
