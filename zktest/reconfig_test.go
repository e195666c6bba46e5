package zktest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// A reconfigurable server alone is a quorum of one that a joiner started
// by AddServer can be added to, by the super user only.
func TestReconfig_AddServerJoins(t *testing.T) {
	c := StartReconfigurable(t, 1, Config{})
	conn := connect(t, c.ConnectString(), 10*time.Second)
	first := c.Servers()[0]
	if mode, err := first.Mode(); err != nil || mode != "leader" {
		t.Fatalf("the reconfigurable server's mode = %q, %v; want leader (a quorum of one)", mode, err)
	}
	data, _, err := conn.Get("/zookeeper/config")
	if err != nil || !strings.Contains(string(data), first.Spec()) {
		t.Fatalf("/zookeeper/config = %q, %v; want it to hold %q", data, err, first.Spec())
	}
	s, err := c.AddServer(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != 2 || len(c.Servers()) != 2 {
		t.Fatalf("added server %d, cluster of %d; want server 2 of 2", s.ID, len(c.Servers()))
	}
	if _, err := conn.IncrementalReconfig([]string{s.Spec()}, nil, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("reconfig without credentials = %v, want zk.ErrNoAuth", err)
	}
	if err := conn.AddAuth("digest", []byte(SuperUser)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.IncrementalReconfig([]string{s.Spec()}, nil, -1); err != nil {
		t.Fatalf("reconfig as the super user: %v", err)
	}
	if data, _, err = conn.Get("/zookeeper/config"); err != nil || !strings.Contains(string(data), s.Spec()) {
		t.Fatalf("/zookeeper/config after the reconfig = %q, %v; want it to hold %q", data, err, s.Spec())
	}
}

func TestReconfig_AddServerMisuse(t *testing.T) {
	var none Cluster
	if _, err := none.AddServer(context.Background()); !errors.Is(err, ErrNoControl) {
		t.Errorf("AddServer of an external cluster = %v, want ErrNoControl", err)
	}
	var nilCtx context.Context
	if _, err := none.AddServer(nilCtx); err == nil {
		t.Error("AddServer(nil) = nil error")
	}
	closed := &Cluster{servers: []*Server{{ID: 1}}, closed: true}
	if _, err := closed.AddServer(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("AddServer after Close = %v, want ErrClosed", err)
	}
	plain := &Cluster{servers: []*Server{{ID: 1}}}
	if _, err := plain.AddServer(context.Background()); err == nil || !strings.Contains(err.Error(), "Config.Reconfig") {
		t.Errorf("AddServer of a cluster without Config.Reconfig = %v", err)
	}
}
