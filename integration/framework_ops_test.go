package integration

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-zookeeper/zk"
)

func TestFramework_RetryConsultsPolicyOnRetryableErrors(t *testing.T) {
	for _, zerr := range []error{zk.ErrConnectionClosed, zk.ErrNoServer, zk.ErrSessionMoved, zk.ErrSessionExpired} {
		t.Run(zerr.Error(), func(t *testing.T) {
			policy := &fwCountingPolicy{max: 5}
			c := startClient(t, builder(t, fwShared(t)).RetryPolicy(policy))
			attempts := 0
			err := c.Retry(t.Context(), func() error {
				attempts++
				if attempts <= 2 {
					return fmt.Errorf("wrapped: %w", zerr)
				}
				return nil
			})
			if err != nil || attempts != 3 || policy.calls.Load() != 2 {
				t.Errorf("two failures then success: err %v, %d attempts, policy asked %d times; want nil, 3, 2",
					err, attempts, policy.calls.Load())
			}

			policy.calls.Store(0)
			attempts = 0
			err = c.Retry(t.Context(), func() error { attempts++; return zerr })
			if !errors.Is(err, zerr) || attempts != 6 || policy.calls.Load() != 6 {
				t.Errorf("always failing: err %v, %d attempts, policy asked %d times; want %v, 6, 6",
					err, attempts, policy.calls.Load(), zerr)
			}
		})
	}
}

func TestFramework_RetryOnRealConnectionLoss(t *testing.T) {
	proxy := fwProxy(t, fwShared(t))
	policy := &fwCountingPolicy{max: 10}
	var rec fwRecorder
	c := startClient(t, builder(t, proxy.Addr()).RetryPolicy(policy).Listener(rec.listen))
	p := testPath(t)
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(t.Context(), p, []byte("v")); err != nil {
		t.Fatal(err)
	}

	// A partition: the read is sent, the reply never comes, the client
	// times the connection out and the read fails with a connection loss.
	proxy.Pause()
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, _, err := c.GetData().ForPath(t.Context(), p)
		done <- result{data, err}
	}()
	rec.expect(t, 15*time.Second, fwC, fwS)
	proxy.Resume()
	r := <-done
	if r.err != nil || string(r.data) != "v" {
		t.Fatalf("read across a connection loss = %q, %v; want \"v\"", r.data, r.err)
	}
	if policy.calls.Load() == 0 {
		t.Error("the retry policy was not consulted on the connection loss")
	}
}

func TestFramework_RetryWaitsForConnectionThenGivesUp(t *testing.T) {
	proxy := fwProxy(t, fwShared(t))
	policy := &fwCountingPolicy{max: 2}
	var rec fwRecorder
	c := startClient(t, builder(t, proxy.Addr()).ConnectionTimeout(200*time.Millisecond).
		RetryPolicy(policy).Listener(rec.listen))
	proxy.Refuse(true)
	proxy.Reset()
	rec.expect(t, 10*time.Second, fwC, fwS)

	_, err := c.CheckExists().ForPath(t.Context(), "/")
	if !errors.Is(err, framework.ErrConnectionTimeout) || !framework.IsRetryable(err) {
		t.Fatalf("read while disconnected = %v, want ErrConnectionTimeout", err)
	}
	if got := policy.calls.Load(); got != 3 {
		t.Errorf("policy consulted %d times, want 3 (2 retries allowed, then no)", got)
	}

	// A ctx that ends first wins over the connection timeout.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.CheckExists().ForPath(ctx, "/"); !errors.Is(err, context.Canceled) {
		t.Errorf("read with a cancelled ctx while disconnected = %v, want context.Canceled", err)
	}
}

