package zktest

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"
)

// proxied returns a client through a new proxy to the shared server and a
// client straight to the server, to see what the server really holds.
func proxied(t *testing.T) (*Proxy, *testConn, *testConn) {
	t.Helper()
	p, c := startProxy(t)
	return p, connect(t, p.Addr(), 10*time.Second), connect(t, c.ConnectString(), 10*time.Second)
}

func TestProxy_LoseNextReplyCreate(t *testing.T) {
	p, conn, direct := proxied(t)
	path := uniquePath(t)
	p.LoseNextReply(OpCreate)

	_, err := conn.Create(path, []byte("x"), 0, zk.WorldACL(zk.PermAll))
	if !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("Create with its reply lost = %v, want %v", err, zk.ErrConnectionClosed)
	}
	if ok, _, err := direct.Exists(path); err != nil || !ok {
		t.Fatalf("the server has %s: %v, %v; want true: it applied the create", path, ok, err)
	}
	if n := p.LostReplies(); n != 1 {
		t.Errorf("LostReplies() = %d, want 1", n)
	}

	// The client reconnects to the same session, and a retry meets the
	// effect of its own first attempt; the fault was one-shot.
	conn.waitState(t, zk.StateHasSession)
	if _, err := conn.Create(path, nil, 0, zk.WorldACL(zk.PermAll)); !errors.Is(err, zk.ErrNodeExists) {
		t.Errorf("retried Create = %v, want %v", err, zk.ErrNodeExists)
	}
	if n := p.LostReplies(); n != 1 {
		t.Errorf("LostReplies() after the retry = %d, want 1", n)
	}
}

