package discovery

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/recipe"
)

// Errors of service discovery. A bad argument matches ErrInvalidArgument
// and the framework's sentinel for the problem: framework.ErrNilClient,
// framework.ErrInvalidPath, or framework.ErrInvalidArgument.
var (
	ErrInvalidArgument = errors.New("discovery: invalid argument")
	// ErrTooLarge reports an instance whose JSON is over MaxInstanceSize;
	// it also matches ErrInvalidArgument.
	ErrTooLarge = errors.New("discovery: instance too large")
	// ErrCorrupt reports a node under a service whose data is not a
	// service instance.
	ErrCorrupt = errors.New("discovery: node data is not a service instance")
	// ErrNoInstance reports that no instance was found or is available.
	ErrNoInstance = errors.New("discovery: no instance")
	// ErrDeclined reports a Provider whose Strategy declined to pick among
	// its candidates (a Curator strategy's null); it also matches
	// ErrNoInstance.
	ErrDeclined = errtext.Sentinel("discovery: the strategy declined to pick an instance", ErrNoInstance)
	// ErrNotRegistered reports a Registration used after Unregister, or
	// an Update that changes the instance's name or ID.
	ErrNotRegistered = errors.New("discovery: instance not registered")
	ErrClosed        = errors.New("discovery: closed")
	ErrNotStarted    = errors.New("discovery: not started")
	// ErrAlreadyStarted reports a second Start.
	ErrAlreadyStarted = errors.New("discovery: already started")
	// ErrCannotRegister reports an instance that the server refuses in a
	// way no retry changes: the service's node is an ephemeral node
	// (zk.ErrNoChildrenForEphemerals), an ACL forbids the create
	// (zk.ErrNoAuth), an invalid ACL (zk.ErrInvalidACL), or a path the
	// server rejects. Register returns it at once, matching the server's
	// sentinel and persistentnode.ErrCannotCreate too.
	ErrCannotRegister = errors.New("discovery: instance cannot be registered")
)

// MaxInstanceSize bounds an instance's JSON. ZooKeeper refuses a request
// over its jute.maxbuffer (1 MiB by default) by closing the connection,
// which a client would retry forever; the margin leaves room for the
// request's path and header.
const MaxInstanceSize = 1<<20 - 4<<10

// ServiceType is Curator's ServiceType: how an instance's node lives.
type ServiceType string

// The service types, Curator's four. A node with another serviceType is
// not an instance (ErrCorrupt).
const (
	// Dynamic: an ephemeral node, gone when the registering session ends.
	Dynamic ServiceType = "DYNAMIC"
	// Static: a persistent node, which Curator's discovery server purges
	// after a while.
	Static ServiceType = "STATIC"
	// Permanent: a persistent node, removed only by Unregister.
	Permanent ServiceType = "PERMANENT"
	// DynamicSequential: an ephemeral sequential node, named
	// <id><10-digit sequence>, gone when the registering session ends.
	DynamicSequential ServiceType = "DYNAMIC_SEQUENTIAL"
)

// Instance is one instance of a service: Curator's ServiceInstance. It is
// a plain value; copies are independent except for the bytes of Payload
// and the parts of URISpec, which must not be modified once registered.
type Instance struct {
	Name    string // the service's name: one ZooKeeper path segment
	ID      string // the instance's ID, one segment; Register makes a UUID when empty
	Address string // host name or IP address; "" is written as null
	Port    int    // 0 means none (null); otherwise 1 to 65535
	SSLPort int    // 0 means none (null); otherwise 1 to 65535
	// Payload is the instance's payload as JSON, nil for none (null).
	// Java's JsonInstanceSerializer writes an object payload with an
	// "@class" member naming its Java class, and a Java reader whose
	// payload class is not a Map needs it: see JavaPayload.
	Payload json.RawMessage
	// RegistrationTimeUTC is the registration's time in milliseconds since
	// the Unix epoch; Register sets it when 0.
	RegistrationTimeUTC int64
	ServiceType         ServiceType // "" means Dynamic
	URISpec             *URISpec    // nil for none
	// Disabled is the negation of Curator's "enabled" field: a provider
	// skips disabled instances, as Curator's ServiceProvider does.
	Disabled bool
}

// wireInstance is Instance as Curator's JsonInstanceSerializer writes it,
// field for field and in its order; "enabled" is the field that Curator's
// default (compatible) mode leaves out, read as true when absent.
type wireInstance struct {
	Name                string          `json:"name"`
	ID                  string          `json:"id"`
	Address             *string         `json:"address"`
	Port                *int            `json:"port"`
	SSLPort             *int            `json:"sslPort"`
	Payload             json.RawMessage `json:"payload"`
	RegistrationTimeUTC int64           `json:"registrationTimeUTC"`
	ServiceType         *ServiceType    `json:"serviceType"`
	URISpec             *URISpec        `json:"uriSpec"`
	Enabled             *bool           `json:"enabled,omitempty"`
}

// MarshalJSON encodes the instance in Curator's JSON format, as Jackson
// writes it: "&", "<" and ">" are not escaped (Register writes these
// bytes; json.Marshal escapes them again as \u0026 and the like, which
// decodes the same).
func (in Instance) MarshalJSON() ([]byte, error) {
	st := in.ServiceType
	if st == "" {
		st = Dynamic
	}
	w := wireInstance{
		Name: in.Name, ID: in.ID, Payload: in.Payload,
		RegistrationTimeUTC: in.RegistrationTimeUTC, ServiceType: &st, URISpec: in.URISpec,
	}
	if in.Address != "" {
		w.Address = &in.Address
	}
	if in.Port != 0 {
		w.Port = &in.Port
	}
	if in.SSLPort != 0 {
		w.SSLPort = &in.SSLPort
	}
	if len(w.Payload) == 0 {
		w.Payload = nil
	}
	enabled := !in.Disabled
	w.Enabled = &enabled
	return marshal(w)
}

