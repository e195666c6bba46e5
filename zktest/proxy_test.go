package zktest

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"
)

// startProxy returns a proxy to the shared server; t.Cleanup closes it.
func startProxy(t *testing.T) (*Proxy, *Cluster) {
	t.Helper()
	c := Shared(t)
	p, err := NewProxy(c.ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p, c
}

func TestProxy_Forwards(t *testing.T) {
	p, _ := startProxy(t)
	answer, err := fourLetter(t.Context(), p.Addr(), "srvr")
	if err != nil || !serving(answer) {
		t.Fatalf("srvr through the proxy = %q, %v", answer, err)
	}
	conn := connect(t, p.Addr(), 4*time.Second)
	path := uniquePath(t)
	p.SetLatency(20 * time.Millisecond)
	if _, err := conn.Create(path, []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	p.SetLatency(0)
	if data, _, err := conn.Get(path); err != nil || string(data) != "x" {
		t.Fatalf("Get through the proxy = %q, %v", data, err)
	}
}

func TestProxy_PauseDisconnectsClient(t *testing.T) {
	p, _ := startProxy(t)
	conn := connect(t, p.Addr(), 2*time.Second)
	p.Pause()
	p.Pause() // a second pause changes nothing
	conn.waitState(t, zk.StateDisconnected)
	p.Resume()
	// Whether the old session survived depends on timing; a new client
	// shows that traffic flows again.
	other := connect(t, p.Addr(), 4*time.Second)
	if _, err := other.Sync("/"); err != nil {
		t.Fatalf("Sync after Resume: %v", err)
	}
}

func TestProxy_ResetDropsConnections(t *testing.T) {
	p, _ := startProxy(t)
	conn := connect(t, p.Addr(), 4*time.Second)
	id := conn.SessionID()
	p.Reset()
	conn.waitState(t, zk.StateDisconnected)
	conn.waitState(t, zk.StateHasSession)
	if conn.SessionID() != id {
		t.Errorf("session 0x%x became 0x%x after a reset", id, conn.SessionID())
	}
}

func TestProxy_RefuseResetsNewConnections(t *testing.T) {
	p, _ := startProxy(t)
	p.Refuse(true)
	if answer, err := fourLetter(t.Context(), p.Addr(), "srvr"); err == nil && answer != "" {
		t.Errorf("srvr through a refusing proxy = %q", answer)
	}
	p.Refuse(false)
	if answer, err := fourLetter(t.Context(), p.Addr(), "srvr"); err != nil || !serving(answer) {
		t.Errorf("srvr after Refuse(false) = %q, %v", answer, err)
	}
}

func TestProxy_CloseJoinsGoroutines(t *testing.T) {
	c := Shared(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p, err := NewProxy(c.ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	// One idle connection, and one whose request is held by a pause and a
	// latency, so that pumps are blocked in every place they can block.
	idle, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	held, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	p.SetLatency(time.Hour)
	p.Pause()
	if _, err := io.WriteString(held, "srvr"); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	held.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := io.ReadAll(held); len(b) != 0 || (err != nil && !strings.Contains(err.Error(), "reset")) {
		t.Errorf("held connection read %q, %v after Close; want nothing", b, err)
	}
	if _, err := net.Dial("tcp", p.Addr()); err == nil {
		t.Error("a closed proxy accepts connections")
	}
}

func TestServerWaitFunction_CoversTheSharedServer(t *testing.T) {
	Shared(t)
	goleak.VerifyNone(t, goleak.IgnoreAnyFunction(ServerWaitFunction))
}
