package integration

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-curator/curator/framework"
)

// TestFramework_ReadsAReplyOverFourMiB reads 22,000 children with long
// names: a reply of about 4.6 MB, over the 4 MiB the client's wire used to
// accept (go-zookeeper reads any size). It made the client fail with a
// closed connection after ten Suspended states, each closing every
// holder's Lost() under the standard error policy (issue 24).
func TestFramework_ReadsAReplyOverFourMiB(t *testing.T) {
	const n, batch = 22000, 2000
	c := newClient(t)
	ctx := t.Context()
	p := testPath(t)
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 200)
	for i := 0; i < n; i += batch {
		tx := c.Transaction()
		for j := i; j < i+batch; j++ {
			tx = tx.Create(fmt.Sprintf("%s/%s-%05d", p, pad, j), nil, framework.Persistent)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatalf("creating children %d to %d: %v", i, i+batch, err)
		}
	}
	var rec fwRecorder
	defer c.AddListener(rec.listen)()
	kids, err := c.GetChildren().ForPath(ctx, p)
	if err != nil {
		t.Fatalf("reading %d children (a reply over 4 MiB): %v", n, err)
	}
	if len(kids) != n {
		t.Fatalf("read %d children, want %d", len(kids), n)
	}
	if got := rec.got(); len(got) != 0 {
		t.Fatalf("connection states during the read: %v, want none", got)
	}
	// Clean up in batches: the test path's own cleanup deletes one by one.
	for i := 0; i < n; i += batch {
		tx := c.Transaction()
		for j := i; j < i+batch; j++ {
			tx = tx.Delete(fmt.Sprintf("%s/%s-%05d", p, pad, j), -1)
		}
		if _, err := tx.Commit(ctx); err != nil {
			t.Fatalf("deleting children %d to %d: %v", i, i+batch, err)
		}
	}
}
