package integration

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

const (
	fwC = framework.Connected
	fwS = framework.Suspended
	fwR = framework.Reconnected
	fwL = framework.Lost
)

// ephemeral creates an ephemeral node at p with c and returns p.
func fwEphemeral(t *testing.T, c *framework.Client, p string) string {
	t.Helper()
	got, err := c.Create().CreatingParentContainersIfNeeded().WithMode(framework.Ephemeral).
		ForPath(t.Context(), p, nil)
	if err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
	return got
}

// exists reports whether p exists, read through conn.
func fwExists(t *testing.T, conn *zk.Conn, p string) bool {
	t.Helper()
	ok, _, err := conn.Exists(p)
	if err != nil {
		t.Fatalf("exists %s: %v", p, err)
	}
	return ok
}

func TestFramework_ConnectedOnStart(t *testing.T) {
	var rec fwRecorder
	c := startClient(t, builder(t, fwShared(t)).Listener(rec.listen))

	rec.expect(t, 10*time.Second, fwC)
	if got := c.State(); got != fwC {
		t.Errorf("State() = %v, want %v", got, fwC)
	}
	if id := c.SessionID(); id == 0 || id != c.ZooKeeper().SessionID() {
		t.Errorf("SessionID() = %#x, go-zookeeper's session %#x", id, c.ZooKeeper().SessionID())
	}
	if err := c.BlockUntilConnected(t.Context()); err != nil {
		t.Errorf("BlockUntilConnected: %v", err)
	}
}

func TestFramework_RestartWithinSessionTimeoutKeepsSession(t *testing.T) {
	cluster := zktest.Start(t)
	srv := fwServer(t, cluster)
	var rec fwRecorder
	// A long session outlives the restart (a graceful stop takes about 2 s).
	c := startClient(t, builder(t, cluster.ConnectString()).SessionTimeout(20*time.Second).Listener(rec.listen))
	id := c.SessionID()
	node := fwEphemeral(t, c, testPath(t))

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	rec.expect(t, 10*time.Second, fwC, fwS)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	rec.expect(t, 15*time.Second, fwC, fwS, fwR)

	if got := c.SessionID(); got != id {
		t.Errorf("session changed across a short restart: %#x, then %#x", id, got)
	}
	if !fwExists(t, c.ZooKeeper(), node) {
		t.Errorf("ephemeral %s of the surviving session is gone", node)
	}
}

func TestFramework_DownPastSessionTimeoutLosesSession(t *testing.T) {
	cluster := zktest.Start(t)
	srv := fwServer(t, cluster)
	const session = 2 * time.Second
	var rec fwRecorder
	c := startClient(t, builder(t, cluster.ConnectString()).SessionTimeout(session).Listener(rec.listen))
	id := c.SessionID()
	node := fwEphemeral(t, c, testPath(t))

	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	rec.expect(t, 15*time.Second, fwC, fwS, fwL)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	rec.expect(t, 15*time.Second, fwC, fwS, fwL, fwR)
	quietUntil := time.Now().Add(session + 500*time.Millisecond) // past any stale Lost timer

	if got := c.SessionID(); got == id || got != c.ZooKeeper().SessionID() {
		t.Errorf("after Lost the client reconnected on session %#x (old %#x, go-zookeeper's %#x); want a new one",
			got, id, c.ZooKeeper().SessionID())
	}
	// The old session's ephemeral goes with it; the client works on the new one.
	eventually(t, 15*time.Second, func() bool { return !fwExists(t, c.ZooKeeper(), node) },
		"the lost session's ephemeral node disappears")
	if _, err := c.Create().CreatingParentContainersIfNeeded().WithMode(framework.Ephemeral).ForPath(t.Context(), node, nil); err != nil {
		t.Fatalf("create on the new session: %v", err)
	}
	// Nothing more: no late Lost from a stale timer, no second Reconnected.
	time.Sleep(time.Until(quietUntil))
	rec.expect(t, 0, fwC, fwS, fwL, fwR)
}

