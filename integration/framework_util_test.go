package integration

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// fwRecorder is a connection state listener that keeps every state it gets.
type fwRecorder struct {
	mu     sync.Mutex
	states []framework.ConnectionState
}

func (r *fwRecorder) listen(s framework.ConnectionState) {
	r.mu.Lock()
	r.states = append(r.states, s)
	r.mu.Unlock()
}

// got returns a copy of the states received so far.
func (r *fwRecorder) got() []framework.ConnectionState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.states)
}

// waitLen waits until at least n states have arrived.
func (r *fwRecorder) waitLen(t testing.TB, d time.Duration, n int) {
	t.Helper()
	eventually(t, d, func() bool { return len(r.got()) >= n }, "listener states")
}

// expect waits until n = len(want) states have arrived and checks them.
func (r *fwRecorder) expect(t testing.TB, d time.Duration, want ...framework.ConnectionState) {
	t.Helper()
	deadline := time.Now().Add(d)
	for len(r.got()) < len(want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := r.got(); !slices.Equal(got, want) {
		t.Fatalf("listener states = %v, want %v", got, want)
	}
}

// fwCountingPolicy is a retry.Policy that counts how often it is consulted
// and allows max retries with a short sleep.
type fwCountingPolicy struct {
	max   int
	calls atomic.Int32
}

func (p *fwCountingPolicy) AllowRetry(n int, _ time.Duration) (time.Duration, bool) {
	p.calls.Add(1)
	return 10 * time.Millisecond, n < p.max
}

var _ retry.Policy = (*fwCountingPolicy)(nil)

// fwNoRetry never retries.
type fwNoRetry struct{}

func (fwNoRetry) AllowRetry(int, time.Duration) (time.Duration, bool) { return 0, false }

// fwRequestCounter is a Dialer whose connections count the requests the
// client writes, pings excluded: go-zookeeper writes each request as one
// frame in one Write, and a ping carries xid -2.
type fwRequestCounter struct{ n atomic.Int64 }

func (rc *fwRequestCounter) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &fwCountingConn{Conn: c, rc: rc}, nil
}

func (rc *fwRequestCounter) count() int64 { return rc.n.Load() }

type fwCountingConn struct {
	net.Conn
	rc *fwRequestCounter
}

const fwPingXid = -2

func (c *fwCountingConn) Write(b []byte) (int, error) {
	if len(b) < 8 || int32(binary.BigEndian.Uint32(b[4:8])) != fwPingXid {
		c.rc.n.Add(1)
	}
	return c.Conn.Write(b)
}

// fwProxy starts a fault proxy to target, closed at cleanup.
func fwProxy(t testing.TB, target string) *zktest.Proxy {
	t.Helper()
	p, err := zktest.NewProxy(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// fwShared returns the address of the shared server.
func fwShared(t testing.TB) string {
	t.Helper()
	return zktest.Shared(t).ConnectString()
}

// fwServer returns the only server of a private cluster.
func fwServer(t testing.TB, c *zktest.Cluster) *zktest.Server {
	t.Helper()
	s := c.Servers()
	if len(s) != 1 {
		t.Fatalf("want a private standalone server, got %v", c)
	}
	return s[0]
}

// fwRawConn opens a plain go-zookeeper connection to connect, closed at
// cleanup: an observer that bypasses the framework.
func fwRawConn(t testing.TB, connect string) *zk.Conn {
	t.Helper()
	conn, _, err := zk.Connect([]string{connect}, 10*time.Second, zk.WithLogInfo(false),
		zk.WithLogger(fwDiscard{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return conn
}

type fwDiscard struct{}

func (fwDiscard) Printf(string, ...any) {}

// fwLogger returns a debug logger whose output the test prints if it fails.
func fwLogger(t testing.TB) *slog.Logger {
	t.Helper()
	w := &fwLogBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			w.mu.Lock()
			defer w.mu.Unlock()
			t.Logf("client log:\n%s", w.b.String())
		}
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type fwLogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *fwLogBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
