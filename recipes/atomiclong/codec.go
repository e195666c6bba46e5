package atomiclong

import (
	"encoding/binary"
	"fmt"

	"github.com/go-curator/curator/internal/recipe"
)

// valueLen is the length of an encoded value: Curator's 8-byte long.
const valueLen = 8

// encode returns n as Curator writes it: 8 bytes, big-endian.
func encode(n int64) []byte {
	b := make([]byte, valueLen)
	binary.BigEndian.PutUint64(b, uint64(n))
	return b
}

// decode reads a value as Curator does: no data is 0, 8 bytes are a
// big-endian int64. Any other length is an error wrapping ErrCorrupt that
// names path. (Curator reads the first 8 of longer data; we call it
// corrupt.)
func decode(path string, b []byte) (int64, error) {
	switch len(b) {
	case 0:
		return 0, nil
	case valueLen:
		return int64(binary.BigEndian.Uint64(b)), nil
	}
	return 0, fmt.Errorf("%w in %s: %d bytes %s, want %d", ErrCorrupt, path, len(b), recipe.Hex(b), valueLen)
}
