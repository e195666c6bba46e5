package integration

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"
)

var fwBadPaths = []string{"", "a", "/a/", "//a", "/a//b", "/a/./b", "/a/../b", "/a\x00b", "/a\x01b", "/a/.", "/.."}

// fwOps runs every kind of operation on path p and returns their errors,
// named.
func fwOps(ctx context.Context, c *framework.Client, p string) map[string]error {
	errs := map[string]error{}
	_, errs["create"] = c.Create().ForPath(ctx, p, nil)
	_, errs["create protected parents"] = c.Create().CreatingParentContainersIfNeeded().WithProtection().
		WithMode(framework.EphemeralSequential).ForPath(ctx, p, nil)
	errs["delete"] = c.Delete().ForPath(ctx, p)
	errs["delete guaranteed quietly children"] = c.Delete().Guaranteed().Quietly().DeletingChildrenIfNeeded().ForPath(ctx, p)
	_, _, errs["get"] = c.GetData().ForPath(ctx, p)
	_, _, _, errs["getW"] = c.GetData().ForPathW(ctx, p)
	_, errs["exists"] = c.CheckExists().ForPath(ctx, p)
	_, _, errs["existsW"] = c.CheckExists().ForPathW(ctx, p)
	_, errs["children"] = c.GetChildren().ForPath(ctx, p)
	_, _, errs["childrenW"] = c.GetChildren().ForPathW(ctx, p)
	_, errs["set"] = c.SetData().WithVersion(3).ForPath(ctx, p, nil)
	errs["sync"] = c.Sync().ForPath(ctx, p)
	_, errs["tx create"] = c.Transaction().Create(p, nil, framework.Persistent).Commit(ctx)
	_, errs["tx delete"] = c.Transaction().Check("/", -1).Delete(p, -1).Commit(ctx)
	_, errs["tx set"] = c.Transaction().SetData(p, nil, -1).Commit(ctx)
	_, errs["tx check"] = c.Transaction().Check(p, 0).Commit(ctx)
	return errs
}

func TestFramework_BadPathsFailBeforeIO(t *testing.T) {
	var rc fwRequestCounter
	c := startClient(t, builder(t, fwShared(t)).Dialer(rc.dial))
	ctx := t.Context()
	before := rc.count()
	for _, p := range fwBadPaths {
		for op, err := range fwOps(ctx, c, p) {
			if !errors.Is(err, framework.ErrInvalidPath) {
				t.Errorf("%s %q = %v, want ErrInvalidPath", op, p, err)
			} else if !strings.Contains(err.Error(), strconv.Quote(p)) {
				t.Errorf("%s %q: error %q does not name the path", op, p, err)
			}
		}
		if err := framework.ValidatePath(p); !errors.Is(err, framework.ErrInvalidPath) {
			t.Errorf("ValidatePath(%q) = %v", p, err)
		}
	}
	if got := rc.count(); got != before {
		t.Errorf("bad paths sent %d requests to the server, want none", got-before)
	}
	// The counter does count: a good read is one request.
	if _, err := c.CheckExists().ForPath(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if got := rc.count(); got != before+1 {
		t.Errorf("one good read counted %d requests", got-before)
	}
}

func TestFramework_BadArgumentsFailBeforeIO(t *testing.T) {
	var rc fwRequestCounter
	c := startClient(t, builder(t, fwShared(t)).Dialer(rc.dial))
	ctx := t.Context()
	before := rc.count()
	p := testPath(t)
	_, errMode := c.Create().WithMode(framework.CreateMode(42)).ForPath(ctx, p, nil)
	_, errRoot := c.Create().ForPath(ctx, "/", nil)
	errDelRoot := c.Delete().ForPath(ctx, "/")
	_, errEmptyTx := c.Transaction().Commit(ctx)
	_, errTxTTL := c.Transaction().Create(p, nil, framework.PersistentWithTTL).Commit(ctx) // a TTL mode without its TTL
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"create mode 42", errMode, framework.ErrInvalidArgument},
		{"create /", errRoot, framework.ErrInvalidPath},
		{"delete /", errDelRoot, framework.ErrInvalidPath},
		{"empty transaction", errEmptyTx, framework.ErrInvalidArgument},
		{"TTL create without a TTL in a transaction", errTxTTL, framework.ErrInvalidArgument},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if got := rc.count(); got != before {
		t.Errorf("bad arguments sent %d requests to the server, want none", got-before)
	}
}