func TestFramework_ExpiredSessionReportsLostThenReconnected(t *testing.T) {
	var rec fwRecorder
	c := startClient(t, builder(t, fwShared(t)).Listener(rec.listen))
	id := c.SessionID()
	node := fwEphemeral(t, c, testPath(t))

	if err := zktest.ExpireSession(t.Context(), fwShared(t), c.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, func() bool { return slices.Contains(rec.got(), fwR) }, "Reconnected")
	// The server drops the connection when it closes the session, so the
	// client may see Suspended before it learns of the expiry.
	if got := rec.got(); !slices.Equal(got, []framework.ConnectionState{fwC, fwL, fwR}) &&
		!slices.Equal(got, []framework.ConnectionState{fwC, fwS, fwL, fwR}) {
		t.Fatalf("listener states = %v, want [CONNECTED (SUSPENDED) LOST RECONNECTED]", got)
	}
	if got := c.SessionID(); got == id || got != c.ZooKeeper().SessionID() {
		t.Errorf("SessionID() = %#x after expiry (old %#x, go-zookeeper's %#x)", got, id, c.ZooKeeper().SessionID())
	}
	if fwExists(t, c.ZooKeeper(), node) {
		t.Errorf("ephemeral %s survived its session's expiry", node)
	}
}

// fwClosedPort returns a loopback address on which nothing listens.
func fwClosedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestFramework_StartFailsWhenServerNeverAnswers(t *testing.T) {
	var rec fwRecorder
	c, err := builder(t, fwClosedPort(t)).
		ConnectionTimeout(200 * time.Millisecond).
		SessionTimeout(time.Second).
		Listener(rec.listen).
		Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	err = c.Start(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start = %v, want the ctx error", err)
	}
	// Start waits: after the connection timeout the listener hears
	// Suspended, and after a session timeout more, Lost.
	if got, want := rec.got(), []framework.ConnectionState{fwS, fwL}; !slices.Equal(got, want) {
		t.Errorf("listener states while Start waited = %v, want %v", got, want)
	}
	if err := c.Check(); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("Check after a failed Start = %v, want ErrClosed", err)
	}
	if err := c.Start(t.Context()); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("Start again after a failed Start = %v, want ErrClosed", err)
	}
}

func TestFramework_SilentServerHandshakeIsRetried(t *testing.T) {
	// The proxy accepts connections and forwards nothing: a server that
	// takes the connection and never answers the connect request, as a
	// starting ZooKeeper 3.8 may. go-zookeeper alone would wait ten read
	// timeouts (6.7 s here) on the first connection; the client bounds the
	// handshake to the session timeout and dials again.
	proxy := fwProxy(t, fwShared(t))
	proxy.Pause()
	var dials atomic.Int32
	c, err := builder(t, proxy.Addr()).SessionTimeout(time.Second).
		Dialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
			dials.Add(1)
			return net.DialTimeout(network, addr, timeout)
		}).Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4500*time.Millisecond)
	defer cancel()
	if err := c.Start(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start against a silent server = %v, want the ctx error", err)
	}
	if n := dials.Load(); n < 2 {
		t.Errorf("the client dialed %d times while the server stayed silent; it must give up the handshake and retry", n)
	}
}

