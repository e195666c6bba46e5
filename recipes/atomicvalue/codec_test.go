package atomicvalue

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestIntCodec_CuratorBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int32
		want []byte
	}{
		{0, []byte{0, 0, 0, 0}},
		{1, []byte{0, 0, 0, 1}},
		{-1, []byte{0xff, 0xff, 0xff, 0xff}},
		{1 << 20, []byte{0, 0x10, 0, 0}},
		{math.MaxInt32, []byte{0x7f, 0xff, 0xff, 0xff}},
		{math.MinInt32, []byte{0x80, 0, 0, 0}},
	} {
		if got := encodeInt(tc.n); !bytes.Equal(got, tc.want) {
			t.Errorf("encodeInt(%d) = %x, want %x", tc.n, got, tc.want)
		}
		if got, err := decodeInt("/c", tc.want); err != nil || got != tc.n {
			t.Errorf("decodeInt(%x) = %d, %v; want %d", tc.want, got, err, tc.n)
		}
	}
	for _, b := range [][]byte{nil, {}} {
		if v, err := decodeInt("/c", b); v != 0 || err != nil {
			t.Errorf("decodeInt(%#v) = %d, %v; want 0", b, v, err)
		}
	}
	for _, n := range []int{1, 2, 3, 5, 8, 100} {
		if _, err := decodeInt("/c", make([]byte, n)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%d bytes: err = %v, want ErrCorrupt", n, err)
		}
	}
	_, err := decodeInt("/c", []byte("foo"))
	if want := "atomicvalue: corrupt data in /c: 3 bytes [0x66 0x6f 0x6f], want 4"; err == nil || err.Error() != want {
		t.Errorf("foo: err = %v, want %q", err, want)
	}
}

func TestByteCodec_NilAndEmptyEqual(t *testing.T) {
	if !byteCodec.Equal(nil, []byte{}) || byteCodec.Equal(nil, []byte{0}) {
		t.Error("byteCodec.Equal: nil and empty must match, a zero byte must not")
	}
}
