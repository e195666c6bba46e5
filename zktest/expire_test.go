package zktest

import (
	"errors"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestExpireSession_ClientSeesExpired(t *testing.T) {
	c := Shared(t)
	conn := connect(t, c.ConnectString(), 4*time.Second)
	const path = "/expire-session-ephemeral"
	if _, err := conn.Create(path, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	id, passwd := conn.SessionID(), sessionPassword(conn.Conn)

	if err := ExpireSession(testCtx(t), c.ConnectString(), conn.Conn); err != nil {
		t.Fatal(err)
	}
	conn.waitState(t, zk.StateExpired)

	other := connect(t, c.ConnectString(), 4*time.Second)
	if ok, _, err := other.Exists(path); err != nil || ok {
		t.Errorf("Exists(%s) after expiry = %v, %v; want false", path, ok, err)
	}
	// go-zookeeper then starts a new session on its own.
	conn.waitState(t, zk.StateHasSession)
	if conn.SessionID() == id {
		t.Errorf("session 0x%x survived its expiry", id)
	}
	// The old session cannot be closed twice.
	err := closeSession(testCtx(t), splitConnectString(c.ConnectString())[0], id, passwd)
	if !errors.Is(err, zk.ErrSessionExpired) {
		t.Errorf("closing the expired session again = %v, want zk.ErrSessionExpired", err)
	}
}

func TestExpireSession_NoServer(t *testing.T) {
	c := Shared(t)
	conn := connect(t, c.ConnectString(), 4*time.Second)
	p, err := NewProxy(c.ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	p.Refuse(true)
	defer p.Close()
	err = ExpireSession(testCtx(t), p.Addr(), conn.Conn)
	if err == nil || errors.Is(err, zk.ErrSessionExpired) {
		t.Errorf("ExpireSession through a refusing proxy = %v, want a connection error", err)
	}
}
