//go:build !amd64 || goid_stack

package goid

import "unsafe"

// haveG reports whether getg is implemented on this platform.
const haveG = false

// getg is not implemented here: Get takes the portable way.
func getg() unsafe.Pointer { return nil }