// fwLifecycleErrors checks that every call on c returns want, and that none
// panics.
func fwLifecycleErrors(t *testing.T, c *framework.Client, want error) {
	t.Helper()
	ctx := t.Context()
	for op, err := range fwOps(ctx, c, "/x") {
		if !errors.Is(err, want) {
			t.Errorf("%s = %v, want %v", op, err, want)
		}
	}
	if err := c.Retry(ctx, func() error { t.Error("Retry ran its op"); return nil }); !errors.Is(err, want) {
		t.Errorf("Retry = %v, want %v", err, want)
	}
	if err := c.BlockUntilConnected(ctx); !errors.Is(err, want) {
		t.Errorf("BlockUntilConnected = %v, want %v", err, want)
	}
	if err := c.Check(); !errors.Is(err, want) {
		t.Errorf("Check = %v, want %v", err, want)
	}
	if zc := c.ZooKeeper(); zc != nil && want != framework.ErrClosed {
		t.Errorf("ZooKeeper() = %v before Start", zc)
	}
	if want != framework.ErrClosed && c.State() != framework.Latent {
		t.Errorf("State() = %v, want LATENT", c.State())
	}
	for _, p := range []framework.ErrorPolicy{framework.StandardErrorPolicy, framework.SessionErrorPolicy} {
		if ch := c.LossSignal(p); !fwIsClosed(ch) {
			t.Errorf("LossSignal(%v) is open on a client that cannot hold anything", p)
		}
	}
	c.AddListener(func(framework.ConnectionState) {})()
}

func TestFramework_NilClientReturnsErrNilClient(t *testing.T) {
	var c *framework.Client
	fwLifecycleErrors(t, c, framework.ErrNilClient)
	if err := c.Start(t.Context()); !errors.Is(err, framework.ErrNilClient) {
		t.Errorf("Start = %v", err)
	}
	if err := c.Close(); !errors.Is(err, framework.ErrNilClient) {
		t.Errorf("Close = %v", err)
	}
	_ = c.SessionID()
	_ = c.Namespace()
	_ = c.DefaultData()
	_ = c.ErrorPolicy()
	_ = c.RetryPolicy()
	_ = c.SessionTimeout()
	_ = c.ConnectionTimeout()
	_ = c.Logger()
}

func TestFramework_UnstartedClientReturnsErrNotStarted(t *testing.T) {
	var rc fwRequestCounter
	dials := 0
	c, err := builder(t, fwShared(t)).Dialer(func(n, a string, d time.Duration) (net.Conn, error) {
		dials++
		return rc.dial(n, a, d)
	}).Build()
	if err != nil {
		t.Fatal(err)
	}
	fwLifecycleErrors(t, c, framework.ErrNotStarted)
	if dials != 0 || rc.count() != 0 {
		t.Errorf("an unstarted client dialed %d times and sent %d requests", dials, rc.count())
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close of an unstarted client: %v", err)
	}
	if err := c.Start(t.Context()); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
}

func TestFramework_ClosedClientReturnsErrClosed(t *testing.T) {
	c := newClient(t)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	fwLifecycleErrors(t, c, framework.ErrClosed)
	if err := c.Start(t.Context()); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
}

func TestFramework_StartTwiceReturnsErrAlreadyStarted(t *testing.T) {
	c := newClient(t)
	if err := c.Start(t.Context()); !errors.Is(err, framework.ErrAlreadyStarted) {
		t.Errorf("second Start = %v, want ErrAlreadyStarted", err)
	}
	// Concurrent Starts: exactly one wins.
	c2, err := builder(t, fwShared(t)).Build()
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = c2.Start(t.Context()) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, framework.ErrAlreadyStarted):
			t.Errorf("concurrent Start = %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d of 4 concurrent Starts succeeded, want 1", won)
	}
	if _, err := c2.CheckExists().ForPath(t.Context(), "/"); err != nil {
		t.Errorf("read after concurrent Starts: %v", err)
	}
}

func TestFramework_CloseLeavesNoGoroutines(t *testing.T) {
	connect := fwShared(t) // the shared server's goroutines predate the check
	ignore := goleak.IgnoreCurrent()
	func() {
		var rec fwRecorder
		c, err := builder(t, connect).Listener(rec.listen).Build()
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		p := testPath(t)
		if _, err := c.Create().CreatingParentContainersIfNeeded().WithProtection().
			WithMode(framework.EphemeralSequential).ForPath(ctx, p+"/n-", nil); err != nil {
			t.Fatal(err)
		}
		// A watch left pending on a node that Close does not touch.
		if _, err := c.Create().ForPath(ctx, p+"/w", nil); err != nil {
			t.Fatal(err)
		}
		_, _, watch, err := c.GetData().ForPathW(ctx, p+"/w")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Delete().Guaranteed().ForPath(ctx, p+"/missing"); !errors.Is(err, zk.ErrNoNode) {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-watch:
			if ev.Type != zk.EventNotWatching {
				t.Errorf("pending watch got %+v at Close, want EventNotWatching", ev)
			}
		case <-time.After(10 * time.Second):
			t.Error("a pending watch was silently dropped at Close")
		}
	}()
	goleak.VerifyNone(t, ignore)
}
