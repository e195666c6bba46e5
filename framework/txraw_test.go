package framework

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"
)

// A reply cut anywhere, or with an operation type the framework does not
// know, is an error, never a panic.
func TestDecodeMulti_CorruptReplies(t *testing.T) {
	var body []byte
	hdr := func(typ int32, done bool, code int32) {
		body = binary.BigEndian.AppendUint32(body, uint32(typ))
		if done {
			body = append(body, 1)
		} else {
			body = append(body, 0)
		}
		body = binary.BigEndian.AppendUint32(body, uint32(code))
	}
	hdr(opcCreate2, false, 0)
	body = binary.BigEndian.AppendUint32(body, 4)
	body = append(body, "/box"...)
	body = append(body, make([]byte, 68)...) // a zero stat
	hdr(opcError, false, -101)
	body = binary.BigEndian.AppendUint32(body, uint32(0xffffff9b)) // -101
	hdr(-1, true, -1)

	resp, err := decodeMulti(body)
	if err != nil || len(resp) != 2 || resp[0].String != "/box" || resp[0].Stat == nil || !errors.Is(resp[1].Error, zk.ErrNoNode) {
		t.Fatalf("decodeMulti = %+v, %v", resp, err)
	}
	for n := range len(body) - 1 {
		if _, err := decodeMulti(body[:n]); !errors.Is(err, errMultiReply) {
			t.Errorf("reply cut at %d: %v; want errMultiReply", n, err)
		}
	}
	bad := binary.BigEndian.AppendUint32(nil, 99)
	bad = append(bad, 0, 0, 0, 0, 0)
	if _, err := decodeMulti(bad); !errors.Is(err, errMultiReply) {
		t.Errorf("unknown op type: %v; want errMultiReply", err)
	}
}
