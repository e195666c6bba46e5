package interop

import (
	"testing"
)

// The atomic helper is a Java program of its own, java/AtomicHelper.java,
// for Curator's DistributedAtomicInteger, DistributedAtomicValue and
// CachedAtomicLong. It speaks CuratorHelper's protocol and is driven
// through the same Helper type; byte values travel as Hex, with "null"
// for Java's null.

var atomicProgram = &program{class: "AtomicHelper", kind: "atomic", what: "atomic helper"}

// StartAtomic starts an atomic helper connected to connectString with
// DefaultSessionTimeout; t.Cleanup closes it. It skips or fails t when
// Java Curator is missing, as Start does.
func StartAtomic(t testing.TB, connectString string) *Helper {
	t.Helper()
	return start(t, atomicProgram, connectString, DefaultSessionTimeout, false)
}
