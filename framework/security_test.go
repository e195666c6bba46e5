package framework

import (
	"errors"
	"testing"

	"github.com/go-curator/curator/framework/internal/transport"
	"github.com/go-zookeeper/zk"
)

func TestCheckAuthAndACL(t *testing.T) {
	for _, a := range []transport.Credential{{Scheme: "", Data: []byte("u:p")}, {Scheme: "dig est", Data: nil}, {Scheme: "digest", Data: []byte("nopassword")}, {Scheme: "digest", Data: []byte(":p")}, {Scheme: "x", Data: make([]byte, maxAuthLen+1)}} {
		if checkAuth(a) == nil {
			t.Errorf("checkAuth(%q, %d bytes) = nil; want an error", a.Scheme, len(a.Data))
		}
	}
	for _, a := range []transport.Credential{{Scheme: "digest", Data: []byte("u:")}, {Scheme: "ip", Data: nil}, {Scheme: "sasl", Data: []byte{0}}} {
		if err := checkAuth(a); err != nil {
			t.Errorf("checkAuth(%q) = %v", a.Scheme, err)
		}
	}
	if err := checkACL([]zk.ACL{{Perms: zk.PermAll, Scheme: "auth"}}); err != nil {
		t.Error(err)
	}
	for _, acl := range [][]zk.ACL{{{Perms: zk.PermAll}}, {{Perms: 1 << 5, Scheme: "world", ID: "anyone"}}} {
		if !errors.Is(checkACL(acl), ErrInvalidArgument) {
			t.Errorf("checkACL(%v) should be ErrInvalidArgument", acl)
		}
	}
}
