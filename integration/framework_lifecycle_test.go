package integration

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-zookeeper/zk"
)

// The lifecycle tests check what a caller relies on around Start and
// Close: Close always returns (from a listener, past a stuck listener,
// with background work in flight) and wakes what sleeps; a done or nil ctx
// and a zero Client are refused without I/O and without a panic. Time
// bounds are liveness checks with wide margins, not performance claims.

// lcCloseBound is how long Close may take before a test calls it hung.
const lcCloseBound = 5 * time.Second

// lcStart builds and starts a client whose Close is left to the test:
// startClient's cleanup would call Close again, and a Close that hangs
// (the fault some of these tests look for) would then hang the cleanup.
// The cleanup here closes it under a bound instead.
func lcStart(t *testing.T, b *framework.Builder) *framework.Client {
	t.Helper()
	c, err := b.Build()
	if err != nil {
		t.Fatalf("build client: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start client: %v", err)
	}
	t.Cleanup(func() {
		if took, ok := lcClose(c, 30*time.Second); !ok {
			t.Errorf("cleanup: Close did not return within %v", took)
		}
	})
	return c
}

// lcClose calls c.Close on another goroutine and waits up to bound for it.
// It reports how long Close took and whether it returned.
func lcClose(c *framework.Client, bound time.Duration) (time.Duration, bool) {
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Close()
	}()
	select {
	case <-done:
		return time.Since(start), true
	case <-time.After(bound):
		return time.Since(start), false
	}
}

func TestFramework_CloseFromListenerReturns(t *testing.T) {
	faultsNoLeaks(t)

	t.Run("Close inside a listener callback", func(t *testing.T) {
		// On Suspended: the listener's own goroutine must not be waited for
		// by the Close it runs.
		proxy := fwProxy(t, fwShared(t))
		c := lcStart(t, builder(t, proxy.Addr()))
		closed := make(chan error, 1)
		var once sync.Once
		c.AddListener(func(s framework.ConnectionState) {
			if s == framework.Suspended {
				once.Do(func() { closed <- c.Close() })
			}
		})
		proxy.Reset()
		select {
		case err := <-closed:
			if err != nil {
				t.Errorf("Close from a listener = %v, want nil", err)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("Close called from a listener callback did not return: it waits for its own listener")
		}
		if took, ok := lcClose(c, lcCloseBound); !ok {
			t.Errorf("a second Close (after the one from the listener) did not return within %v", took)
		}
		if s := c.State(); s.IsConnected() {
			t.Errorf("State() after Close from a listener = %v", s)
		}
	})

	t.Run("listener that never returns", func(t *testing.T) {
		release := make(chan struct{})
		entered := make(chan struct{})
		var enterOnce sync.Once
		c := lcStart(t, builder(t, fwShared(t)).Listener(func(framework.ConnectionState) {
			enterOnce.Do(func() { close(entered) })
			<-release
		}))
		t.Cleanup(func() { close(release) }) // before the client's cleanup and the leak check
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the blocking listener never got the first state")
		}
		if took, ok := lcClose(c, lcCloseBound); !ok {
			t.Fatalf("Close with a listener stuck in its callback did not return within %v", took)
		}
		if took, ok := lcClose(c, lcCloseBound); !ok {
			t.Errorf("second Close with a listener stuck in its callback did not return within %v", took)
		}
		if _, err := c.CheckExists().ForPath(t.Context(), "/"); !errors.Is(err, framework.ErrClosed) {
			t.Errorf("operation after Close = %v, want ErrClosed", err)
		}
	})
}

