package interop

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The discovery helper is a Java program, java/DiscoveryHelper.java, for
// Curator's curator-x-discovery (Debian's libcurator-discovery-java, with
// the Jackson 2 jars it depends on). It speaks CuratorHelper's protocol
// (java/LineProtocol.java) and is driven through the same Helper type.
var discoveryProgram = &program{
	class: "DiscoveryHelper", kind: "discovery", what: "discovery helper",
	jars: []string{"curator-x-discovery", "jackson-databind", "jackson-core", "jackson-annotations"},
}

// StartDiscovery starts a discovery helper connected to connectString
// with sessionTimeout (0 means DefaultSessionTimeout); t.Cleanup closes
// it (its providers, caches and ServiceDiscovery instances, which
// unregister their services, then its session). It skips or fails t when
// Java Curator is missing, as Start does.
func StartDiscovery(t testing.TB, connectString string, sessionTimeout time.Duration) *Helper {
	t.Helper()
	if sessionTimeout <= 0 {
		sessionTimeout = DefaultSessionTimeout
	}
	return start(t, discoveryProgram, connectString, sessionTimeout, false)
}

// DecodeHexJSON decodes the hex words of the discovery helper's replies
// into JSON documents ("-" gives nil).
func DecodeHexJSON(words []string) ([][]byte, error) {
	out := make([][]byte, 0, len(words))
	for _, w := range words {
		if w == "-" {
			out = append(out, nil)
			continue
		}
		b, err := hex.DecodeString(w)
		if err != nil {
			return nil, fmt.Errorf("interop: bad hex JSON %q: %w", w, err)
		}
		out = append(out, b)
	}
	return out, nil
}

// JavaRegister registers an instance through the helper's
// ServiceDiscovery on base; payload is JSON (an object) or nil.
func JavaRegister(ctx context.Context, h *Helper, base, name, id, address string, port int, payload []byte) error {
	p := "-"
	if payload != nil {
		p = hex.EncodeToString(payload)
	}
	_, err := h.Call(ctx, "register", base, name, id, address, fmt.Sprint(port), p)
	return err
}

// JavaRegisterType is JavaRegister with Curator's service type (its
// ServiceType name, such as "DYNAMIC_SEQUENTIAL").
func JavaRegisterType(ctx context.Context, h *Helper, base, name, id, address string, port int, payload []byte, serviceType string) error {
	p := "-"
	if payload != nil {
		p = hex.EncodeToString(payload)
	}
	_, err := h.Call(ctx, "register", base, name, id, address, fmt.Sprint(port), p, serviceType)
	return err
}

// JavaPick returns the JSON of the instance the helper's round-robin
// ServiceProvider picks, or nil when it has none.
func JavaPick(ctx context.Context, h *Helper, base, name string) ([]byte, error) {
	out, err := h.Call(ctx, "provider.pick", base, name)
	if err != nil {
		return nil, err
	}
	docs, err := DecodeHexJSON(strings.Fields(out))
	if err != nil || len(docs) != 1 {
		return nil, fmt.Errorf("interop: provider.pick: reply %q: %v", out, err)
	}
	return docs[0], nil
}