// fwIsClosed reports whether ch is closed, without waiting.
func fwIsClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestFramework_LossSignalFollowsErrorPolicy(t *testing.T) {
	proxy := fwProxy(t, fwShared(t))
	var rec fwRecorder
	c := startClient(t, builder(t, proxy.Addr()).Listener(rec.listen))
	rec.expect(t, 10*time.Second, fwC)

	std, sess := c.LossSignal(framework.StandardErrorPolicy), c.LossSignal(framework.SessionErrorPolicy)
	if fwIsClosed(std) || fwIsClosed(sess) {
		t.Fatalf("loss signals closed while connected: standard %v, session %v", fwIsClosed(std), fwIsClosed(sess))
	}

	// A dropped connection: Suspended ends the standard trust only.
	proxy.Reset()
	rec.expect(t, 15*time.Second, fwC, fwS, fwR)
	if !fwIsClosed(std) {
		t.Error("standard loss signal still open after Suspended")
	}
	if fwIsClosed(sess) {
		t.Error("session loss signal closed by Suspended; it must wait for Lost")
	}
	std2 := c.LossSignal(framework.StandardErrorPolicy)
	if fwIsClosed(std2) {
		t.Error("a fresh standard loss signal is closed after Reconnected")
	}

	// An expired session: Lost ends both.
	if err := zktest.ExpireSession(t.Context(), fwShared(t), c.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, func() bool { return slices.Contains(rec.got(), fwL) }, "Lost")
	if !fwIsClosed(sess) || !fwIsClosed(std2) {
		t.Errorf("after Lost: session signal closed %v, standard closed %v; want both", fwIsClosed(sess), fwIsClosed(std2))
	}

	// Close ends both.
	eventually(t, 15*time.Second, func() bool { return c.State() == fwR }, "Reconnected after Lost")
	std3, sess3 := c.LossSignal(framework.StandardErrorPolicy), c.LossSignal(framework.SessionErrorPolicy)
	if fwIsClosed(std3) || fwIsClosed(sess3) {
		t.Fatal("loss signals closed after Reconnected")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !fwIsClosed(std3) || !fwIsClosed(sess3) {
		t.Errorf("after Close: standard closed %v, session closed %v; want both", fwIsClosed(std3), fwIsClosed(sess3))
	}
}

func TestFramework_BlockUntilConnectedWhenConnected(t *testing.T) {
	c := newClient(t)
	if err := c.BlockUntilConnected(t.Context()); err != nil {
		t.Fatalf("BlockUntilConnected on a connected client: %v", err)
	}
}

func TestFramework_BlockUntilConnectedWaitsForServer(t *testing.T) {
	cluster := zktest.Start(t)
	srv := fwServer(t, cluster)
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	c, err := builder(t, cluster.ConnectString()).Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	started := make(chan error, 1)
	go func() { started <- c.Start(t.Context()) }()
	eventually(t, 5*time.Second, func() bool { return c.Check() == nil }, "Start under way")

	short, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := c.BlockUntilConnected(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("BlockUntilConnected with no server = %v, want the ctx error", err)
	}
	cancelled, cancel2 := context.WithCancel(t.Context())
	cancel2()
	if err := c.BlockUntilConnected(cancelled); !errors.Is(err, context.Canceled) {
		t.Fatalf("BlockUntilConnected with a cancelled ctx = %v, want context.Canceled", err)
	}

	waited := make(chan error, 1)
	go func() { waited <- c.BlockUntilConnected(t.Context()) }()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Errorf("BlockUntilConnected once the server is up: %v", err)
	}
	if err := <-started; err != nil {
		t.Errorf("Start once the server is up: %v", err)
	}
	if got := c.State(); got != fwC {
		t.Errorf("State() = %v, want %v", got, fwC)
	}
}

func TestFramework_BlockUntilConnectedAfterLost(t *testing.T) {
	proxy := fwProxy(t, fwShared(t))
	var rec fwRecorder
	c := startClient(t, builder(t, proxy.Addr()).SessionTimeout(time.Second).Listener(rec.listen))

	// The server vanishes: nothing answers through the proxy.
	proxy.Refuse(true)
	proxy.Reset()
	rec.expect(t, 10*time.Second, fwC, fwS, fwL)
	short, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if err := c.BlockUntilConnected(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("BlockUntilConnected after Lost = %v, want the ctx error", err)
	}

	proxy.Refuse(false)
	if err := c.BlockUntilConnected(t.Context()); err != nil {
		t.Fatalf("BlockUntilConnected once the server answers: %v", err)
	}
	rec.expect(t, 5*time.Second, fwC, fwS, fwL, fwR)
	if _, err := c.CheckExists().ForPath(t.Context(), "/"); err != nil {
		t.Errorf("operation after reconnect: %v", err)
	}
}

func TestFramework_BlockUntilConnectedAfterClose(t *testing.T) {
	c := newClient(t)
	c.Close()
	if err := c.BlockUntilConnected(t.Context()); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("BlockUntilConnected after Close = %v, want ErrClosed", err)
	}
}

func TestFramework_QuickConnectCloseCycles(t *testing.T) {
	connect := fwShared(t)
	for i := range 50 {
		c, err := builder(t, connect).Build()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(t.Context()); err != nil {
			t.Fatalf("cycle %d: Start: %v", i, err)
		}
		if err := c.BlockUntilConnected(t.Context()); err != nil {
			t.Fatalf("cycle %d: BlockUntilConnected: %v", i, err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("cycle %d: Close: %v", i, err)
		}
		if err := c.BlockUntilConnected(t.Context()); !errors.Is(err, framework.ErrClosed) {
			t.Fatalf("cycle %d: BlockUntilConnected after Close = %v, want ErrClosed", i, err)
		}
	}
}