func TestFramework_CloseDoesNotWaitForBackgroundWork(t *testing.T) {
	faultsNoLeaks(t)
	proxy := fwProxy(t, fwShared(t))
	obs := newClient(t)
	p := testPath(t)
	if _, err := obs.Create().CreatingParentsIfNeeded().ForPath(t.Context(), p, nil); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		obs.Delete().Quietly().ForPath(ctx, p)
	})

	// After the reconnect below, the proxy pauses at once: the guaranteed
	// delete that the reconnect starts in the background is then in flight
	// on a connection that answers nothing, for the read timeout of a 15 s
	// session (10 s).
	var rec fwRecorder
	var pauseOnReconnect atomic.Bool
	c := lcStart(t, builder(t, proxy.Addr()).
		SessionTimeout(15*time.Second).
		ConnectionTimeout(5*time.Second).
		Logger(fwLogger(t)).
		Listener(func(s framework.ConnectionState) {
			if s == framework.Reconnected && pauseOnReconnect.CompareAndSwap(true, false) {
				proxy.Pause()
			}
			rec.listen(s)
		}))

	proxy.Pause()
	proxy.Reset()
	rec.expect(t, 10*time.Second, fwC, fwS)
	short, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	err := c.Delete().Guaranteed().ForPath(short, p)
	cancel()
	if err == nil {
		t.Fatal("guaranteed delete with no connection returned nil")
	}

	// Let the client reconnect, slowly, so that the proxy is paused again
	// before the background delete's reply can come back.
	proxy.SetLatency(300 * time.Millisecond)
	pauseOnReconnect.Store(true)
	proxy.Resume()
	rec.expect(t, 15*time.Second, fwC, fwS, fwR)
	time.Sleep(500 * time.Millisecond) // the background delete is sent

	start := time.Now()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		c.Close()
	}()
	select {
	case <-closed:
	case <-time.After(lcCloseBound):
		select { // wait on, for the report and so that nothing is left running
		case <-closed:
		case <-time.After(30 * time.Second):
		}
		t.Fatalf("Close with a guaranteed delete in flight took %v (still running: %v), want under %v: "+
			"it must close the connection before waiting for background work",
			time.Since(start).Round(time.Millisecond), !fwIsClosed(closed), lcCloseBound)
	}
}

// lcSleepyPolicy always retries, after a minute; consulted closes when it
// is first asked.
type lcSleepyPolicy struct {
	once      sync.Once
	consulted chan struct{}
}

func (p *lcSleepyPolicy) AllowRetry(int, time.Duration) (time.Duration, bool) {
	p.once.Do(func() { close(p.consulted) })
	return time.Minute, true
}

func TestFramework_CloseWakesRetrySleep(t *testing.T) {
	faultsNoLeaks(t)
	proxy := fwProxy(t, fwShared(t))
	policy := &lcSleepyPolicy{consulted: make(chan struct{})}
	var rec fwRecorder
	c := lcStart(t, builder(t, proxy.Addr()).
		ConnectionTimeout(500*time.Millisecond).
		RetryPolicy(policy).
		Listener(rec.listen))

	proxy.Refuse(true)
	proxy.Reset()
	rec.expect(t, 10*time.Second, fwC, fwS)

	opCtx, cancelOp := context.WithCancel(context.Background())
	result := make(chan error, 1)
	go func() {
		_, err := c.CheckExists().ForPath(opCtx, "/")
		result <- err
	}()
	t.Cleanup(func() { cancelOp(); <-result }) // ends a sleep Close did not wake, before the leak check
	select {
	case <-policy.consulted:
	case <-time.After(15 * time.Second):
		t.Fatal("the operation never asked the retry policy for a retry")
	}
	time.Sleep(100 * time.Millisecond) // now in the minute-long sleep

	if took, ok := lcClose(c, lcCloseBound); !ok {
		t.Fatalf("Close did not return within %v", took)
	}
	select {
	case err := <-result:
		result <- err // for the cleanup
		if !errors.Is(err, framework.ErrClosed) {
			t.Errorf("operation sleeping in the retry loop at Close = %v, want ErrClosed", err)
		}
	case <-time.After(lcCloseBound):
		t.Fatalf("an operation sleeping in the retry loop was not woken by Close within %v", lcCloseBound)
	}
}

func TestFramework_StateAfterCloseIsNotConnected(t *testing.T) {
	var rec fwRecorder
	c := startClient(t, builder(t, fwShared(t)).Listener(rec.listen))
	rec.expect(t, 10*time.Second, fwC)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if s := c.State(); s.IsConnected() {
		t.Errorf("State() after Close = %v, want a state that is not connected", s)
	}
}

