package queue

import (
	"encoding/binary"
	"fmt"
)

// Curator's ItemSerializer: a 4-byte big-endian version, then for each item
// the byte 0x01, its length as a 4-byte big-endian int and its bytes, then
// the byte 0x02.
const (
	codecVersion = 0x00010001
	opItem       = 0x01
	opEOF        = 0x02
)

// encodedLen returns the length of the encoding of items.
func encodedLen(items [][]byte) int {
	n := 4 + 1
	for _, it := range items {
		n += 5 + len(it)
	}
	return n
}

// encode returns Curator's encoding of items.
func encode(items [][]byte) []byte {
	b := make([]byte, 0, encodedLen(items))
	b = binary.BigEndian.AppendUint32(b, codecVersion)
	for _, it := range items {
		b = append(b, opItem)
		b = binary.BigEndian.AppendUint32(b, uint32(len(it)))
		b = append(b, it...)
	}
	return append(b, opEOF)
}

// decode parses Curator's encoding. Like Curator it ignores bytes after the
// end mark; unlike Curator it never allocates more than the input holds.
func decode(b []byte) ([][]byte, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("%d bytes: too short for the version", len(b))
	}
	if v := binary.BigEndian.Uint32(b); v != codecVersion {
		return nil, fmt.Errorf("version %#08x, want %#08x", v, codecVersion)
	}
	var items [][]byte
	for i := 4; ; {
		if i >= len(b) {
			return nil, fmt.Errorf("no end mark after %d items", len(items))
		}
		switch b[i] {
		case opEOF:
			return items, nil
		case opItem:
		default:
			return nil, fmt.Errorf("opcode %#02x at byte %d, want %#02x or %#02x", b[i], i, opItem, opEOF)
		}
		if len(b)-i-1 < 4 {
			return nil, fmt.Errorf("item %d: truncated length", len(items))
		}
		n := int64(int32(binary.BigEndian.Uint32(b[i+1:])))
		i += 5
		if n < 0 || n > int64(len(b)-i) {
			return nil, fmt.Errorf("item %d: length %d with %d bytes left", len(items), n, len(b)-i)
		}
		items = append(items, b[i:i+int(n):i+int(n)])
		i += int(n)
	}
}
