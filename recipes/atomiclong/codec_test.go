package atomiclong

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestEncode_CuratorBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want []byte
	}{
		{0, []byte{0, 0, 0, 0, 0, 0, 0, 0}},
		{1, []byte{0, 0, 0, 0, 0, 0, 0, 1}},
		{-1, bytes.Repeat([]byte{0xff}, 8)},
		{1 << 40, []byte{0, 0, 1, 0, 0, 0, 0, 0}},
		{math.MaxInt64, []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{math.MinInt64, []byte{0x80, 0, 0, 0, 0, 0, 0, 0}},
	} {
		if got := encode(tc.n); !bytes.Equal(got, tc.want) {
			t.Errorf("encode(%d) = %x, want %x", tc.n, got, tc.want)
		}
		if got, err := decode("/c", tc.want); err != nil || got != tc.n {
			t.Errorf("decode(%x) = %d, %v; want %d", tc.want, got, err, tc.n)
		}
	}
}

func TestDecode_EmptyIsZero(t *testing.T) {
	for _, b := range [][]byte{nil, {}} {
		if v, err := decode("/c", b); v != 0 || err != nil {
			t.Errorf("decode(%#v) = %d, %v; want 0, nil", b, v, err)
		}
	}
}

func TestDecode_WrongLengthIsCorrupt(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 9, 16, 100} {
		_, err := decode("/shop/orders", bytes.Repeat([]byte{'x'}, n))
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%d bytes: err = %v, want ErrCorrupt", n, err)
		}
		if !strings.Contains(err.Error(), "/shop/orders") {
			t.Errorf("%d bytes: error %q does not name the node", n, err)
		}
	}
	_, err := decode("/c", []byte("foo"))
	if want := "atomiclong: corrupt data in /c: 3 bytes [0x66 0x6f 0x6f], want 8"; err == nil || err.Error() != want {
		t.Errorf("foo: err = %v, want %q", err, want)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("foo"))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 7})
	f.Add([]byte{0x80, 0, 0, 0, 0, 0, 0, 0})
	f.Add(make([]byte, 9))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decode("/f", b)
		switch len(b) {
		case 0:
			if v != 0 || err != nil {
				t.Fatalf("empty: %d, %v", v, err)
			}
		case valueLen:
			if err != nil || v != int64(binary.BigEndian.Uint64(b)) || !bytes.Equal(encode(v), b) {
				t.Fatalf("%x: %d, %v does not round-trip", b, v, err)
			}
		default:
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%x: err = %v, want ErrCorrupt", b, err)
			}
		}
	})
}