func TestFramework_CancelledCtxDoesNothing(t *testing.T) {
	var rc fwRequestCounter
	c := startClient(t, builder(t, fwShared(t)).Dialer(rc.dial))
	obs := newClient(t)
	base := testPath(t)
	existing := base + "/existing"
	if _, err := obs.Create().CreatingParentsIfNeeded().ForPath(t.Context(), existing, []byte("before")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		obs.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, base)
	})
	done, cancel := context.WithCancel(t.Context())
	cancel()

	before := rc.count()
	_, errCreate := c.Create().CreatingParentsIfNeeded().ForPath(done, base+"/created", nil)
	_, errProt := c.Create().CreatingParentContainersIfNeeded().WithProtection().
		WithMode(framework.EphemeralSequential).ForPath(done, base+"/prot/n-", nil)
	_, errSet := c.SetData().ForPath(done, existing, []byte("after"))
	errDelete := c.Delete().Guaranteed().ForPath(done, existing)
	_, errTx := c.Transaction().Create(base+"/tx", nil, framework.Persistent).Commit(done)
	for name, err := range map[string]error{
		"create": errCreate, "protected create": errProt, "set": errSet,
		"guaranteed delete": errDelete, "transaction": errTx,
	} {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled ctx = %v, want context.Canceled", name, err)
		}
	}
	if n := rc.count() - before; n != 0 {
		t.Errorf("calls with a cancelled ctx sent %d requests to the server, want none", n)
	}

	m := newMutex(t, c, base+"/lock")
	if h, err := m.Acquire(done); err == nil {
		t.Error("mutex.Acquire with a cancelled ctx returned nil")
		h.Release(t.Context())
	}

	time.Sleep(500 * time.Millisecond) // let any background work that should not exist run
	for _, p := range []string{base + "/created", base + "/tx", base + "/prot"} {
		if stat, err := obs.CheckExists().ForPath(t.Context(), p); err != nil || stat != nil {
			t.Errorf("%s after calls with a cancelled ctx: stat %v, err %v; want no node", p, stat, err)
		}
	}
	if kids := children(t, obs, base+"/lock"); len(kids) != 0 {
		t.Errorf("mutex.Acquire with a cancelled ctx left %v under the lock path", kids)
	}
	data, _, err := obs.GetData().ForPath(t.Context(), existing)
	if err != nil || string(data) != "before" {
		t.Errorf("%s after a cancelled set and delete: data %q, err %v; want it untouched", existing, data, err)
	}
}

// lcNoPanic runs f and turns a panic into a test error, and a call that
// does not return within 5 s (a panic that left a lock held) into a
// failure.
func lcNoPanic(t *testing.T, name string, f func()) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f()
	}()
	select {
	case r := <-done:
		if r != nil {
			t.Errorf("%s panicked: %v", name, r)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not return within 5s", name)
	}
}

