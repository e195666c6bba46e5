package zktest

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestEnsemble_LeaderFailsOverAndRejoins(t *testing.T) {
	c := StartEnsemble(t)
	if n := len(c.Servers()); n != 3 {
		t.Fatalf("%d servers, want 3", n)
	}
	old, err := c.WaitLeader(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, c.ConnectString(), 4*time.Second)
	if _, err := conn.Create("/ensemble", []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	leader, err := c.WaitLeader(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if leader == old {
		t.Fatalf("leader is still %v after it was killed", old)
	}
	// The client may need a reconnect; go-zookeeper retries a read itself
	// only on a new connection, so poll until one succeeds.
	var data []byte
	for range 100 {
		if data, _, err = conn.Get("/ensemble"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || string(data) != "v" {
		t.Fatalf("Get(/ensemble) after failover = %q, %v", data, err)
	}

	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Servers() {
		mode, err := s.Mode()
		if err != nil || (mode != "leader" && mode != "follower") {
			t.Errorf("%v: mode %q, %v; want leader or follower", s, mode, err)
		}
	}
	if mode, _ := old.Mode(); mode != "follower" {
		t.Errorf("restarted %v is %q, want follower", old, mode)
	}
}
