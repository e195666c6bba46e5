package zktest

import "encoding/binary"

// framer follows the frames of one direction of a ZooKeeper client
// connection. Each frame is a 4-byte big-endian length and then that many
// bytes. The first frame is the connect handshake (ConnectRequest or
// ConnectResponse), which has no header; every later frame starts with a
// header whose first field is the xid.
//
// A framer passes bytes through in order, holding back only the length and
// header of the current frame until they are all in, so that its caller can
// see the header before any byte of the frame goes on. Frames may be split
// across chunks, and a chunk may hold several frames.
//
// Traffic that is not framed, such as a four-letter word and its answer,
// passes unharmed: its first four bytes read as the length of a handshake
// frame that never ends, and a handshake is only counted through.
//
// The zero framer is not ready; set peek.
type framer struct {
	peek      int    // header bytes shown: 8 for requests (xid, opcode), 4 for replies (xid)
	handshook bool   // the handshake frame has been passed
	head      []byte // the current frame's length and header, held back
	rest      int64  // bytes of the current frame to pass after head
}

// need returns how many bytes head holds once the current frame's length
// and header are in: the length alone for the handshake, and for a frame
// shorter than a header, the whole frame.
func (f *framer) need() int {
	if !f.handshook || len(f.head) < 4 {
		return 4
	}
	size := binary.BigEndian.Uint32(f.head)
	return 4 + int(min(size, uint32(f.peek)))
}

// scan appends to out the bytes of chunk that may go on, in order, and
// returns it. For each frame after the handshake that is at least peek bytes
// long, scan calls keep with the frame's first peek bytes (keep must not
// retain them) before it passes any byte of the frame. If keep returns false
// the frame is dropped: scan returns at once with dropped true; out then ends
// with the frames before it, and the rest of chunk is not read. The framer is
// then of no further use.
func (f *framer) scan(out, chunk []byte, keep func(header []byte) bool) (_ []byte, dropped bool) {
	for {
		if f.rest > 0 {
			if len(chunk) == 0 {
				return out, false
			}
			n := int(min(f.rest, int64(len(chunk))))
			out = append(out, chunk[:n]...)
			chunk, f.rest = chunk[n:], f.rest-int64(n)
			continue
		}
		if need := f.need(); len(f.head) < need {
			if len(chunk) == 0 {
				return out, false
			}
			n := min(need-len(f.head), len(chunk))
			f.head = append(f.head, chunk[:n]...)
			chunk = chunk[n:]
			continue
		}
		// The length and header are in.
		size := int64(binary.BigEndian.Uint32(f.head))
		if f.handshook && len(f.head)-4 == f.peek && !keep(f.head[4:]) {
			return out, true
		}
		out = append(out, f.head...)
		f.rest = size - int64(len(f.head)-4)
		f.head = f.head[:0]
		f.handshook = true
	}
}

// flush appends to out what is held back of a frame whose length or header
// never came in full, for when its connection ends, and returns it.
func (f *framer) flush(out []byte) []byte {
	out = append(out, f.head...)
	f.head = f.head[:0]
	return out
}

// xidOf returns the xid at the start of a header.
func xidOf(header []byte) int32 { return int32(binary.BigEndian.Uint32(header)) }

// opcodeOf returns the opcode of a request header: the field after the xid.
func opcodeOf(header []byte) int32 { return int32(binary.BigEndian.Uint32(header[4:])) }