// lcOps lists every call that takes a ctx, and a few without, each on
// path p: calls a zero Client must refuse with an error.
func lcOps(c *framework.Client, p string) map[string]func(ctx context.Context) error {
	return map[string]func(ctx context.Context) error{
		"Start":               func(ctx context.Context) error { return c.Start(ctx) },
		"BlockUntilConnected": func(ctx context.Context) error { return c.BlockUntilConnected(ctx) },
		"Check":               func(context.Context) error { return c.Check() },
		"Retry":               func(ctx context.Context) error { return c.Retry(ctx, func() error { return nil }) },
		"CurrentSession":      func(ctx context.Context) error { _, err := c.CurrentSession(ctx); return err },
		"Create":              func(ctx context.Context) error { _, err := c.Create().ForPath(ctx, p, nil); return err },
		"Create protected": func(ctx context.Context) error {
			_, err := c.Create().WithProtection().WithMode(framework.EphemeralSequential).ForPath(ctx, p, nil)
			return err
		},
		"Delete":            func(ctx context.Context) error { return c.Delete().ForPath(ctx, p) },
		"Delete guaranteed": func(ctx context.Context) error { return c.Delete().Guaranteed().ForPath(ctx, p) },
		"GetData":           func(ctx context.Context) error { _, _, err := c.GetData().ForPath(ctx, p); return err },
		"GetData W":         func(ctx context.Context) error { _, _, _, err := c.GetData().ForPathW(ctx, p); return err },
		"CheckExists":       func(ctx context.Context) error { _, err := c.CheckExists().ForPath(ctx, p); return err },
		"CheckExists W":     func(ctx context.Context) error { _, _, err := c.CheckExists().ForPathW(ctx, p); return err },
		"GetChildren":       func(ctx context.Context) error { _, err := c.GetChildren().ForPath(ctx, p); return err },
		"GetChildren W":     func(ctx context.Context) error { _, _, err := c.GetChildren().ForPathW(ctx, p); return err },
		"GetChildren Stat":  func(ctx context.Context) error { _, _, err := c.GetChildren().ForPathStat(ctx, p); return err },
		"SetData":           func(ctx context.Context) error { _, err := c.SetData().ForPath(ctx, p, nil); return err },
		"Sync":              func(ctx context.Context) error { return c.Sync().ForPath(ctx, p) },
		"Transaction": func(ctx context.Context) error {
			_, err := c.Transaction().Create(p, nil, framework.Persistent).Commit(ctx)
			return err
		},
		"FindProtected": func(ctx context.Context) error {
			_, err := c.FindProtected(ctx, p, framework.NewProtectedPrefix())
			return err
		},
		"CleanupProtected": func(context.Context) error { return c.CleanupProtected(p, framework.NewProtectedPrefix()) },
		"mutex.New + Acquire": func(ctx context.Context) error {
			m, err := mutex.New(c, p)
			if err != nil {
				return err
			}
			_, err = m.Acquire(ctx)
			return err
		},
	}
}

func TestFramework_ZeroValueClientReturnsErrors(t *testing.T) {
	var zero framework.Client
	for name, c := range map[string]*framework.Client{"&framework.Client{}": {}, "var c framework.Client": &zero} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			for op, f := range lcOps(c, "/x") {
				lcNoPanic(t, op, func() {
					if err := f(ctx); err == nil {
						t.Errorf("%s on a zero Client = nil, want an error", op)
					}
				})
			}
			lcNoPanic(t, "State", func() {
				if s := c.State(); s.IsConnected() {
					t.Errorf("State() of a zero Client = %v", s)
				}
			})
			lcNoPanic(t, "AddListener", func() {
				remove := c.AddListener(func(framework.ConnectionState) {})
				if remove == nil {
					t.Error("AddListener on a zero Client returned a nil remove func")
					return
				}
				remove()
			})
			lcNoPanic(t, "LossSignal", func() {
				if ch := c.LossSignal(framework.StandardErrorPolicy); !fwIsClosed(ch) {
					t.Error("LossSignal of a zero Client is open: there is nothing to trust")
				}
			})
			lcNoPanic(t, "accessors", func() {
				_ = c.SessionID()
				_ = c.ZooKeeper()
				_ = c.Namespace()
				_ = c.Logger()
			})
			lcNoPanic(t, "Close", func() { c.Close() })
			lcNoPanic(t, "Close again", func() { c.Close() })
			for op, f := range lcOps(c, "/x") {
				lcNoPanic(t, op+" after Close", func() {
					if err := f(ctx); err == nil {
						t.Errorf("%s on a closed zero Client = nil, want an error", op)
					}
				})
			}
		})
	}
}

