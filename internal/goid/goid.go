// Package goid reads the ID of the calling goroutine, which the reentrant
// mutex uses as its owner key, as Curator uses the current Thread.
package goid

import (
	"bytes"
	"runtime"
	"strconv"
)

var prefix = []byte("goroutine ")

// Get returns the calling goroutine's ID, parsed from the first line of
// its stack trace ("goroutine 18 [running]:").
func Get() int64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, prefix)
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return -1
	}
	return id
}
