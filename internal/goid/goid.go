// Package goid reads the ID of the calling goroutine, which the reentrant
// mutex uses as its owner key, as Curator uses the current Thread.
//
// # How
//
// The portable way, and the reference, is the header of the goroutine's
// own stack trace: runtime.Stack(buf, false) writes "goroutine 18
// [running]:\n..." into buf, and fromStack parses the decimal ID after
// "goroutine " by hand, without allocating beyond the 32-byte buffer that
// runtime.Stack makes escape. That costs a traceback of the caller's whole
// stack (the runtime symbolizes every frame even once the buffer is full):
// about 2 µs from a shallow stack and 15-25 µs from 32 frames down.
//
// On amd64 Get reads the ID from the runtime's goroutine record instead, in
// about a nanosecond, but only after checking that it reads the right word:
//
//   - The record's address is the goroutine's g pointer, which a two-line
//     assembly function reads from thread-local storage (MOVQ (TLS)), as
//     the runtime's own assembly does through get_tls on every Go release
//     this module supports (1.24 to 1.26); the g record is an ordinary heap
//     object of at least 440 bytes on 64-bit platforms in those releases
//     (the runtime's sizeof_test).
//   - No offset is written into this package: the first call finds it. It
//     reads the first 256 bytes of the calling goroutine's record (within
//     the record on every supported release) and keeps the 8-byte-aligned
//     offsets that hold the ID fromStack parsed; then, on several new
//     goroutines, each with its own ID, it keeps only the offsets that hold
//     that goroutine's ID, read again after the goroutine's stack has been
//     grown and moved. Only if exactly one offset survives is it used; with
//     none or several (a future runtime that lays out the record
//     differently), every Get takes the portable way.
//   - The ID is written once, when the runtime makes the goroutine (or
//     reuses a record for a new one), before the goroutine runs, so the
//     goroutine's own read of it is never torn or stale.
//
// Nothing is read through go:linkname. Building with the tag goid_stack
// forces the portable way on every platform.
package goid

import (
	"runtime"
	"sync"
	"unsafe"
)

// Get returns the calling goroutine's ID, or -1 if it cannot be read (which
// no supported runtime does).
func Get() int64 {
	if off := offset(); off >= 0 {
		return *(*int64)(unsafe.Add(getg(), off))
	}
	return fromStack()
}

// fromStack returns the calling goroutine's ID parsed from the first line
// of its stack trace ("goroutine 18 [running]:"), or -1.
func fromStack() int64 {
	// "goroutine " and up to 20 digits and " ": a shorter buffer is a
	// shorter copy, not a shorter walk.
	var buf [32]byte
	return parse(buf[:runtime.Stack(buf[:], false)])
}

const prefix = "goroutine "

// parse returns the ID in a stack trace header: "goroutine ", a decimal
// ID, then a space. Anything else, or an ID that overflows int64, is -1.
func parse(b []byte) int64 {
	if len(b) <= len(prefix) || string(b[:len(prefix)]) != prefix {
		return -1
	}
	b = b[len(prefix):]
	var id int64
	for i, c := range b {
		if c == ' ' && i > 0 {
			return id
		}
		if c < '0' || c > '9' || id > (1<<63-1-int64(c-'0'))/10 {
			return -1
		}
		id = id*10 + int64(c-'0')
	}
	return -1 // no space: the header was cut short
}

// The search for the ID's offset in the goroutine record.
const (
	scanBytes = 256 // how much of the record is searched; it is larger on every supported release
	checks    = 4   // new goroutines that must agree
)

var (
	offsetOnce sync.Once
	offsetVal  uintptr
	offsetOK   bool
)

// offset returns the offset of the ID in the goroutine record, or -1 if
// Get must take the portable way.
func offset() int {
	offsetOnce.Do(func() { offsetVal, offsetOK = findOffset() })
	if !offsetOK {
		return -1
	}
	return int(offsetVal)
}

// findOffset searches the goroutine record for the ID, as the package doc
// tells. It returns false when getg is not available or the search does
// not end with exactly one offset.
func findOffset() (uintptr, bool) {
	if !haveG || getg() == nil {
		return 0, false
	}
	cands := candidates(nil)
	for range checks {
		ch := make(chan []uintptr)
		go func() {
			c := candidates(cands)
			growStack(64)
			ch <- candidates(c)
		}()
		cands = <-ch
	}
	if len(cands) != 1 {
		return 0, false
	}
	return cands[0], true
}

// candidates returns the offsets in the calling goroutine's record, among
// from (all if from is nil), that hold its ID as fromStack reads it.
func candidates(from []uintptr) []uintptr {
	id := fromStack()
	if id <= 0 {
		return nil
	}
	g := getg()
	var out []uintptr
	for off := uintptr(0); off+8 <= scanBytes; off += 8 {
		if from != nil && !contains(from, off) {
			continue
		}
		if *(*int64)(unsafe.Add(g, off)) == id {
			out = append(out, off)
		}
	}
	return out
}

func contains(s []uintptr, v uintptr) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// growStack recurses n frames deep with a large frame each, so that the
// goroutine's stack is grown (copied to a new place) at least once.
//
//go:noinline
func growStack(n int) byte {
	var pad [512]byte
	pad[n%len(pad)] = byte(n)
	if n == 0 {
		return pad[0]
	}
	return growStack(n-1) + pad[n%len(pad)]
}
