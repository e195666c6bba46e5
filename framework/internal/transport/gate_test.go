package transport

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// gateServer answers a connect request on conn, then every request it
// reads but setWatches with a reply of the same xid, until conn closes
// (net.Pipe does not buffer: a reply nobody reads would block the next
// request's write).
func gateServer(conn net.Conn) {
	defer conn.Close()
	if _, err := readFrame(conn); err != nil {
		return
	}
	resp := binary.BigEndian.AppendUint32(nil, 0)    // protocolVersion
	resp = binary.BigEndian.AppendUint32(resp, 4000) // timeOut
	resp = binary.BigEndian.AppendUint64(resp, 0x1234)
	resp = binary.BigEndian.AppendUint32(resp, 16)
	resp = append(resp, make([]byte, 16)...)
	if writeFrame(conn, resp) != nil {
		return
	}
	for {
		req, err := readFrame(conn)
		if err != nil || len(req) < 8 {
			return
		}
		if int32(binary.BigEndian.Uint32(req[4:8])) == opSetWatches {
			continue
		}
		reply := append([]byte(nil), req[:4]...)        // xid
		reply = binary.BigEndian.AppendUint64(reply, 7) // zxid
		reply = binary.BigEndian.AppendUint32(reply, 0) // err
		reply = append(reply, make([]byte, 4)...)       // a body
		if writeFrame(conn, reply) != nil {
			return
		}
	}
}

func writeFrame(w io.Writer, b []byte) error {
	_, err := w.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...))
	return err
}

// request is a request frame with xid and opcode, as go-zookeeper writes it.
func request(xid, op int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, 8)
	b = binary.BigEndian.AppendUint32(b, uint32(xid))
	return binary.BigEndian.AppendUint32(b, uint32(op))
}

// gateConn is a wire connection to a gateServer, its handshake done, on a
// wire with watches outstanding and owed setWatches requests of earlier
// connections.
func gateConn(t *testing.T, owed int64) *Conn {
	t.Helper()
	client, server := net.Pipe()
	go gateServer(server)
	w := NewWire(nil)
	w.watches.Store(2)
	w.owed.Store(owed)
	h := w.Wrap(client, time.Second)
	t.Cleanup(func() { h.Close() })
	if _, err := h.Write([]byte{0, 0, 0, 4, 1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := readFrame(h); err != nil {
		t.Fatal(err)
	}
	return h
}

// readReply reads one frame from h on a goroutine of its own.
func readReply(h *Conn) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := readFrame(h)
		done <- err
	}()
	return done
}

func held(done <-chan error) bool {
	select {
	case <-done:
		return false
	case <-time.After(100 * time.Millisecond):
		return true
	}
}

// A setWatches request queued before an earlier connection broke is
// written on the next one, ahead of that connection's own: the gate waits
// for both before it lets a reply through (go-zookeeper reads lastZxid for
// its own request, and its receive loop writes it for the reply).
func TestWireGate_WaitsForEverySetWatchesOwed(t *testing.T) {
	h := gateConn(t, 1)
	if _, err := h.Write(request(1, 3)); err != nil { // an exists
		t.Fatal(err)
	}
	done := readReply(h)
	if !held(done) {
		t.Fatal("a reply was read before any setWatches request was written")
	}
	if _, err := h.Write(request(2, opSetWatches)); err != nil { // the earlier connection's
		t.Fatal(err)
	}
	if !held(done) {
		t.Fatal("a reply was read after the owed setWatches request, before this connection's own")
	}
	if _, err := h.Write(request(3, opSetWatches)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the reply after both setWatches requests: %v", err)
	}
	if got := h.w.owed.Load(); got != 0 {
		t.Errorf("owed after the gate opened = %d, want 0", got)
	}
}

// A connection that go-zookeeper closes while the gate is shut delivers
// nothing more: its setWatches may never be written there.
func TestWireGate_ClosedConnectionDeliversNothing(t *testing.T) {
	h := gateConn(t, 0)
	if _, err := h.Write(request(1, 3)); err != nil {
		t.Fatal(err)
	}
	done := readReply(h)
	if !held(done) {
		t.Fatal("a reply was read before the setWatches request was written")
	}
	h.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on a closed connection with the gate shut: %v, want net.ErrClosed", err)
	}
	if _, err := h.Read(make([]byte, 4)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a later read: %v, want net.ErrClosed", err)
	}
	// The setWatches request still owed goes to the next connection.
	if got := h.w.owed.Load(); got != 1 {
		t.Errorf("owed = %d, want 1", got)
	}
}
