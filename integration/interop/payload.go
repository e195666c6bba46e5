package interop

import "testing"

// The payload helper, java/PayloadHelper.java, is a Java service of
// Curator's discovery whose payload is a class of its own
// (PayloadHelper$Details, with one field, zone), read with
// JsonInstanceSerializer<Details> as Curator's docs show: its reader needs
// the payload's "@class". It also reports Curator's local addresses.
var payloadProgram = &program{
	class: "PayloadHelper", kind: "payload", what: "payload helper",
	jars: []string{"curator-x-discovery", "jackson-databind", "jackson-core", "jackson-annotations"},
}

// PayloadClass is the Java class of the payload helper's payloads.
const PayloadClass = "PayloadHelper$Details"

// StartPayload starts a payload helper connected to connectString;
// t.Cleanup closes it. It skips or fails t when Java Curator is missing,
// as Start does.
func StartPayload(t testing.TB, connectString string) *Helper {
	t.Helper()
	return start(t, payloadProgram, connectString, DefaultSessionTimeout, false)
}
