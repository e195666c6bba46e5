package zktest

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
)

// frame returns a frame: body's length, big-endian, then body.
func frame(body ...[]byte) []byte {
	b := bytes.Join(body, nil)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// be32 and be64 encode header fields.
func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// reply returns a reply frame: xid, zxid, err, then a payload.
func reply(xid int32, payload string) []byte {
	return frame(be32(xid), be64(7), be32(0), []byte(payload))
}

// request returns a request frame: xid, opcode, then a payload.
func request(xid, opcode int32, payload string) []byte {
	return frame(be32(xid), be32(opcode), []byte(payload))
}

// feed scans stream through a new framer in chunks of size n (all at once
// when n is 0), and returns what passed, the headers it was shown, and
// whether a frame was dropped. drop names the xid to drop.
func feed(peek int, stream []byte, n int, drop int32) (out []byte, headers [][]byte, dropped bool) {
	f := framer{peek: peek}
	keep := func(h []byte) bool {
		headers = append(headers, bytes.Clone(h))
		return xidOf(h) != drop
	}
	if n == 0 {
		n = len(stream)
	}
	for len(stream) > 0 && !dropped {
		chunk := stream[:min(n, len(stream))]
		stream = stream[len(chunk):]
		out, dropped = f.scan(out, chunk, keep)
	}
	if !dropped {
		out = f.flush(out)
	}
	return out, headers, dropped
}

func TestFramer_SplitAndMergedFrames(t *testing.T) {
	handshake := frame(bytes.Repeat([]byte{9}, 36))
	replies := [][]byte{reply(-2, ""), reply(1, "one"), reply(-1, "event"), reply(2, "two")}
	stream := bytes.Join(append([][]byte{handshake}, replies...), nil)
	for _, n := range []int{0, 1, 3, 5, 16, 17} {
		out, headers, dropped := feed(4, stream, n, 99)
		if dropped || !bytes.Equal(out, stream) {
			t.Errorf("chunks of %d: passed %d of %d bytes, dropped %v", n, len(out), len(stream), dropped)
		}
		var xids []int32
		for _, h := range headers {
			xids = append(xids, xidOf(h))
		}
		if want := []int32{-2, 1, -1, 2}; !slices.Equal(xids, want) {
			t.Errorf("chunks of %d: shown xids %v, want %v (the handshake has no header)", n, xids, want)
		}
	}
}

func TestFramer_DropsAFrameAndWhatFollows(t *testing.T) {
	before := bytes.Join([][]byte{frame([]byte("handshake-reply")), reply(1, "one"), reply(-2, "")}, nil)
	stream := bytes.Join([][]byte{before, reply(2, "two"), reply(3, "three")}, nil)
	for _, n := range []int{0, 1, 7} {
		out, _, dropped := feed(4, stream, n, 2)
		if !dropped || !bytes.Equal(out, before) {
			t.Errorf("chunks of %d: dropped %v, passed %q; want the frames before xid 2", n, dropped, out)
		}
	}
}

func TestFramer_ShowsRequestOpcodes(t *testing.T) {
	stream := bytes.Join([][]byte{
		frame([]byte("connect-request")),
		request(1, OpCreate, "/a"),
		request(-2, OpPing, ""),
		request(2, OpSetData, "/a"),
		frame([]byte{1, 2}), // shorter than a header: passed, not shown
		request(3, OpMulti, ""),
	}, nil)
	for _, n := range []int{0, 1, 11} {
		out, headers, _ := feed(8, stream, n, 99)
		if !bytes.Equal(out, stream) {
			t.Errorf("chunks of %d: passed %d of %d bytes", n, len(out), len(stream))
		}
		var got [][2]int32
		for _, h := range headers {
			got = append(got, [2]int32{xidOf(h), opcodeOf(h)})
		}
		want := [][2]int32{{1, OpCreate}, {-2, OpPing}, {2, OpSetData}, {3, OpMulti}}
		if !slices.Equal(got, want) {
			t.Errorf("chunks of %d: shown %v, want %v", n, got, want)
		}
	}
}

func TestFramer_PassesUnframedTraffic(t *testing.T) {
	for _, s := range []string{"srvr", "ru", "Zookeeper version: 3.8.4\nMode: standalone\n"} {
		for _, n := range []int{0, 1} {
			out, headers, dropped := feed(4, []byte(s), n, 0)
			if string(out) != s || len(headers) != 0 || dropped {
				t.Errorf("%q in chunks of %d: passed %q, shown %d headers, dropped %v", s, n, out, len(headers), dropped)
			}
		}
	}
}
