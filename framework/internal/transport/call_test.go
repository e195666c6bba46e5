package transport

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"testing"
	"time"
)

// callServer is the server end of a net.Pipe: it answers the connect
// request, then hands the test every request it reads.
type callServer struct {
	conn net.Conn
	reqs chan []byte
}

func newCallConn(t *testing.T, clk Clock) (*Wire, *Conn, *callServer, <-chan []byte) {
	t.Helper()
	client, server := net.Pipe()
	s := &callServer{conn: server, reqs: make(chan []byte, 16)}
	go func() {
		defer close(s.reqs)
		if _, err := readFrame(server); err != nil {
			return
		}
		if _, err := server.Write(handshakeReply(4*time.Second, 0x42)); err != nil {
			return
		}
		for {
			f, err := readFrame(server)
			if err != nil {
				return
			}
			if int32(binary.BigEndian.Uint32(f[4:8])) == opPing {
				continue // the Conn's own, left unanswered
			}
			s.reqs <- f
		}
	}()
	w := NewWire(clk)
	h := w.Wrap(client, time.Second)
	t.Cleanup(func() { h.Close(); server.Close() })
	if _, _, err := w.Call(t.Context(), OpAddWatch, nil); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("Call before the handshake: %v, want ErrNotConnected", err)
	}
	if _, err := h.Write([]byte{0, 0, 0, 4, 1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := readFrame(h); err != nil {
		t.Fatal(err)
	}
	// go-zookeeper's receive loop: every frame it reads.
	seen := make(chan []byte, 16)
	go func() {
		defer close(seen)
		for {
			f, err := readFrame(h)
			if err != nil {
				return
			}
			seen <- f
		}
	}()
	return w, h, s, seen
}

// replyFrame is a reply for xid with code and body.
func replyFrame(xid int32, zxid int64, code int32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(xid))
	b = binary.BigEndian.AppendUint64(b, uint64(zxid))
	b = binary.BigEndian.AppendUint32(b, uint32(code))
	b = append(b, body...)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

func TestCall_RepliesAreSwallowed(t *testing.T) {
	w, h, s, seen := newCallConn(t, nil)
	type result struct {
		code int32
		body []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		code, body, err := w.Call(t.Context(), OpAddWatch, AddWatchRequest("/a", AddWatchPersistentRecursive))
		done <- result{code, body, err}
	}()
	req := <-s.reqs
	xid := int32(binary.BigEndian.Uint32(req[0:4]))
	if !isCallXid(xid) || xid >= -8 {
		t.Fatalf("injected xid %d is not in the injected range", xid)
	}
	if op := int32(binary.BigEndian.Uint32(req[4:8])); op != OpAddWatch {
		t.Fatalf("opcode %d, want %d", op, OpAddWatch)
	}
	want := []byte{0, 0, 0, 2, '/', 'a', 0, 0, 0, 1}
	if !bytes.Equal(req[8:], want) {
		t.Fatalf("body % x, want % x", req[8:], want)
	}
	// go-zookeeper's own request, answered after the injected one.
	if _, err := h.Write(request(5, 3)); err != nil {
		t.Fatal(err)
	}
	<-s.reqs
	s.conn.Write(replyFrame(xid, 99, CodeOK, []byte{0, 0, 0, 0}))
	s.conn.Write(replyFrame(5, 100, CodeOK, nil))
	r := <-done
	if r.err != nil || r.code != 0 || !bytes.Equal(r.body, []byte{0, 0, 0, 0}) {
		t.Fatalf("Call = %d, % x, %v", r.code, r.body, r.err)
	}
	f := <-seen
	if got := int32(binary.BigEndian.Uint32(f[0:4])); got != 5 {
		t.Fatalf("go-zookeeper read the reply with xid %d, want only its own (5)", got)
	}
	if w.LastZxid() != 100 {
		t.Errorf("LastZxid = %d, want 100", w.LastZxid())
	}
}

func TestCall_ErrorCodeAndCancel(t *testing.T) {
	w, _, s, seen := newCallConn(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, _, err := w.Call(ctx, OpRemoveWatches, RemoveWatchesRequest("/a", WatcherAny))
		done <- err
	}()
	req := <-s.reqs
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call with its ctx ended: %v", err)
	}
	// The late reply is swallowed too; the next Call gets its own.
	s.conn.Write(replyFrame(int32(binary.BigEndian.Uint32(req[0:4])), 1, CodeOK, nil))
	go func() {
		code, _, err := w.Call(t.Context(), OpRemoveWatches, RemoveWatchesRequest("/b", WatcherAny))
		if err == nil && code != CodeNoWatcher {
			err = errors.New("wrong code")
		}
		done <- err
	}()
	req = <-s.reqs
	if bytes.Equal(req[0:4], []byte{0, 0, 0, 0}) {
		t.Fatal("xid 0")
	}
	s.conn.Write(replyFrame(int32(binary.BigEndian.Uint32(req[0:4])), 2, CodeNoWatcher, nil))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case f := <-seen:
		t.Fatalf("go-zookeeper read a frame: % x", f)
	default:
	}
}