func TestProxy_LoseNextReplySetData(t *testing.T) {
	p, conn, direct := proxied(t)
	path := uniquePath(t)
	if _, err := direct.Create(path, []byte("v0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	p.LoseNextReply(OpSetData)

	// Requests of other kinds keep their replies.
	if data, _, err := conn.Get(path); err != nil || string(data) != "v0" {
		t.Fatalf("Get while a SetData reply is to be lost = %q, %v", data, err)
	}
	if _, err := conn.Create(path+"-other", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("Create while a SetData reply is to be lost: %v", err)
	}

	if _, err := conn.Set(path, []byte("v1"), 0); !errors.Is(err, zk.ErrConnectionClosed) {
		t.Fatalf("Set with its reply lost = %v, want %v", err, zk.ErrConnectionClosed)
	}
	data, stat, err := direct.Get(path)
	if err != nil || string(data) != "v1" || stat.Version != 1 {
		t.Fatalf("the server has %q at version %d (%v); want v1 at version 1: it applied the set", data, stat.Version, err)
	}
	conn.waitState(t, zk.StateHasSession)
	if _, err := conn.Set(path, []byte("v1"), 0); !errors.Is(err, zk.ErrBadVersion) {
		t.Errorf("retried Set = %v, want %v", err, zk.ErrBadVersion)
	}
	if n := p.LostReplies(); n != 1 {
		t.Errorf("LostReplies() = %d, want 1", n)
	}
}

func TestProxy_SetReplyLossLosesEveryMatchingReply(t *testing.T) {
	p, conn, direct := proxied(t)
	path := uniquePath(t)
	if _, err := direct.Create(path, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	p.SetReplyLoss(1, rand.New(rand.NewPCG(1, 2)), OpSetData, OpDelete)

	const sets = 3
	for i := range int32(sets) {
		if _, _, err := conn.Get(path); err != nil {
			t.Fatalf("Get %d: %v; only SetData and Delete replies are to be lost", i, err)
		}
		if _, err := conn.Set(path, []byte{byte(i)}, i); !errors.Is(err, zk.ErrConnectionClosed) {
			t.Fatalf("Set %d = %v, want %v", i, err, zk.ErrConnectionClosed)
		}
		conn.waitState(t, zk.StateHasSession)
	}
	if _, stat, err := direct.Get(path); err != nil || stat.Version != sets {
		t.Errorf("the server's version = %v (%v), want %d: every set was applied", stat, err, sets)
	}
	if n := p.LostReplies(); n != sets {
		t.Errorf("LostReplies() = %d, want %d", n, sets)
	}

	p.SetReplyLoss(0, nil)
	if _, err := conn.Set(path, []byte("last"), sets); err != nil {
		t.Errorf("Set after SetReplyLoss(0) = %v", err)
	}
	if n := p.LostReplies(); n != sets {
		t.Errorf("LostReplies() after SetReplyLoss(0) = %d, want %d", n, sets)
	}
}

func TestProxy_SetReplyLossDrawsFromRNG(t *testing.T) {
	p, conn, direct := proxied(t)
	path := uniquePath(t)
	if _, err := direct.Create(path, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	// The proxy draws once per matching request, in order, so the same
	// seed predicts which replies it loses.
	const rate, n = 0.5, 8
	p.SetReplyLoss(rate, rand.New(rand.NewPCG(7, 7)), OpSetData)
	predict := rand.New(rand.NewPCG(7, 7))
	want := 0
	for i := range int32(n) {
		lose := predict.Float64() < rate
		_, err := conn.Set(path, nil, i)
		if lose {
			want++
			if !errors.Is(err, zk.ErrConnectionClosed) {
				t.Fatalf("Set %d = %v, want its reply lost", i, err)
			}
			conn.waitState(t, zk.StateHasSession)
		} else if err != nil {
			t.Fatalf("Set %d = %v, want its reply kept", i, err)
		}
	}
	if got := p.LostReplies(); got != want || want == 0 || want == n {
		t.Errorf("LostReplies() = %d, want %d of %d", got, want, n)
	}
}

func TestProxy_HoldRepliesUntilRelease(t *testing.T) {
	p, conn, direct := proxied(t)
	path := uniquePath(t)
	if _, err := direct.Create(path+"-read", []byte("r"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	type result struct {
		data string
		err  error
	}
	p.HoldReplies()
	p.HoldReplies() // a second hold changes nothing
	got, created := make(chan result, 1), make(chan error, 1)
	go func() {
		data, _, err := conn.Get(path + "-read")
		got <- result{string(data), err}
	}()
	go func() {
		_, err := conn.Create(path, nil, 0, zk.WorldACL(zk.PermAll))
		created <- err
	}()

	// Requests still reach the server: the create is applied...
	waitExists(t, direct, path, true)
	// ...but no reply has reached the client.
	select {
	case r := <-got:
		t.Fatalf("Get returned %q, %v while replies are held", r.data, r.err)
	case err := <-created:
		t.Fatalf("Create returned %v while replies are held", err)
	default:
	}

	p.ReleaseReplies()
	if r := <-got; r.err != nil || r.data != "r" {
		t.Errorf("Get after ReleaseReplies = %q, %v", r.data, r.err)
	}
	if err := <-created; err != nil {
		t.Errorf("Create after ReleaseReplies = %v", err)
	}
	if n := p.LostReplies(); n != 0 {
		t.Errorf("LostReplies() = %d, want 0: held replies are not lost", n)
	}
}

func TestProxy_LostReplyWhileHeldResetsAfterRelease(t *testing.T) {
	p, conn, direct := proxied(t)
	path := uniquePath(t)
	if _, err := direct.Create(path, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	p.LoseNextReply(OpDelete)
	p.HoldReplies()
	// A create, then a delete whose reply is lost, both applied while
	// replies are held: the create's reply comes first in the stream.
	created, deleted := make(chan error, 1), make(chan error, 1)
	go func() {
		_, err := conn.Create(path+"-first", nil, 0, zk.WorldACL(zk.PermAll))
		created <- err
	}()
	waitExists(t, direct, path+"-first", true)
	go func() { deleted <- conn.Delete(path, -1) }()
	waitExists(t, direct, path, false)

	p.ReleaseReplies()
	if err := <-created; err != nil {
		t.Errorf("Create held before the lost reply = %v, want its reply", err)
	}
	if err := <-deleted; !errors.Is(err, zk.ErrConnectionClosed) {
		t.Errorf("Delete with its reply lost = %v, want %v", err, zk.ErrConnectionClosed)
	}
	if n := p.LostReplies(); n != 1 {
		t.Errorf("LostReplies() = %d, want 1", n)
	}
}

// waitExists polls the server until path exists, or until it does not.
func waitExists(t *testing.T, conn *testConn, path string, want bool) {
	t.Helper()
	for {
		ok, _, err := conn.Exists(path)
		if err != nil {
			t.Fatal(err)
		}
		if ok == want {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestProxy_CloseDiscardsHeldReplies(t *testing.T) {
	c := Shared(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p, err := NewProxy(c.ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	p.HoldReplies()
	conn := connectRaw(t, p.Addr())
	if _, err := io.WriteString(conn, "srvr"); err != nil {
		t.Fatal(err)
	}
	// The server answers and closes; the proxy holds both.
	for p.pendingReplies() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := io.ReadAll(conn); len(b) != 0 || (err != nil && !strings.Contains(err.Error(), "reset")) {
		t.Errorf("read %q, %v after Close; want nothing: held replies are discarded", b, err)
	}
}

// connectRaw dials addr; t.Cleanup closes the connection.
func connectRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// pendingReplies returns how many bytes from servers the proxy holds.
func (p *Proxy) pendingReplies() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for l := range p.links {
		l.mu.Lock()
		n += len(l.down)
		l.mu.Unlock()
	}
	return n
}