func TestFramework_NilCtxIsInvalidArgument(t *testing.T) {
	var nilCtx context.Context // a variable, so that vet does not object to a literal nil
	c := newClient(t)
	obs := newClient(t)
	p := testPath(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		obs.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, p)
	})
	for op, f := range lcOps(c, p+"/op") {
		if op == "Start" || op == "Check" || op == "CleanupProtected" || op == "mutex.New + Acquire" {
			continue // Start on a started client, and calls without a ctx
		}
		lcNoPanic(t, op+"(nil ctx)", func() {
			if err := f(nilCtx); !errors.Is(err, framework.ErrInvalidArgument) {
				t.Errorf("%s with a nil ctx = %v, want ErrInvalidArgument", op, err)
			}
		})
	}
	lcNoPanic(t, "Create(nil ctx) at a fresh path", func() {
		if _, err := c.Create().CreatingParentsIfNeeded().ForPath(nilCtx, p, nil); !errors.Is(err, framework.ErrInvalidArgument) {
			t.Errorf("Create with a nil ctx = %v, want ErrInvalidArgument", err)
		}
	})
	if stat, err := obs.CheckExists().ForPath(t.Context(), p); err != nil || stat != nil {
		t.Errorf("Create with a nil ctx made %s (stat %v, err %v)", p, stat, err)
	}

	fresh, err := builder(t, fwShared(t)).Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fresh.Close() })
	lcNoPanic(t, "Start(nil ctx)", func() {
		if err := fresh.Start(nilCtx); !errors.Is(err, framework.ErrInvalidArgument) {
			t.Errorf("Start with a nil ctx = %v, want ErrInvalidArgument", err)
		}
	})
	unstarted, err := builder(t, fwShared(t)).Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unstarted.Close() })
	lcNoPanic(t, "BlockUntilConnected(nil ctx) before Start", func() {
		if err := unstarted.BlockUntilConnected(nilCtx); err == nil {
			t.Error("BlockUntilConnected with a nil ctx before Start = nil, want an error")
		}
	})
}

func TestFramework_HandshakeSlowerThanConnectionTimeoutConnects(t *testing.T) {
	proxy := fwProxy(t, fwShared(t))
	proxy.SetLatency(300 * time.Millisecond) // each way: a 600 ms round trip
	c, err := builder(t, proxy.Addr()).
		ConnectionTimeout(500 * time.Millisecond).
		SessionTimeout(10 * time.Second).
		Logger(fwLogger(t)).
		Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("Start through a 600 ms round trip with a 500 ms connection timeout and a 10 s session: %v", err)
	}
	if _, err := c.CheckExists().ForPath(ctx, "/"); err != nil {
		t.Errorf("read after Start: %v", err)
	}
}