func TestFramework_NonRetryableErrorsReturnAtOnce(t *testing.T) {
	policy := &fwCountingPolicy{max: 100}
	c := startClient(t, builder(t, fwShared(t)).RetryPolicy(policy))
	ctx := t.Context()
	p := testPath(t)
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, p+"/child", nil); err != nil {
		t.Fatal(err)
	}

	_, _, errGet := c.GetData().ForPath(ctx, p+"/missing")
	_, errCreate := c.Create().ForPath(ctx, p, nil)
	_, errSet := c.SetData().WithVersion(42).ForPath(ctx, p, nil)
	errDelVersion := c.Delete().WithVersion(42).ForPath(ctx, p+"/child")
	errNotEmpty := c.Delete().ForPath(ctx, p)
	errParent := func() error { _, err := c.Create().ForPath(ctx, p+"/no/parent", nil); return err }()
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"get missing", errGet, zk.ErrNoNode},
		{"create existing", errCreate, zk.ErrNodeExists},
		{"set wrong version", errSet, zk.ErrBadVersion},
		{"delete wrong version", errDelVersion, zk.ErrBadVersion},
		{"delete non-empty", errNotEmpty, zk.ErrNotEmpty},
		{"create without parent", errParent, zk.ErrNoNode},
	} {
		if !errors.Is(tc.err, tc.want) || framework.IsRetryable(tc.err) {
			t.Errorf("%s: %v, want an error matching %v", tc.name, tc.err, tc.want)
		}
	}
	if got := policy.calls.Load(); got != 0 {
		t.Errorf("retry policy consulted %d times for non-retryable errors", got)
	}
	// A missing node reads as a nil stat, not an error.
	if stat, err := c.CheckExists().ForPath(ctx, p+"/missing"); stat != nil || err != nil {
		t.Errorf("CheckExists of a missing node = %v, %v; want nil, nil", stat, err)
	}
}

func TestFramework_NamespacePrefixesServerPaths(t *testing.T) {
	ns := "it-ns-" + unsafeChars.ReplaceAllString(t.Name(), "_")
	obs := fwRawConn(t, fwShared(t))
	c := startClient(t, builder(t, fwShared(t)).Namespace(ns))
	ctx := t.Context()
	if c.Namespace() != ns {
		t.Errorf("Namespace() = %q, want %q", c.Namespace(), ns)
	}

	got, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, "/a/b", []byte("b"))
	if err != nil || got != "/a/b" {
		t.Fatalf("create /a/b in namespace = %q, %v", got, err)
	}
	data, _, err := obs.Get("/" + ns + "/a/b")
	if err != nil || string(data) != "b" {
		t.Fatalf("server path /%s/a/b: %q, %v", ns, data, err)
	}
	seq, err := c.Create().WithMode(framework.PersistentSequential).ForPath(ctx, "/a/s-", nil)
	if err != nil || !regexp.MustCompile(`^/a/s-\d{10}$`).MatchString(seq) {
		t.Errorf("sequential create in namespace = %q, %v", seq, err)
	}
	prot, err := c.Create().WithProtection().ForPath(ctx, "/a/p", nil)
	if err != nil || !regexp.MustCompile(`^/a/_c_[0-9a-f-]{36}-p$`).MatchString(prot) {
		t.Errorf("protected create in namespace = %q, %v", prot, err)
	}
	if kids, err := c.GetChildren().ForPath(ctx, "/"); err != nil || !slices.Equal(kids, []string{"a"}) {
		t.Errorf("children of / in namespace = %v, %v; want [a]", kids, err)
	}
	if stat, err := c.CheckExists().ForPath(ctx, "/a/b"); err != nil || stat == nil {
		t.Errorf("exists /a/b in namespace = %v, %v", stat, err)
	}
	if _, err := c.SetData().ForPath(ctx, "/a/b", []byte("c")); err != nil {
		t.Fatal(err)
	}
	if data, _, _ := obs.Get("/" + ns + "/a/b"); string(data) != "c" {
		t.Errorf("set in namespace wrote %q to the server path, want c", data)
	}
	res, err := c.Transaction().Create("/a/t-", nil, framework.PersistentSequential).Check("/a/b", 1).Commit(ctx)
	if err != nil || !regexp.MustCompile(`^/a/t-\d{10}$`).MatchString(res[0].Path) || res[1].Path != "/a/b" {
		t.Errorf("transaction in namespace: %+v, %v", res, err)
	}
	if ok, _, _ := obs.Exists("/a"); ok {
		t.Error("a namespaced create leaked outside the namespace")
	}

	// Emptied, the namespace container is reaped by the server.
	if err := c.Delete().DeletingChildrenIfNeeded().ForPath(ctx, "/a"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() bool { ok, _, err := obs.Exists("/" + ns); return err == nil && !ok },
		"the empty namespace container is reaped")
}

