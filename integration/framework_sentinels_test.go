package integration

import (
	"errors"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-zookeeper/zk"
)

// The server's answers match the framework's own sentinels and
// go-zookeeper's alike, in operation errors and in a transaction's results
// (issue 26: matching "no such node" used to mean importing go-zookeeper).
func TestFramework_SentinelsForTheServersAnswers(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	p := testPath(t)
	both := func(what string, err, fw, z error) {
		t.Helper()
		if !errors.Is(err, fw) || !errors.Is(err, z) {
			t.Errorf("%s: %v; want it to match %v and %v", what, err, fw, z)
		}
	}
	_, _, err := c.GetData().ForPath(ctx, p)
	both("GetData of a missing node", err, framework.ErrNoNode, zk.ErrNoNode)
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, p+"/child", nil); err != nil {
		t.Fatal(err)
	}
	_, err = c.Create().ForPath(ctx, p, nil)
	both("Create of an existing node", err, framework.ErrNodeExists, zk.ErrNodeExists)
	_, err = c.SetData().WithVersion(42).ForPath(ctx, p, nil)
	both("SetData with a wrong version", err, framework.ErrBadVersion, zk.ErrBadVersion)
	err = c.Delete().ForPath(ctx, p)
	both("Delete of a node with children", err, framework.ErrNotEmpty, zk.ErrNotEmpty)
	res, err := c.Transaction().Check(p+"/none", -1).Create(p+"/other", nil, framework.Persistent).Commit(ctx)
	if err == nil {
		t.Fatal("a transaction checking a missing node committed")
	}
	both("the failed op of a transaction", res[0].Err, framework.ErrNoNode, zk.ErrNoNode)
	if errors.Is(err, framework.ErrNodeExists) {
		t.Errorf("transaction error %v matches ErrNodeExists", err)
	}
}