func TestFramework_NamespaceContainerReapedIsRecreated(t *testing.T) {
	ns := fmt.Sprintf("nsreap-%d", time.Now().UnixNano())
	obs := fwRawConn(t, fwShared(t))
	c := startClient(t, builder(t, fwShared(t)).Namespace(ns))
	ctx := t.Context()
	nsPath := "/" + ns
	t.Cleanup(func() {
		for _, p := range []string{nsPath + "/b", nsPath + "/c/d", nsPath + "/c"} {
			obs.Delete(p, -1)
		}
	})
	nsExists := func() bool {
		ok, _, err := obs.Exists(nsPath)
		if err != nil {
			t.Fatalf("exists %s: %v", nsPath, err)
		}
		return ok
	}
	reaped := func(what string) {
		t.Helper()
		eventually(t, 30*time.Second, func() bool { return !nsExists() }, "the server reaps the empty namespace container "+what)
	}

	if _, err := c.Create().ForPath(ctx, "/a", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete().ForPath(ctx, "/a"); err != nil {
		t.Fatal(err)
	}
	reaped("after /a")
	if _, err := c.Create().ForPath(ctx, "/b", nil); err != nil {
		t.Errorf("Create /b after the namespace container was reaped: %v", err)
	} else if ok, _, _ := obs.Exists(nsPath + "/b"); !ok {
		t.Errorf("Create /b succeeded but %s/b does not exist", nsPath)
	} else if err := c.Delete().ForPath(ctx, "/b"); err != nil {
		t.Fatal(err)
	}

	if nsExists() {
		reaped("after /b")
	}
	if _, err := c.Transaction().Create("/c", nil, framework.Persistent).Commit(ctx); err != nil {
		t.Errorf("Transaction creating /c after the namespace container was reaped: %v", err)
	} else if ok, _, _ := obs.Exists(nsPath + "/c"); !ok {
		t.Errorf("Transaction succeeded but %s/c does not exist", nsPath)
	}

	// Deleting "/" in a namespace would delete the namespace node itself.
	if _, err := obs.Create(nsPath, nil, zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	if _, err := obs.Create(nsPath+"/c", nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	if _, err := obs.Create(nsPath+"/c/d", nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	if err := c.Delete().ForPath(ctx, "/"); !errors.Is(err, framework.ErrInvalidPath) {
		t.Errorf("Delete / in namespace %s = %v, want ErrInvalidPath", ns, err)
	}
	if err := c.Delete().DeletingChildrenIfNeeded().ForPath(ctx, "/"); !errors.Is(err, framework.ErrInvalidPath) {
		t.Errorf("Delete / with children in namespace %s = %v, want ErrInvalidPath", ns, err)
	}
	for _, p := range []string{nsPath, nsPath + "/c", nsPath + "/c/d"} {
		if ok, _, err := obs.Exists(p); err != nil || !ok {
			t.Errorf("%s after Delete(\"/\") in the namespace: exists %v, err %v", p, ok, err)
		}
	}
}

func TestFramework_FindProtectedKeepsPersistentNode(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	parent := testPath(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, parent)
	})
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, parent+"/plain", nil); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []framework.CreateMode{framework.PersistentSequential, framework.Persistent} {
		name := fmt.Sprintf("job-%d", mode)
		p, err := c.Create().WithProtection().WithMode(mode).ForPath(ctx, parent+"/"+name, nil)
		if err != nil {
			t.Fatal(err)
		}
		base := path.Base(p)
		prefix := base[:len(framework.ProtectedPrefix)+36+1]
		found, err := c.FindProtected(ctx, parent, prefix)
		if err != nil || found != p {
			t.Errorf("FindProtected(%s, %s) for a %v node = %q, %v; want %q", parent, prefix, mode, found, err, p)
		}
		if stat, err := c.CheckExists().ForPath(ctx, p); err != nil || stat == nil {
			t.Errorf("FindProtected deleted the persistent protected node %s (stat %v, err %v)", p, stat, err)
		}
	}

	before := children(t, c, parent)
	if len(before) != 3 {
		t.Errorf("children before the empty-prefix call = %v, want 3", before)
	}
	found, err := c.FindProtected(ctx, parent, "")
	if !errors.Is(err, framework.ErrInvalidArgument) {
		t.Errorf("FindProtected with an empty prefix = %q, %v; want ErrInvalidArgument", found, err)
	}
	if after := children(t, c, parent); !slices.Equal(after, before) {
		t.Errorf("FindProtected with an empty prefix changed the children: %v, then %v", before, after)
	}
}

func TestFramework_IsRetryableUnknownServerCodes(t *testing.T) {
	// go-zookeeper turns a server error code it has no sentinel for into
	// fmt.Errorf("unknown error: %v", code) (ErrCode.toError, v1.0.4).
	unknown := func(code int32) error { return fmt.Errorf("unknown error: %v", zk.ErrCode(code)) }
	for _, tc := range []struct {
		name string
		code int32
		want bool
	}{
		{"OperationTimeout", -7, true},
		{"NewConfigNoQuorum", -13, true},
		{"RuntimeInconsistency", -2, false},
		{"DataInconsistency", -3, false},
	} {
		err := unknown(tc.code)
		if err.Error() != fmt.Sprintf("unknown error: %d", tc.code) {
			t.Fatalf("built %q, not go-zookeeper's text", err)
		}
		for _, e := range []error{err, fmt.Errorf("framework: get /x: %w", err)} {
			if got := framework.IsRetryable(e); got != tc.want {
				t.Errorf("IsRetryable(%q) (%s) = %v, want %v (Curator 5's RetryLoop.shouldRetry)", e, tc.name, got, tc.want)
			}
		}
	}
}

func TestFramework_ValidatePathRejectsCharactersOutsideBMP(t *testing.T) {
	var rc fwRequestCounter
	c := startClient(t, builder(t, fwShared(t)).Dialer(rc.dial))
	before := rc.count()
	// The Java server checks UTF-16 code units, and a character outside
	// the BMP is a surrogate pair, which it rejects.
	for _, p := range []string{"/a\U0001F600", "/\U00010000/b", "/x/\U0010FFFF"} {
		if err := framework.ValidatePath(p); !errors.Is(err, framework.ErrInvalidPath) {
			t.Errorf("ValidatePath(%q) = %v, want ErrInvalidPath", p, err)
		}
		if _, err := c.Create().CreatingParentsIfNeeded().ForPath(t.Context(), p, nil); !errors.Is(err, framework.ErrInvalidPath) {
			t.Errorf("Create(%q) = %v, want ErrInvalidPath", p, err)
		}
		if _, err := c.CheckExists().ForPath(t.Context(), p); !errors.Is(err, framework.ErrInvalidPath) {
			t.Errorf("CheckExists(%q) = %v, want ErrInvalidPath", p, err)
		}
	}
	if n := rc.count() - before; n != 0 {
		t.Errorf("paths with characters outside the BMP sent %d requests, want none", n)
	}
	if err := framework.ValidatePath("/caf\u00e9/\uffef"); err != nil {
		t.Errorf("ValidatePath of BMP characters the server accepts = %v", err)
	}
}

func TestFramework_WatchEndedByCloseOrExpiryIsDistinguishable(t *testing.T) {
	faultsNoLeaks(t)
	p := testPath(t)
	obs := newClient(t)
	if _, err := obs.Create().CreatingParentsIfNeeded().ForPath(t.Context(), p, nil); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		obs.Delete().Quietly().ForPath(ctx, p)
	})
	await := func(t *testing.T, watch <-chan zk.Event, d time.Duration, what string) zk.Event {
		t.Helper()
		select {
		case ev, ok := <-watch:
			if !ok {
				t.Fatalf("%s: the watch channel closed without an event", what)
			}
			return ev
		case <-time.After(d):
			t.Fatalf("%s: no event on the watch within %v", what, d)
		}
		return zk.Event{}
	}

	t.Run("Close", func(t *testing.T) {
		c := lcStart(t, builder(t, fwShared(t)))
		_, _, watch, err := c.GetData().ForPathW(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		if took, ok := lcClose(c, lcCloseBound); !ok {
			t.Fatalf("Close did not return within %v", took)
		}
		ev := await(t, watch, 10*time.Second, "after Close")
		if ev.Type != zk.EventNotWatching || !errors.Is(ev.Err, framework.ErrClosed) || errors.Is(ev.Err, zk.ErrSessionExpired) {
			t.Errorf("watch event after Close = {Type: %v, Err: %v}, want EventNotWatching with an Err matching framework.ErrClosed",
				ev.Type, ev.Err)
		}
	})

	t.Run("simulated expiry", func(t *testing.T) {
		proxy := fwProxy(t, fwShared(t))
		var rec fwRecorder
		c := lcStart(t, builder(t, proxy.Addr()).SessionTimeout(2*time.Second).Listener(rec.listen))
		_, _, watch, err := c.GetData().ForPathW(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		proxy.Pause() // the client hears nothing until it gives the session up
		ev := await(t, watch, 20*time.Second, "after a simulated expiry")
		eventually(t, 10*time.Second, func() bool { return slices.Contains(rec.got(), fwL) },
			"the client reports LOST (states "+fmt.Sprint(rec.got())+")")
		if ev.Type != zk.EventNotWatching || !errors.Is(ev.Err, zk.ErrSessionExpired) || errors.Is(ev.Err, framework.ErrClosed) {
			t.Errorf("watch event after a simulated expiry = {Type: %v, Err: %v}, want EventNotWatching with an Err matching zk.ErrSessionExpired",
				ev.Type, ev.Err)
		}
	})
}