// marshal encodes v as Jackson does: "&", "<" and ">" unescaped, and no
// trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON decodes an instance in Curator's JSON format. Unknown
// fields are ignored, as Curator ignores them; a serviceType that is none
// of Curator's four is an error, as it is to Curator's reader (a missing
// or null one reads as "", Dynamic).
func (in *Instance) UnmarshalJSON(b []byte) error {
	var w wireInstance
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var st ServiceType
	if w.ServiceType != nil {
		switch st = *w.ServiceType; st {
		case Dynamic, Static, Permanent, DynamicSequential:
		default:
			return fmt.Errorf("unknown serviceType %q", st)
		}
	}
	*in = Instance{
		Name: w.Name, ID: w.ID, RegistrationTimeUTC: w.RegistrationTimeUTC,
		ServiceType: st, URISpec: w.URISpec,
	}
	if w.Address != nil {
		in.Address = *w.Address
	}
	if w.Port != nil {
		in.Port = *w.Port
	}
	if w.SSLPort != nil {
		in.SSLPort = *w.SSLPort
	}
	if p := bytes.TrimSpace(w.Payload); len(p) > 0 && string(p) != "null" {
		in.Payload = p
	}
	in.Disabled = w.Enabled != nil && !*w.Enabled
	return nil
}

// decode decodes the data of the node at node, an instance of a service.
func decode(node string, data []byte) (Instance, error) {
	var in Instance
	if err := json.Unmarshal(data, &in); err != nil {
		return Instance{}, fmt.Errorf("%w: %s: %w", ErrCorrupt, node, err)
	}
	if in.Name == "" || in.ID == "" {
		return Instance{}, fmt.Errorf("%w: %s: no name or id", ErrCorrupt, node)
	}
	return in, nil
}

// DecodePayload decodes the instance's payload into v, with
// encoding/json; Java's "@class" member is ignored unless v asks for it.
// A missing payload leaves v untouched.
func (in Instance) DecodePayload(v any) error {
	if len(in.Payload) == 0 {
		return nil
	}
	return json.Unmarshal(in.Payload, v)
}

// JavaPayload returns v encoded as a JSON object with an "@class" member
// first, as Java's JsonInstanceSerializer writes a payload of that class,
// so that a Java reader whose payload class is class can read it. v must
// encode as a JSON object.
func JavaPayload(class string, v any) (json.RawMessage, error) {
	if class == "" {
		return nil, recipe.BadArg(ErrInvalidArgument, "empty Java class name")
	}
	b, err := marshal(v)
	if err != nil {
		return nil, recipe.BadArg(ErrInvalidArgument, "payload: %v", err)
	}
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' {
		return nil, recipe.BadArg(ErrInvalidArgument, "payload for a Java class must be a JSON object, got %.20s", b)
	}
	name, _ := marshal(class)
	out := append([]byte(`{"@class":`), name...)
	if rest := bytes.TrimSpace(b[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

// segmentProblem returns why s cannot be one segment of a ZooKeeper path,
// or "".
func segmentProblem(s string) string {
	if s == "" {
		return "empty"
	}
	if strings.Contains(s, "/") {
		return "contains /"
	}
	if err := framework.ValidatePath("/" + s); err != nil {
		_, reason, _ := strings.Cut(err.Error(), `": `)
		return reason
	}
	return ""
}

// checkName checks a service name.
func checkName(name string) error {
	if reason := segmentProblem(name); reason != "" {
		return recipe.BadArg(ErrInvalidArgument, "service name %q: %s", name, reason)
	}
	return nil
}

// check checks an instance to register. The instance has its ID and time.
func (in Instance) check() error {
	if err := checkName(in.Name); err != nil {
		return err
	}
	if reason := segmentProblem(in.ID); reason != "" {
		return recipe.BadArg(ErrInvalidArgument, "instance id %q: %s", in.ID, reason)
	}
	for _, p := range []struct {
		name string
		v    int
	}{{"port", in.Port}, {"sslPort", in.SSLPort}} {
		if p.v < 0 || p.v > 65535 {
			return recipe.BadArg(ErrInvalidArgument, "%s %d out of range 0 to 65535", p.name, p.v)
		}
	}
	if len(in.Payload) > 0 && !json.Valid(in.Payload) {
		return recipe.BadArg(ErrInvalidArgument, "payload is not valid JSON")
	}
	switch in.ServiceType {
	case "", Dynamic, Static, Permanent, DynamicSequential:
	default:
		return recipe.BadArg(ErrInvalidArgument, "unknown service type %q", in.ServiceType)
	}
	if in.RegistrationTimeUTC < 0 {
		return recipe.BadArg(ErrInvalidArgument, "negative registration time %d", in.RegistrationTimeUTC)
	}
	return nil
}

// encode checks in and returns its JSON.
func (in Instance) encode() ([]byte, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	b, err := marshal(in)
	if err != nil {
		return nil, recipe.BadArg(ErrInvalidArgument, "encode: %v", err)
	}
	if len(b) > MaxInstanceSize {
		return nil, errtext.Also(recipe.BadArg(ErrInvalidArgument,
			"instance %s/%s is %d bytes of JSON, over %d", in.Name, in.ID, len(b), MaxInstanceSize), ErrTooLarge)
	}
	return b, nil
}