func TestFramework_TransactionCommitsAtomically(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	p := testPath(t)
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, p, nil); err != nil {
		t.Fatal(err)
	}

	res, err := c.Transaction().
		Create(p+"/a", []byte("1"), framework.Persistent).
		Create(p+"/s-", nil, framework.PersistentSequential).
		SetData(p+"/a", []byte("2"), 0).
		Check(p, 0).
		Commit(ctx)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	want := []framework.OpType{framework.OpCreate, framework.OpCreate, framework.OpSetData, framework.OpCheck}
	if len(res) != len(want) {
		t.Fatalf("got %d results, want %d", len(res), len(want))
	}
	for i, r := range res {
		if r.Type != want[i] || r.Err != nil {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	if res[0].Path != p+"/a" || !regexp.MustCompile(`/s-\d{10}$`).MatchString(res[1].Path) {
		t.Errorf("create results: %q, %q", res[0].Path, res[1].Path)
	}
	if res[2].Stat == nil || res[2].Stat.Version != 1 {
		t.Errorf("setData result stat: %+v", res[2].Stat)
	}
	if data, _, err := c.GetData().ForPath(ctx, p+"/a"); err != nil || string(data) != "2" {
		t.Errorf("server holds %q, %v; want 2", data, err)
	}
	if kids := children(t, c, p); len(kids) != 2 {
		t.Errorf("server holds %v, want a and one s-", kids)
	}
}

func TestFramework_TransactionFailingCheckRollsBack(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	p := testPath(t)
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, p+"/a", []byte("1")); err != nil {
		t.Fatal(err)
	}

	res, err := c.Transaction().
		Create(p+"/new", nil, framework.Persistent).
		SetData(p+"/a", []byte("2"), -1).
		Check(p+"/a", 7).
		Delete(p+"/a", -1).
		Commit(ctx)
	if !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("commit with a failing check = %v, want zk.ErrBadVersion", err)
	}
	if len(res) != 4 || !errors.Is(res[2].Err, zk.ErrBadVersion) {
		t.Fatalf("results %+v: want the check (op 2) to report zk.ErrBadVersion", res)
	}
	if kids := children(t, c, p); !slices.Equal(kids, []string{"a"}) {
		t.Errorf("after rollback the server holds %v, want [a]", kids)
	}
	if data, stat, err := c.GetData().ForPath(ctx, p+"/a"); err != nil || string(data) != "1" || stat.Version != 0 {
		t.Errorf("after rollback /a = %q (version %v), %v; want 1 at version 0", data, stat, err)
	}

	// An operation on a missing node fails the same way.
	_, err = c.Transaction().Create(p+"/new", nil, framework.Persistent).Delete(p+"/missing", -1).Commit(ctx)
	if !errors.Is(err, zk.ErrNoNode) {
		t.Errorf("commit deleting a missing node = %v, want zk.ErrNoNode", err)
	}
	if kids := children(t, c, p); !slices.Equal(kids, []string{"a"}) {
		t.Errorf("after rollback the server holds %v, want [a]", kids)
	}
}

// Watches set Into one channel deliver there, in the server's order (a
// multi's events in the order of its operations), and ForPathW returns a
// nil channel. A channel with no room drops the event: the client does
// not block on it, and goes on serving.
func TestFramework_WatchesIntoOneChannel(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	p := testPath(t)
	a, b := p+"/a", p+"/b"
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, a, []byte("x")); err != nil {
		t.Fatal(err)
	}
	ch := make(chan zk.Event, 2)
	st, own, err := c.CheckExists().Into(ch).ForPathW(ctx, b)
	if err != nil || st != nil || own != nil {
		t.Fatalf("exists %s into ch = %v, chan %v, %v; want no node, a nil chan, no error", b, st, own, err)
	}
	_, _, own, err = c.GetData().Into(ch).ForPathW(ctx, a)
	if err != nil || own != nil {
		t.Fatalf("get %s into ch: chan %v, %v", a, own, err)
	}
	if _, err := c.Transaction().Create(b, nil, framework.Persistent).Delete(a, -1).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []zk.Event{{Type: zk.EventNodeCreated, Path: b}, {Type: zk.EventNodeDeleted, Path: a}} {
		select {
		case ev := <-ch:
			if ev.Type != want.Type || ev.Path != want.Path {
				t.Fatalf("event %v %s, want %v %s", ev.Type, ev.Path, want.Type, want.Path)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event %v %s", want.Type, want.Path)
		}
	}

	// No room: the second event is dropped, and nothing blocks.
	full := make(chan zk.Event, 1)
	for _, q := range []string{a, p + "/c"} {
		if _, _, err := c.CheckExists().Into(full).ForPathW(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Transaction().Create(a, nil, framework.Persistent).Create(p+"/c", nil, framework.Persistent).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if ev := <-full; ev.Path != a {
		t.Fatalf("first event on %s, want %s", ev.Path, a)
	}
	if _, err := c.SetData().ForPath(ctx, a, []byte("y")); err != nil {
		t.Fatalf("the client after a dropped event: %v", err)
	}
	select {
	case ev := <-full:
		t.Fatalf("a second event came through a full channel: %v %s", ev.Type, ev.Path)
	default:
	}
}
