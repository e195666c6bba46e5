package transport

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a Clock moved by hand. Its readings are one real reading
// (which carries Go's monotonic clock) plus the time advanced.
type fakeClock struct {
	mu     sync.Mutex
	base   time.Time
	now    time.Duration
	timers []*fakeTimer
}

type fakeTimer struct {
	c    *fakeClock
	at   time.Duration
	f    func()
	done bool
}

func newFakeClock() *fakeClock { return &fakeClock{base: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base.Add(c.now)
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now + d, f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// set moves the clock to d after its base, running the timers due.
func (c *fakeClock) set(d time.Duration) {
	c.mu.Lock()
	c.now = d
	var due []func()
	for _, t := range c.timers {
		if !t.done && t.at <= d {
			t.done = true
			due = append(due, t.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// at returns the clock's reading d after its base.
func (c *fakeClock) at(d time.Duration) time.Time { return c.base.Add(d) }

// handshakeReply is a ConnectResponse frame granting timeout to session.
func handshakeReply(timeout time.Duration, session int64) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0) // protocolVersion
	b = binary.BigEndian.AppendUint32(b, uint32(timeout/time.Millisecond))
	b = binary.BigEndian.AppendUint64(b, uint64(session))
	b = binary.BigEndian.AppendUint32(b, 16)
	b = append(b, make([]byte, 16)...)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// reply is a reply frame for xid with a body of n bytes.
func reply(xid int32, n int) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(xid))
	b = binary.BigEndian.AppendUint64(b, 7) // zxid
	b = binary.BigEndian.AppendUint32(b, 0) // err
	b = append(b, make([]byte, n)...)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// scripted is a net.Conn whose reads return what the test queued, and
// whose writes are kept.
type scripted struct {
	net.Conn // nil: only Read, Write, Close and the deadlines are used
	mu       sync.Mutex
	in       bytes.Buffer
	out      bytes.Buffer
	more     chan struct{}
	closed   bool
}

func newScripted() *scripted { return &scripted{more: make(chan struct{}, 1)} }

func (s *scripted) queue(b []byte) {
	s.mu.Lock()
	s.in.Write(b)
	s.mu.Unlock()
	select {
	case s.more <- struct{}{}:
	default:
	}
}

func (s *scripted) Read(b []byte) (int, error) {
	for {
		s.mu.Lock()
		if s.in.Len() > 0 {
			n, _ := s.in.Read(b)
			s.mu.Unlock()
			return n, nil
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return 0, io.EOF
		}
		<-s.more
	}
}

func (s *scripted) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(b)
}

func (s *scripted) written() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.out.Bytes()...)
}

func (s *scripted) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.more <- struct{}{}:
	default:
	}
	return nil
}

func (s *scripted) SetReadDeadline(time.Time) error  { return nil }
func (s *scripted) SetWriteDeadline(time.Time) error { return nil }
func (s *scripted) SetDeadline(time.Time) error      { return nil }

