package lockcore

import (
	"errors"
	"slices"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-zookeeper/zk"
)

func TestFailedOp(t *testing.T) {
	inconsistent := errors.New("unknown error: -2")
	for _, tc := range []struct {
		name string
		res  []framework.OpResult
		want int
	}{
		{"none", nil, -1},
		{"all ok", []framework.OpResult{{}, {}}, -1},
		{"first", []framework.OpResult{{Err: zk.ErrNodeExists}, {Err: inconsistent}, {Err: inconsistent}}, 0},
		{"second", []framework.OpResult{{}, {Err: zk.ErrNoNode}, {Err: inconsistent}}, 1},
		{"api error after", []framework.OpResult{{Err: zk.ErrAPIError}, {}, {Err: zk.ErrNoNode}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := failedOp(tc.res); got != tc.want {
				t.Fatalf("failedOp = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestClientGrants(t *testing.T) {
	var g clientGrants
	if !g.usable() || g.take() != nil {
		t.Fatal("a new client's grants are not usable and empty")
	}
	g.keep("/g/a")
	g.keep("/g/b", "/g/c")
	if got := g.take(); !slices.Equal(got, []string{"/g/a", "/g/b", "/g/c"}) {
		t.Fatalf("take = %q", got)
	}
	if got := g.take(); got != nil {
		t.Fatalf("second take = %q, want nothing", got)
	}
	client, err := framework.NewClient("127.0.0.1:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &Core{client: client, grants: &g}
	c.disable("a test", nil)
	c.disable("a test again", nil) // logged once
	if g.usable() || c.watchable(t.Context()) {
		t.Fatal("usable after disable")
	}
}

func TestGrantsOfIsPerClient(t *testing.T) {
	a, err := framework.NewClient("127.0.0.1:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := framework.NewClient("127.0.0.1:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if grantsOf(a) != grantsOf(a) {
		t.Fatal("one client, two grant states")
	}
	if grantsOf(a) == grantsOf(b) {
		t.Fatal("two clients share a grant state")
	}
	if got, want := grantPath("_c_x-lock-0000000001"), GrantsDir+"/_c_x-lock-0000000001"; got != want {
		t.Fatalf("grantPath = %q, want %q", got, want)
	}
}
