package sharedcount

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestEncodeCount_CuratorBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int32
		want []byte
	}{
		{0, []byte{0, 0, 0, 0}},
		{1, []byte{0, 0, 0, 1}},
		{-1, []byte{0xff, 0xff, 0xff, 0xff}},
		{258, []byte{0, 0, 1, 2}},
		{math.MaxInt32, []byte{0x7f, 0xff, 0xff, 0xff}},
		{math.MinInt32, []byte{0x80, 0, 0, 0}},
	} {
		if got := encodeCount(tc.n); !bytes.Equal(got, tc.want) {
			t.Errorf("encodeCount(%d) = %x, want %x", tc.n, got, tc.want)
		}
		got, err := decodeCount("/c", tc.want)
		if err != nil || got != tc.n {
			t.Errorf("decodeCount(%x) = %d, %v; want %d", tc.want, got, err, tc.n)
		}
	}
}

func TestDecodeCount_WrongLengthIsCorrupt(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 5, 8, 100} {
		b := bytes.Repeat([]byte{'x'}, n)
		_, err := decodeCount("/app/count", b)
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%d bytes: err = %v, want ErrCorrupt", n, err)
		}
		if !strings.Contains(err.Error(), "/app/count") {
			t.Errorf("%d bytes: error %q does not name the node", n, err)
		}
	}
	_, err := decodeCount("/c", nil)
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("nil: err = %v, want ErrCorrupt", err)
	}
}

func TestBytesCodec_Copies(t *testing.T) {
	src := []byte("abc")
	got, err := bytesCodec.decode("/v", src)
	if err != nil {
		t.Fatal(err)
	}
	src[0] = 'z'
	if string(got) != "abc" {
		t.Errorf("decode shares memory with its input: %q", got)
	}
	if e := bytesCodec.encode(nil); e == nil || len(e) != 0 {
		t.Errorf("encode(nil) = %#v, want empty non-nil", e)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("foo"))
	f.Add([]byte{0, 0, 0, 7})
	f.Add([]byte{0x80, 0, 0, 0})
	f.Add([]byte{1, 2, 3, 4, 5})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := decodeCount("/f", b)
		if len(b) != countLen {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%x: err = %v, want ErrCorrupt", b, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%x: %v", b, err)
		}
		if n != int32(binary.BigEndian.Uint32(b)) || !bytes.Equal(encodeCount(n), b) {
			t.Fatalf("%x: decoded %d does not round-trip", b, n)
		}
	})
}