func TestCall_ConnectionCloses(t *testing.T) {
	w, h, s, _ := newCallConn(t, nil)
	done := make(chan error, 1)
	go func() {
		_, _, err := w.Call(t.Context(), OpAddWatch, AddWatchRequest("/", AddWatchPersistent))
		done <- err
	}()
	<-s.reqs
	h.Close()
	if err := <-done; !errors.Is(err, ErrConnClosed) {
		t.Fatalf("Call on a closed connection: %v, want ErrConnClosed", err)
	}
	if _, _, err := w.Call(t.Context(), OpAddWatch, nil); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("Call after the close: %v, want ErrNotConnected", err)
	}
}

// An injected request counts in the lease as go-zookeeper's do.
func TestCall_CountsInTheLease(t *testing.T) {
	clk := newFakeClock()
	w, _, s, _ := newCallConn(t, clk)
	clk.set(time.Second)
	done := make(chan error, 1)
	go func() {
		_, _, err := w.Call(t.Context(), OpAddWatch, AddWatchRequest("/x", AddWatchPersistent))
		done <- err
	}()
	req := <-s.reqs
	clk.set(1500 * time.Millisecond)
	s.conn.Write(replyFrame(int32(binary.BigEndian.Uint32(req[0:4])), 3, CodeOK, nil))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := w.Contact(); !got.Equal(clk.at(time.Second)) {
		t.Fatalf("contact %v after the injected request's reply, want its send time %v", got.Sub(clk.at(0)), time.Second)
	}
}

func TestEncoders(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want []byte
	}{
		{"addWatch", AddWatchRequest("/p", AddWatchPersistent), []byte{0, 0, 0, 2, '/', 'p', 0, 0, 0, 0}},
		{"removeWatches", RemoveWatchesRequest("/", WatcherData), []byte{0, 0, 0, 1, '/', 0, 0, 0, 2}},
		{"setWatches2", SetWatches2Request(0x0102, nil, nil, nil, []string{"/a"}, []string{"/b", "/c"}), []byte{
			0, 0, 0, 0, 0, 0, 1, 2,
			0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			0, 0, 0, 1, 0, 0, 0, 2, '/', 'a',
			0, 0, 0, 2, 0, 0, 0, 2, '/', 'b', 0, 0, 0, 2, '/', 'c',
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Equal(tt.got, tt.want) {
				t.Errorf("% x, want % x", tt.got, tt.want)
			}
		})
	}
}

// CallSession writes only on a connection of the session it is given.
func TestCall_SessionBound(t *testing.T) {
	w, _, s, _ := newCallConn(t, nil)
	for _, session := range []int64{0, 0x43} {
		if _, _, err := w.CallSession(t.Context(), session, OpAddWatch, nil); !errors.Is(err, ErrOtherSession) {
			t.Fatalf("CallSession(%#x) on session 0x42: %v, want ErrOtherSession", session, err)
		}
	}
	select {
	case f := <-s.reqs:
		t.Fatalf("a refused CallSession wrote % x", f)
	default:
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := w.CallSession(t.Context(), 0x42, OpAddWatch, AddWatchRequest("/a", AddWatchPersistent))
		done <- err
	}()
	req := <-s.reqs
	s.conn.Write(replyFrame(int32(binary.BigEndian.Uint32(req[0:4])), 7, CodeOK, nil))
	if err := <-done; err != nil {
		t.Fatalf("CallSession on its own session: %v", err)
	}
}
