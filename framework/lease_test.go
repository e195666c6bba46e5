package framework

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework/internal/transport"
	"github.com/go-curator/curator/internal/chans"
)

// handClock is a transport.Clock moved by hand whose timers never fire on
// their own: it stands for a process whose timer goroutines run late (a
// GC pause, a stopped VM), so the lease's end passes on the clock before
// any Lost() can close. Its readings are one real reading (which carries
// the monotonic clock) plus the time advanced.
type handClock struct {
	mu   sync.Mutex
	base time.Time
	now  time.Duration
}

func (c *handClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base.Add(c.now)
}

func (c *handClock) set(at time.Time) {
	c.mu.Lock()
	c.now = at.Sub(c.base)
	c.mu.Unlock()
}

func (c *handClock) AfterFunc(time.Duration, func()) transport.Timer { return stopped{} }

type stopped struct{}

func (stopped) Stop() bool { return false }

// queuedConn is a net.Conn whose reads return what was queued, and whose
// writes are dropped.
type queuedConn struct {
	net.Conn // nil: only Read, Write, Close and the deadlines are used
	in       bytes.Buffer
}

func (q *queuedConn) Read(b []byte) (int, error) {
	if q.in.Len() == 0 {
		return 0, io.EOF
	}
	return q.in.Read(b)
}
func (q *queuedConn) Write(b []byte) (int, error)      { return len(b), nil }
func (q *queuedConn) Close() error                     { return nil }
func (q *queuedConn) SetReadDeadline(time.Time) error  { return nil }
func (q *queuedConn) SetWriteDeadline(time.Time) error { return nil }
func (q *queuedConn) SetDeadline(time.Time) error      { return nil }

// leasedClient returns a client whose session 0x42 was granted timeout by
// a handshake sent at clk's reading now, as go-zookeeper would have made
// it, in state Connected, with no goroutine running.
func leasedClient(t *testing.T, clk *handClock, timeout time.Duration) *Client {
	t.Helper()
	c, err := NewBuilder().ConnectString("127.0.0.1:2181").SessionTimeout(timeout).Build()
	if err != nil {
		t.Fatal(err)
	}
	w := transport.NewWire(clk)
	q := &queuedConn{}
	reply := binary.BigEndian.AppendUint32(nil, 0) // protocolVersion
	reply = binary.BigEndian.AppendUint32(reply, uint32(timeout/time.Millisecond))
	reply = binary.BigEndian.AppendUint64(reply, 0x42)
	reply = binary.BigEndian.AppendUint32(reply, 16)
	reply = append(reply, make([]byte, 16)...)
	q.in.Write(binary.BigEndian.AppendUint32(nil, uint32(len(reply))))
	q.in.Write(reply)
	h := w.Wrap(q, time.Second)
	t.Cleanup(func() { h.Close() })
	if _, err := h.Write([]byte{0, 0, 0, 4, 1, 2, 3, 4}); err != nil { // the connect request
		t.Fatal(err)
	}
	if _, err := io.ReadFull(h, make([]byte, 4+len(reply))); err != nil {
		t.Fatal(err)
	}
	if w.LeaseEnd(timeout).IsZero() {
		t.Fatal("the handshake gave no lease")
	}
	c.mu.Lock()
	c.clock, c.wire, c.started, c.sessionID, c.state = clk, w, true, 0x42, Connected
	c.connLoss, c.sessLoss = make(chan struct{}), make(chan struct{})
	c.mu.Unlock()
	return c
}

// CheckLease reads the lease at the call: once the lease's end has passed
// on the clock, it refuses under either policy, while the Lost() signals,
// which the client's timer goroutine closes, are still open. It fails on
// any code that only follows those signals.
func TestCheckLease_ReadsTheClockNotTheTimer(t *testing.T) {
	for _, p := range []ErrorPolicy{StandardErrorPolicy, SessionErrorPolicy} {
		clk := &handClock{base: time.Now()}
		c := leasedClient(t, clk, 10*time.Second)
		end := c.wire.LeaseEnd(c.sessionTimeout)
		clk.set(end.Add(-time.Millisecond))
		if err := c.CheckLease(p); err != nil {
			t.Fatalf("policy %d, 1 ms before the lease's end: CheckLease = %v, want nil", p, err)
		}
		clk.set(end)
		err := c.CheckLease(p)
		if !errors.Is(err, ErrSessionLost) {
			t.Fatalf("policy %d, at the lease's end: CheckLease = %v, want ErrSessionLost", p, err)
		}
		if chans.IsClosed(c.LossSignal(p)) {
			t.Fatalf("policy %d: the loss signal closed: the test needs it open (a late timer)", p)
		}
		clk.set(end.Add(time.Hour))
		if err := c.CheckLease(p); !errors.Is(err, ErrSessionLost) {
			t.Fatalf("policy %d, an hour past the lease's end: CheckLease = %v, want ErrSessionLost", p, err)
		}
	}
}

// CheckLease follows the states as the error policies do, and refuses a
// client that is closed, unstarted or nil.
func TestCheckLease_States(t *testing.T) {
	tests := []struct {
		name  string
		state ConnectionState
		p     ErrorPolicy
		want  error // nil: no error
	}{
		{"connected, standard", Connected, StandardErrorPolicy, nil},
		{"reconnected, session", Reconnected, SessionErrorPolicy, nil},
		{"suspended, standard", Suspended, StandardErrorPolicy, ErrSessionLost},
		{"suspended, session", Suspended, SessionErrorPolicy, nil},
		{"lost, standard", Lost, StandardErrorPolicy, ErrSessionLost},
		{"lost, session", Lost, SessionErrorPolicy, ErrSessionLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &handClock{base: time.Now()}
			c := leasedClient(t, clk, 10*time.Second)
			c.mu.Lock()
			c.state = tt.state
			c.mu.Unlock()
			err := c.CheckLease(tt.p)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("CheckLease = %v, want %v", err, tt.want)
			}
		})
	}
	t.Run("closed", func(t *testing.T) {
		c := leasedClient(t, &handClock{base: time.Now()}, 10*time.Second)
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		if err := c.CheckLease(SessionErrorPolicy); !errors.Is(err, ErrClosed) {
			t.Fatalf("CheckLease = %v, want ErrClosed", err)
		}
	})
	t.Run("not started", func(t *testing.T) {
		c, err := NewBuilder().ConnectString("127.0.0.1:2181").Build()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.CheckLease(SessionErrorPolicy); !errors.Is(err, ErrSessionLost) {
			t.Fatalf("CheckLease = %v, want ErrSessionLost", err)
		}
	})
	t.Run("nil", func(t *testing.T) {
		var c *Client
		if err := c.CheckLease(SessionErrorPolicy); !errors.Is(err, ErrNilClient) {
			t.Fatalf("CheckLease = %v, want ErrNilClient", err)
		}
	})
}
