package integration

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
)

// Issue 19: TTL create modes, on a server with extendedTypesEnabled=true and
// on one without.

func TestTTL_NodesCarryTheirTTL(t *testing.T) {
	securityNoLeaks(t)
	srv := zktest.StartWith(t, zktest.Config{ExtraConfig: "extendedTypesEnabled=true\n"})
	c := startClient(t, builder(t, srv.ConnectString()).Namespace("ttl"))
	ctx := t.Context()

	p, err := c.Create().WithMode(framework.PersistentWithTTL).WithTTL(time.Hour).
		CreatingParentContainersIfNeeded().ForPath(ctx, "/sessions/a", []byte("x"))
	if err != nil || p != "/sessions/a" {
		t.Fatalf("TTL create = %q, %v", p, err)
	}
	seq, err := c.Create().WithMode(framework.PersistentSequentialWithTTL).WithTTL(90*time.Second).
		WithProtection().ForPath(ctx, "/sessions/s-", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, name := framework.SplitPath(seq); !framework.IsProtected(name) || !strings.HasSuffix(name, "0000000001") {
		t.Errorf("protected sequential TTL node %q; want _c_<uuid>-s-0000000001", seq)
	}

	// ZooKeeper shows a TTL node's stat with an ephemeralOwner of 0, as a
	// persistent node's: what tells them apart is that the server removes
	// a TTL node that outlived its TTL without children or changes (it
	// checks every znode.container.checkIntervalMs, 500 ms in the harness),
	// and only that one.
	short, err := c.Create().WithMode(framework.PersistentWithTTL).WithTTL(time.Second).ForPath(ctx, "/sessions/short", nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := c.Create().ForPath(ctx, "/sessions/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() bool {
		stat, err := c.CheckExists().ForPath(ctx, short)
		return err == nil && stat == nil
	}, "the server removes a TTL node after its TTL")
	for _, q := range []string{p, seq, plain} {
		if stat, err := c.CheckExists().ForPath(ctx, q); err != nil || stat == nil {
			t.Errorf("%s after the 1 s TTL node was removed: %v, %v; want it still there", q, stat, err)
		}
	}
}
func TestTTL_ServerWithoutExtendedTypes(t *testing.T) {
	securityNoLeaks(t)
	c := newClient(t)
	ctx := t.Context()
	base := testPath(t)
	for _, mode := range []framework.CreateMode{framework.PersistentWithTTL, framework.PersistentSequentialWithTTL} {
		_, err := c.Create().WithMode(mode).WithTTL(time.Minute).CreatingParentsIfNeeded().ForPath(ctx, base+"/n", nil)
		if !errors.Is(err, framework.ErrTTLNotEnabled) {
			t.Fatalf("mode %d on a server without extendedTypesEnabled: %v; want ErrTTLNotEnabled", mode, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "extendedTypesEnabled") || strings.Count(msg, "framework:") != 1 {
			t.Errorf("%q should say extendedTypesEnabled, with one framework: prefix", msg)
		}
	}
	if stat, err := c.CheckExists().ForPath(ctx, base); err != nil || stat != nil {
		t.Errorf("%s after the refused creates: %v, %v; want no node (not even the parent)", base, stat, err)
	}
}

func TestTTL_BadInput(t *testing.T) {
	securityNoLeaks(t)
	c := newClient(t)
	ctx := t.Context()
	base := testPath(t)
	for name, b := range map[string]framework.CreateBuilder{
		"zero TTL":              c.Create().WithMode(framework.PersistentWithTTL).WithTTL(0),
		"negative TTL":          c.Create().WithMode(framework.PersistentWithTTL).WithTTL(-time.Second),
		"under a millisecond":   c.Create().WithMode(framework.PersistentSequentialWithTTL).WithTTL(time.Microsecond),
		"over MaxTTL":           c.Create().WithMode(framework.PersistentWithTTL).WithTTL(framework.MaxTTL + time.Millisecond),
		"TTL mode without TTL":  c.Create().WithMode(framework.PersistentWithTTL),
		"TTL on a plain mode":   c.Create().WithMode(framework.Persistent).WithTTL(time.Minute),
		"TTL on an ephemeral":   c.Create().WithMode(framework.EphemeralSequential).WithTTL(time.Minute),
		"unknown mode":          c.Create().WithMode(framework.CreateMode(7)).WithTTL(time.Minute),
		"TTL with parents, bad": c.Create().CreatingParentsIfNeeded().WithMode(framework.PersistentWithTTL).WithTTL(-1),
	} {
		_, err := b.ForPath(ctx, base+"/n", nil)
		if !errors.Is(err, framework.ErrInvalidArgument) {
			t.Errorf("%s: %v; want ErrInvalidArgument", name, err)
			continue
		}
		if strings.Count(err.Error(), "framework:") != 1 {
			t.Errorf("%s: %q should carry one framework: prefix", name, err)
		}
	}
	_, err := c.Transaction().Create(base+"/t", nil, framework.PersistentWithTTL).Commit(ctx)
	if !errors.Is(err, framework.ErrInvalidArgument) {
		t.Errorf("TTL create in a transaction: %v; want ErrInvalidArgument", err)
	}
	if stat, err := c.CheckExists().ForPath(ctx, base); err != nil || stat != nil {
		t.Errorf("%s after bad input: %v, %v; want no node", base, stat, err)
	}
}
