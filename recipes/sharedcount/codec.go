package sharedcount

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
)

// Errors returned by this package. Match them with errors.Is.
var (
	ErrCorrupt = errors.New("sharedcount: corrupt data")
	// ErrInvalidArgument reports a bad argument: a nil client, an invalid
	// path or the root, a nil ctx, a nil or zero Count or Value (which
	// also matches ErrNotStarted: it was never started). The error also
	// matches the framework's specific sentinel (framework.ErrNilClient,
	// framework.ErrInvalidPath or framework.ErrInvalidArgument).
	ErrInvalidArgument = errors.New("sharedcount: invalid argument")
	ErrNotStarted      = errors.New("sharedcount: not started")
	ErrAlreadyStarted  = errors.New("sharedcount: already started")
	ErrClosed          = errors.New("sharedcount: closed")
	ErrVersionOverflow = errors.New("sharedcount: the node's version overflowed to -1, which ZooKeeper reads as any version")
	// ErrIndeterminate reports a write whose outcome is unknown: the
	// connection was lost before its reply came, so the server may or may
	// not have applied it. It is framework.ErrIndeterminate itself, so
	// either name matches. See the package doc: read the value and decide;
	// never repeat a change blindly.
	ErrIndeterminate = framework.ErrIndeterminate
)

// countLen is the length of an encoded count: Curator's 4-byte int.
const countLen = 4

// encodeCount returns n as Curator writes it: 4 bytes, big-endian.
func encodeCount(n int32) []byte {
	b := make([]byte, countLen)
	binary.BigEndian.PutUint32(b, uint32(n))
	return b
}

// decodeCount reads a count written by encodeCount (or by Curator). Data of
// any other length is an error wrapping ErrCorrupt that names path.
func decodeCount(path string, b []byte) (int32, error) {
	if len(b) != countLen {
		return 0, corrupt(path, b, countLen)
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

// corrupt returns an ErrCorrupt naming the node and showing its data.
func corrupt(path string, b []byte, want int) error {
	return fmt.Errorf("%w in %s: %d bytes %s, want %d", ErrCorrupt, path, len(b), recipe.Hex(b), want)
}

// codec turns a T into node data and back.
type codec[T int32 | []byte] struct {
	encode func(T) []byte
	decode func(path string, b []byte) (T, error)
	clone  func(T) T // a copy the caller may keep
}

var countCodec = codec[int32]{
	encode: encodeCount,
	decode: decodeCount,
	clone:  func(n int32) int32 { return n },
}

var bytesCodec = codec[[]byte]{
	encode: cloneBytes,
	decode: func(_ string, b []byte) ([]byte, error) { return cloneBytes(b), nil },
	clone:  cloneBytes,
}

// cloneBytes copies b; a nil or empty b gives an empty, non-nil slice.
func cloneBytes(b []byte) []byte { return append([]byte{}, b...) }
