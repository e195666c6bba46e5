//go:build amd64 && !goid_stack

package goid

import "unsafe"

// haveG reports whether getg is implemented on this platform.
const haveG = true

// getg returns the calling goroutine's g pointer (getg_amd64.s).

func getg() unsafe.Pointer