// session is a Conn of a new wire on clk, its handshake sent at 0 and
// answered with timeout, as go-zookeeper would do it.
func session(t *testing.T, clk Clock, timeout time.Duration) (*Wire, *Conn, *scripted) {
	t.Helper()
	w := NewWire(clk)
	s := newScripted()
	h := w.Wrap(s, time.Second)
	t.Cleanup(func() { h.Close() })
	if _, err := h.Write([]byte{0, 0, 0, 4, 1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	s.queue(handshakeReply(timeout, 0x42))
	if _, err := readFrame(h); err != nil {
		t.Fatal(err)
	}
	return w, h, s
}

// call writes a request with xid at send, and has its reply read at recv.
func call(t *testing.T, clk *fakeClock, h *Conn, s *scripted, xid int32, send, recv time.Duration) {
	t.Helper()
	clk.set(send)
	if _, err := h.Write(request(xid, 3)); err != nil {
		t.Fatal(err)
	}
	clk.set(recv)
	s.queue(reply(xid, 4))
	if _, err := readFrame(h); err != nil {
		t.Fatal(err)
	}
}

// The lease is timed on the monotonic clock: every reading it keeps
// carries Go's monotonic clock reading, so a wall clock stepped back or
// forward (an NTP step, a VM resumed) neither delays nor hastens Lost.
// (3a3bc55 kept the contact time as UnixNano and rebuilt it with
// time.Unix, which has no monotonic reading.)
func TestWire_LeaseKeepsTheMonotonicReading(t *testing.T) {
	w, h, s := session(t, System, 4*time.Second)
	if _, err := h.Write(request(1, 3)); err != nil {
		t.Fatal(err)
	}
	s.queue(reply(1, 4))
	if _, err := readFrame(h); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]time.Time{"contact": w.Contact(), "lease end": w.LeaseEnd(time.Second)} {
		if v.IsZero() {
			t.Fatalf("%s is zero after an answered request", name)
		}
		// time.Time.String ends with "m=±<value>" exactly when the time
		// carries a monotonic clock reading.
		if !strings.Contains(v.String(), " m=") {
			t.Errorf("%s %v has no monotonic clock reading: a wall clock step would move Lost", name, v)
		}
	}
}

// The lease ends T - T/10 after the send time c of the latest request
// counted; a reply other than a handshake's counts only if it arrives by
// c + T - T/4 - T/10, and none after it does, on that session. This replays issue 24's follower schedule at
// the server's defaults (tickTime 2 s, T = 4 s = 2 tickTime): the leader
// knows of a touch at 0 and expires the session at T = 4 s; a follower
// reports a touch up to tickTime/2 = 1 s after it made it. At 3a3bc55
// the lease ran to 0.9 T = 3.6 s, so a follower's reply to a request sent
// at 3.2 s and answered at 3.3 s extended it to 6.8 s, while the leader,
// told of that touch only at 4.3 s, had expired the session at 4 s.
func TestWire_LeaseCoversAFollowersLateReport(t *testing.T) {
	const T = 4 * time.Second
	const tick = T / 2 // the smallest tickTime that grants T
	clk := newFakeClock()
	w, h, s := session(t, clk, T)
	if got, want := w.LeaseEnd(0), clk.at(T-T/10); !got.Equal(want) {
		t.Fatalf("lease end after the handshake = %v, want contact + 0.9 T = %v", got.Sub(clk.at(0)), want.Sub(clk.at(0)))
	}
	leaderExpiry := clk.at(T) // the leader's record: the touch at 0
	call(t, clk, h, s, 1, 3200*time.Millisecond, 3300*time.Millisecond)
	if end := w.LeaseEnd(0); end.After(leaderExpiry) {
		t.Errorf("a reply answered at 3.3 s (reported to the leader at %v, after it expired the session at %v) extended the lease to %v",
			3300*time.Millisecond+tick/2, T, end.Sub(clk.at(0)))
	}
	// Nothing extends it later on this session, however prompt.
	call(t, clk, h, s, 2, 3400*time.Millisecond, 3401*time.Millisecond)
	if got := w.Contact(); !got.Equal(clk.at(0)) {
		t.Errorf("contact after the lease ended = %v, want 0 (the handshake's)", got.Sub(clk.at(0)))
	}
}

// Every reply counted arrives by c + 0.65 T (c the contact in force), so
// the follower that answered it reports the touch by then + tickTime/2 <=
// c + 0.9 T, before the leader can expire the session on the touch at c.
func TestWire_CountedRepliesReachTheLeaderInTime(t *testing.T) {
	const T = 4 * time.Second
	clk := newFakeClock()
	w, h, s := session(t, clk, T)
	send := time.Duration(0)
	for i, gap := range []time.Duration{900, 1300, 2000, 2500, 2590, 100, 2700} {
		prevContact := w.Contact()
		prevEnd := prevContact.Add(T - T/4 - T/10) // the counting window
		send += gap * time.Millisecond / 2
		recv := send + gap*time.Millisecond/2
		call(t, clk, h, s, int32(i+1), send, recv)
		counted := !w.Contact().Equal(prevContact)
		if counted && clk.at(recv).After(prevEnd) {
			t.Fatalf("reply %d arrived at %v, after the counting window %v, and was counted", i+1, recv, prevEnd.Sub(clk.at(0)))
		}
		if counted && clk.at(recv).Add(T/4).After(prevContact.Add(T-T/10)) {
			t.Fatalf("reply %d: a follower's report could reach the leader after it expired the session", i+1)
		}
		if !counted && !clk.at(recv).After(prevEnd) {
			t.Fatalf("reply %d arrived at %v within the counting window (%v) and was not counted", i+1, recv, prevEnd.Sub(clk.at(0)))
		}
	}
}

// A reconnect to the same session answered after the counting window but
// within the lease extends it: the leader validated the session.
func TestWire_ReconnectWithinTheLease(t *testing.T) {
	const T = 4 * time.Second
	clk := newFakeClock()
	w, h, s := session(t, clk, T)
	call(t, clk, h, s, 1, 2800*time.Millisecond, 2900*time.Millisecond) // late: not counted
	h.Close()
	h2 := w.Wrap(s, time.Second)
	t.Cleanup(func() { h2.Close() })
	clk.set(3 * time.Second)
	if _, err := h2.Write([]byte{0, 0, 0, 4, 1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	clk.set(3100 * time.Millisecond)
	s.queue(handshakeReply(T, 0x42))
	if _, err := readFrame(h2); err != nil {
		t.Fatal(err)
	}
	if got := w.Contact(); !got.Equal(clk.at(3 * time.Second)) {
		t.Fatalf("contact after the reconnect = %v, want 3s (the handshake's send)", got.Sub(clk.at(0)))
	}
	call(t, clk, h2, s, 2, 3200*time.Millisecond, 3300*time.Millisecond)
	if got := w.Contact(); !got.Equal(clk.at(3200 * time.Millisecond)) {
		t.Fatalf("contact after a reply on the reconnected session = %v, want 3.2s", got.Sub(clk.at(0)))
	}
}

// A new session (go-zookeeper opens one by itself after an expiry) starts
// a new lease, even after the old one ended.
func TestWire_NewSessionNewLease(t *testing.T) {
	const T = 4 * time.Second
	clk := newFakeClock()
	w, h, s := session(t, clk, T)
	call(t, clk, h, s, 1, 3*time.Second, 3*time.Second) // after the lease: not counted
	h2 := w.Wrap(s, time.Second)
	clk.set(5 * time.Second)
	if _, err := h2.Write([]byte{0, 0, 0, 4, 1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	s.queue(handshakeReply(T, 0x43))
	if _, err := readFrame(h2); err != nil {
		t.Fatal(err)
	}
	if got := w.Contact(); !got.Equal(clk.at(5 * time.Second)) {
		t.Fatalf("contact of the new session = %v, want 5s", got.Sub(clk.at(0)))
	}
	h2.Close()
}

// An idle connection pings every tenth of the negotiated timeout, so the
// lease is no older than that while the server answers.
func TestConn_PingsWhenIdle(t *testing.T) {
	const T = 4 * time.Second
	clk := newFakeClock()
	w, h, s := session(t, clk, T)
	before := len(s.written())
	clk.set(T / 10)
	out := s.written()[before:]
	if !bytes.Equal(out, pingFrame) {
		t.Fatalf("written after T/10 idle = %x, want one ping %x", out, pingFrame)
	}
	s.queue(reply(pingXid, 0))
	if _, err := readFrame(h); err != nil {
		t.Fatal(err)
	}
	if got := w.Contact(); !got.Equal(clk.at(T / 10)) {
		t.Fatalf("contact after the ping's reply = %v, want T/10", got.Sub(clk.at(0)))
	}
	// A request written in between defers the next ping.
	clk.set(T/10 + T/20)
	if _, err := h.Write(request(9, 3)); err != nil {
		t.Fatal(err)
	}
	n := len(s.written())
	clk.set(2 * T / 10)
	if len(s.written()) != n {
		t.Fatal("pinged although a request was written within the interval")
	}
	clk.set(2*T/10 + T/20)
	if got := s.written()[n:]; !bytes.Equal(got, pingFrame) {
		t.Fatalf("written an interval after the request = %x, want a ping", got)
	}
	h.Close()
	n = len(s.written())
	clk.set(T)
	if len(s.written()) != n {
		t.Fatal("pinged after Close")
	}
}

// Frames of any size pass, as go-zookeeper reads them: 3a3bc55 refused
// frames over 4 MiB and broke the connection on a read of 22,000 children.
func TestConn_BigFrame(t *testing.T) {
	_, h, s := session(t, System, 4*time.Second)
	if _, err := h.Write(request(1, 12)); err != nil {
		t.Fatal(err)
	}
	big := reply(1, 5<<20)
	s.queue(big)
	got, err := readFrame(h)
	if err != nil {
		t.Fatalf("a 5 MiB reply: %v", err)
	}
	if len(got) != len(big)-4 {
		t.Fatalf("read %d bytes, want %d", len(got), len(big)-4)
	}
	// Once read, the buffer the big frame grew is given back (ten
	// thousand lock waiters each read a long children list once).
	if _, err := h.Write(request(2, 12)); err != nil {
		t.Fatal(err)
	}
	s.queue(reply(2, 10))
	if _, err := readFrame(h); err != nil {
		t.Fatal(err)
	}
	if c := cap(h.in); c > keepBuffer {
		t.Fatalf("the read buffer keeps %d bytes after the big frame, want at most %d", c, keepBuffer)
	}
}

// timedSession is session with the ensemble's timing stated before the
// handshake, as framework does for Builder.EnsembleTiming.
func timedSession(t *testing.T, clk Clock, timeout, tick time.Duration, syncLimit int) (*Wire, *Conn, *scripted) {
	t.Helper()
	w := NewWire(clk)
	w.SetTiming(tick, syncLimit)
	s := newScripted()
	h := w.Wrap(s, time.Second)
	t.Cleanup(func() { h.Close() })
	if _, err := h.Write([]byte{0, 0, 0, 4, 1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	s.queue(handshakeReply(timeout, 0x42))
	if _, err := readFrame(h); err != nil {
		t.Fatal(err)
	}
	return w, h, s
}

// reconnect has w answer a handshake for the same session, sent at
// send and read at recv, on a new Conn.
func reconnect(t *testing.T, clk *fakeClock, w *Wire, timeout time.Duration, send, recv time.Duration) {
	t.Helper()
	s := newScripted()
	h := w.Wrap(s, time.Second)
	t.Cleanup(func() { h.Close() })
	clk.set(send)
	if _, err := h.Write([]byte{0, 0, 0, 4, 1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	clk.set(recv)
	s.queue(handshakeReply(timeout, 0x42))
	if _, err := readFrame(h); err != nil {
		t.Fatal(err)
	}
}

// Issue 30's schedule: T = 1 s on an ensemble with tickTime 500 ms and
// syncLimit 10. The leader is stopped at 0 (right after the handshake);
// the follower keeps answering every 100 ms for 2.2 s, as it does for up to
// syncLimit × tickTime = 5 s without hearing from the leader; on resume
// the leader expires the session, last touched at 0, at once. At ca3e38e
// the follower's replies kept the lease fresh to 3.1 s. With the timing
// stated, a follower's reply proves a leader touch no later than
// c - (5 s + 500 ms + 100 ms), which is before the handshake: the lease
// ends 0.9 T after it, whatever the follower says.
func TestWire_StalledLeaderTimingStated(t *testing.T) {
	const T = time.Second
	const tick, syncLimit = 500 * time.Millisecond, 10
	follower := func(w *Wire, clk *fakeClock, h *Conn, s *scripted) time.Time {
		var latest time.Time
		for i := 1; i <= 22; i++ {
			send := time.Duration(i) * 100 * time.Millisecond
			call(t, clk, h, s, int32(i), send, send+10*time.Millisecond)
			latest = w.LeaseEnd(0)
		}
		return latest
	}

	// The schedule is one the rule without timing gets wrong: the leader
	// expired the session at T, and the lease runs past it.
	clk := newFakeClock()
	w, h, s := session(t, clk, T)
	if end := follower(w, clk, h, s); !end.After(clk.at(T)) {
		t.Fatalf("without the timing the lease ends at %v: the schedule no longer shows the bug it is meant to", end.Sub(clk.at(0)))
	}

	clk = newFakeClock()
	w, h, s = timedSession(t, clk, T, tick, syncLimit)
	if m, ok := w.FollowerMargin(); !ok || m < T-T/slackDiv {
		t.Fatalf("follower margin = %v, %v; want at least 0.9 T (no follower lease at this timing)", m, ok)
	}
	handshakeEnd := clk.at(T - T/10)
	for i := 1; i <= 22; i++ {
		send := time.Duration(i) * 100 * time.Millisecond
		call(t, clk, h, s, int32(i), send, send+10*time.Millisecond)
		if end := w.LeaseEnd(0); end.After(handshakeEnd) {
			t.Fatalf("the follower's reply to the request sent at %v extended the lease to %v, past 0.9 T after the handshake (%v); the stalled leader expires the session at T",
				send, end.Sub(clk.at(0)), handshakeEnd.Sub(clk.at(0)))
		}
	}
}

// At a realistic timing (T = 30 s, tickTime 2 s, syncLimit 5) a
// follower's reply to a request sent at c counts as a leader touch at
// c - (S + tickTime + T/10) = c - 15 s, and the lease ends at
// c + T - T/10 - 15 s = c + 12 s. A reply after the lease ended extends
// nothing; a handshake reply counts fully.
func TestWire_LeaseWithTimingStated(t *testing.T) {
	const T = 30 * time.Second
	const tick, syncLimit = 2 * time.Second, 5
	const margin = syncLimit*tick + tick + T/10
	clk := newFakeClock()
	w, h, s := timedSession(t, clk, T, tick, syncLimit)
	if m, ok := w.FollowerMargin(); !ok || m != margin {
		t.Fatalf("follower margin = %v, %v; want %v, true", m, ok, margin)
	}
	if got, want := w.LeaseEnd(0), clk.at(T-T/10); !got.Equal(want) {
		t.Fatalf("lease end after the handshake = %v, want 0.9 T = %v", got.Sub(clk.at(0)), want.Sub(clk.at(0)))
	}
	// A reply whose shifted contact is older than the handshake's changes
	// nothing.
	call(t, clk, h, s, 1, 5*time.Second, 5100*time.Millisecond)
	if got, want := w.LeaseEnd(0), clk.at(T-T/10); !got.Equal(want) {
		t.Fatalf("lease end after a reply sent at 5 s = %v, want still %v", got.Sub(clk.at(0)), want.Sub(clk.at(0)))
	}
	for i, c := range []time.Duration{20 * time.Second, 26 * time.Second, 30 * time.Second} {
		call(t, clk, h, s, int32(i+2), c, c+100*time.Millisecond)
		if got, want := w.LeaseEnd(0), clk.at(c+T-T/10-margin); !got.Equal(want) {
			t.Fatalf("lease end after a reply to a request sent at %v = %v, want c + T - T/10 - margin = %v",
				c, got.Sub(clk.at(0)), want.Sub(clk.at(0)))
		}
	}
	end := w.LeaseEnd(0) // 42 s
	// A reply after the lease ended extends nothing, nor does a later one.
	call(t, clk, h, s, 10, 41*time.Second, 43*time.Second)
	call(t, clk, h, s, 11, 43*time.Second, 43100*time.Millisecond)
	if got := w.LeaseEnd(0); !got.Equal(end) {
		t.Fatalf("lease end after replies that came after it = %v, want %v", got.Sub(clk.at(0)), end.Sub(clk.at(0)))
	}
	// A handshake reply of the same session within the lease counts fully:
	// the leader revalidated the session.
	w2, _, _ := timedSession(t, clk, T, tick, syncLimit)
	reconnect(t, clk, w2, T, 44*time.Second, 44100*time.Millisecond)
	if got, want := w2.Contact(), clk.at(44*time.Second); !got.Equal(want) {
		t.Fatalf("contact after a reconnect within the lease = %v, want the handshake's send time %v", got.Sub(clk.at(0)), want.Sub(clk.at(0)))
	}
	if got, want := w2.LeaseEnd(0), clk.at(44*time.Second+T-T/10); !got.Equal(want) {
		t.Fatalf("lease end after a reconnect = %v, want %v", got.Sub(clk.at(0)), want.Sub(clk.at(0)))
	}
}

// A timing that is not positive leaves it unstated: replies count by the
// rule without timing.
func TestWire_SetTimingRejectsBadValues(t *testing.T) {
	for _, c := range []struct {
		tick time.Duration
		sync int
	}{{0, 5}, {-time.Second, 5}, {time.Second, 0}, {time.Second, -1}} {
		w := NewWire(nil)
		w.SetTiming(c.tick, c.sync)
		if m, ok := w.FollowerMargin(); ok {
			t.Errorf("SetTiming(%v, %d): margin %v stated", c.tick, c.sync, m)
		}
	}
	w := NewWire(nil)
	w.SetTiming(time.Duration(1<<62), 1<<30) // syncLimit × tickTime overflows
	if m, ok := w.FollowerMargin(); !ok || m <= 0 {
		t.Errorf("an overflowing timing gives margin %v, %v; want a large positive one", m, ok)
	}
}
