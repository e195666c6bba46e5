package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/atomiclong"
	"github.com/go-curator/curator/recipes/atomicvalue"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

func newValue(t testing.TB, c *framework.Client, path string, opts ...atomicvalue.Option) *atomicvalue.Value {
	t.Helper()
	v, err := atomicvalue.New(c, path, nTimes(t, 10), opts...)
	if err != nil {
		t.Fatalf("atomicvalue.New: %v", err)
	}
	return v
}

func newInteger(t testing.TB, c *framework.Client, path string, opts ...atomicvalue.Option) *atomicvalue.Integer {
	t.Helper()
	n, err := atomicvalue.NewInteger(c, path, nTimes(t, 10), opts...)
	if err != nil {
		t.Fatalf("atomicvalue.NewInteger: %v", err)
	}
	return n
}

// curatorInt is n as Curator's DistributedAtomicInteger stores it.
func curatorInt(n int32) []byte {
	return []byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
}

// TestAtomicValue_ValueZeroValuesAndCAS walks a Value through its life: a
// missing node reads as nil, CompareAndSet fails on it, Initialize creates
// it once, CompareAndSet matches bytes only (nil and empty alike), TrySet
// and ForceSet write, and the node holds exactly the bytes given.
func TestAtomicValue_ValueZeroValuesAndCAS(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t) + "/v"
	c := newClient(t)
	ctx := t.Context()
	v := newValue(t, c, path)

	r, err := v.Get(ctx)
	if err != nil || !r.Succeeded || r.PreValue != nil || r.PostValue != nil {
		t.Fatalf("Get of a missing node = %+v, %v; want succeeded, nil", r, err)
	}
	if r, err := v.CompareAndSet(ctx, nil, []byte("x")); err != nil || r.Succeeded {
		t.Fatalf("CompareAndSet on a missing node = %+v, %v; want not succeeded", r, err)
	}
	if exists(t, c, path) {
		t.Fatal("a failed CompareAndSet created the node")
	}
	if ok, err := v.Initialize(ctx, nil); err != nil || !ok {
		t.Fatalf("Initialize(nil) = %v, %v; want true", ok, err)
	}
	if ok, err := v.Initialize(ctx, []byte("again")); err != nil || ok {
		t.Fatalf("second Initialize = %v, %v; want false", ok, err)
	}
	if got := nodeBytes(t, c, path); len(got) != 0 {
		t.Fatalf("node after Initialize(nil) holds %x, want nothing", got)
	}
	// An empty node matches nil and empty alike, never other bytes.
	if r, err := v.CompareAndSet(ctx, []byte("y"), []byte("z")); err != nil || r.Succeeded || len(r.PreValue) != 0 {
		t.Fatalf("CompareAndSet(y) on empty = %+v, %v; want not succeeded, pre empty", r, err)
	}
	if r, err := v.CompareAndSet(ctx, nil, []byte("one")); err != nil || !r.Succeeded || string(r.PostValue) != "one" {
		t.Fatalf("CompareAndSet(nil, one) on empty = %+v, %v; want one", r, err)
	}
	if r, err := v.CompareAndSet(ctx, []byte("on"), []byte("two")); err != nil || r.Succeeded || string(r.PreValue) != "one" {
		t.Fatalf("CompareAndSet(on, two) = %+v, %v; want not succeeded, pre one", r, err)
	}
	given := []byte{0, 0xff, 'b', 0}
	r, err = v.TrySet(ctx, given)
	if err != nil || !r.Succeeded || string(r.PreValue) != "one" || !bytes.Equal(r.PostValue, given) {
		t.Fatalf("TrySet = %+v, %v; want one -> %x", r, err, given)
	}
	given[0] = 9 // the caller's slice is its own
	r.PostValue[1] = 9
	if got := nodeBytes(t, c, path); !bytes.Equal(got, []byte{0, 0xff, 'b', 0}) {
		t.Fatalf("node holds %x, want 00ff6200", got)
	}
	if r, err := v.Get(ctx); err != nil || !bytes.Equal(r.PreValue, []byte{0, 0xff, 'b', 0}) {
		t.Fatalf("Get = %+v, %v; want 00ff6200", r, err)
	}
	if err := v.ForceSet(ctx, nil); err != nil {
		t.Fatalf("ForceSet(nil): %v", err)
	}
	if got := nodeBytes(t, c, path); len(got) != 0 {
		t.Fatalf("node after ForceSet(nil) holds %x", got)
	}
	// A Value on a missing node: TrySet creates it, with its parents.
	deep := newValue(t, c, path+"-deep/a/b")
	if r, err := deep.TrySet(ctx, []byte("x")); err != nil || !r.Succeeded || r.PreValue != nil {
		t.Fatalf("TrySet on a missing node = %+v, %v; want nil -> x", r, err)
	}
	if kids := children(t, c, path+"-deep/a"); len(kids) != 1 || kids[0] != "b" {
		t.Fatalf("children of the parent = %v, want [b]", kids)
	}
	deleteTree(t, c, path+"-deep")
}

func exists(t *testing.T, c *framework.Client, path string) bool {
	t.Helper()
	st, err := c.CheckExists().ForPath(t.Context(), path)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("exists %s: %v", path, err)
	}
	return st != nil && err == nil
}

// TestAtomicValue_IntegerFormatAndArithmetic: an Integer writes Curator's
// 4 big-endian bytes, starts from 0 on a missing or empty node, and wraps
// around as Java's int does.
func TestAtomicValue_IntegerFormatAndArithmetic(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t) + "/n"
	c := newClient(t)
	ctx := t.Context()
	n := newInteger(t, c, path)

	if r, err := n.Get(ctx); err != nil || !r.Succeeded || r.PreValue != 0 {
		t.Fatalf("Get of a missing node = %+v, %v; want 0", r, err)
	}
	if r, err := n.Increment(ctx); err != nil || !r.Succeeded || r.PreValue != 0 || r.PostValue != 1 {
		t.Fatalf("Increment = %+v, %v; want 0 -> 1", r, err)
	}
	if got := nodeBytes(t, c, path); !bytes.Equal(got, curatorInt(1)) {
		t.Fatalf("node holds %x, want %x", got, curatorInt(1))
	}
	for _, step := range []struct {
		name      string
		op        func() (atomicvalue.Result[int32], error)
		pre, post int32
	}{
		{"Add 41", func() (atomicvalue.Result[int32], error) { return n.Add(ctx, 41) }, 1, 42},
		{"Subtract 50", func() (atomicvalue.Result[int32], error) { return n.Subtract(ctx, 50) }, 42, -8},
		{"Decrement", func() (atomicvalue.Result[int32], error) { return n.Decrement(ctx) }, -8, -9},
		{"TrySet max", func() (atomicvalue.Result[int32], error) { return n.TrySet(ctx, math.MaxInt32) }, -9, math.MaxInt32},
		{"Increment wraps", func() (atomicvalue.Result[int32], error) { return n.Increment(ctx) }, math.MaxInt32, math.MinInt32},
		{"CAS match", func() (atomicvalue.Result[int32], error) { return n.CompareAndSet(ctx, math.MinInt32, 7) }, math.MinInt32, 7},
	} {
		r, err := step.op()
		if err != nil || !r.Succeeded || r.PreValue != step.pre || r.PostValue != step.post {
			t.Fatalf("%s = %+v, %v; want %d -> %d", step.name, r, err, step.pre, step.post)
		}
		if got := nodeBytes(t, c, path); !bytes.Equal(got, curatorInt(step.post)) {
			t.Fatalf("%s: node holds %x, want %x", step.name, got, curatorInt(step.post))
		}
	}
	if r, err := n.CompareAndSet(ctx, 6, 8); err != nil || r.Succeeded || r.PreValue != 7 || r.PostValue != 7 {
		t.Fatalf("CAS mismatch = %+v, %v; want not succeeded at 7", r, err)
	}
	// A node without data is 0, and CompareAndSet(0) matches it.
	if _, err := c.SetData().ForPath(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	if r, err := n.CompareAndSet(ctx, 0, 5); err != nil || !r.Succeeded || r.PreValue != 0 {
		t.Fatalf("CAS 0 on an empty node = %+v, %v; want 0 -> 5", r, err)
	}
	if err := n.ForceSet(ctx, -1); err != nil {
		t.Fatal(err)
	}
	if got := nodeBytes(t, c, path); !bytes.Equal(got, []byte{0xff, 0xff, 0xff, 0xff}) {
		t.Fatalf("ForceSet(-1): node holds %x", got)
	}
}

// TestAtomicValue_IntegerWrongLength: data another writer left that is not
// 4 bytes (a DistributedAtomicLong's 8, or text) is an error naming the
// node, from every operation that reads, and nothing is written over it.
func TestAtomicValue_IntegerWrongLength(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t) + "/n"
	c := newClient(t)
	ctx := t.Context()
	n := newInteger(t, c, path)
	for _, data := range [][]byte{curatorLong(3), []byte("abc"), {1}} {
		if err := newValue(t, c, path).ForceSet(ctx, data); err != nil {
			t.Fatal(err)
		}
		ops := map[string]func() error{
			"Get":           func() error { _, err := n.Get(ctx); return err },
			"Increment":     func() error { _, err := n.Increment(ctx); return err },
			"TrySet":        func() error { _, err := n.TrySet(ctx, 1); return err },
			"CompareAndSet": func() error { _, err := n.CompareAndSet(ctx, 0, 1); return err },
		}
		for name, op := range ops {
			err := op()
			if !errors.Is(err, atomicvalue.ErrCorrupt) || !strings.Contains(err.Error(), path) ||
				!strings.HasPrefix(err.Error(), "atomicvalue: ") {
				t.Errorf("%x: %s = %v; want atomicvalue.ErrCorrupt naming %s", data, name, err, path)
			}
		}
		if got := nodeBytes(t, c, path); !bytes.Equal(got, data) {
			t.Fatalf("node holds %x after the errors, want %x untouched", got, data)
		}
	}
	// ForceSet repairs it.
	if err := n.ForceSet(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if r, err := n.Increment(ctx); err != nil || r.PostValue != 3 {
		t.Fatalf("Increment after ForceSet = %+v, %v", r, err)
	}
}

// TestAtomicValue_BadInput: bad arguments, nil and zero values and a nil
// ctx give errors matching ErrInvalidArgument, a closed client
// framework.ErrClosed, and none writes anything.
func TestAtomicValue_BadInput(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t) + "/v"
	c := newClient(t)
	p := nTimes(t, 3)
	for _, tc := range []struct {
		name   string
		client *framework.Client
		path   string
		policy retry.Policy
		opts   []atomicvalue.Option
		also   error
	}{
		{"nil client", nil, path, p, nil, framework.ErrNilClient},
		{"relative path", c, "v", p, nil, framework.ErrInvalidPath},
		{"root", c, "/", p, nil, framework.ErrInvalidPath},
		{"nil policy", c, path, nil, nil, framework.ErrInvalidArgument},
		{"nil option", c, path, p, []atomicvalue.Option{nil}, framework.ErrInvalidArgument},
		{"lock on the value", c, path, p, []atomicvalue.Option{atomicvalue.WithPromotedLock(path, time.Second, p)}, framework.ErrInvalidArgument},
		{"negative wait", c, path, p, []atomicvalue.Option{atomicvalue.WithPromotedLock(path+"-l", -1, p)}, framework.ErrInvalidArgument},
	} {
		v, err := atomicvalue.New(tc.client, tc.path, tc.policy, tc.opts...)
		if v != nil || !errors.Is(err, atomicvalue.ErrInvalidArgument) || !errors.Is(err, tc.also) {
			t.Errorf("New, %s = %v, %v; want atomicvalue.ErrInvalidArgument and %v", tc.name, v, err, tc.also)
		}
		n, err := atomicvalue.NewInteger(tc.client, tc.path, tc.policy, tc.opts...)
		if n != nil || !errors.Is(err, atomicvalue.ErrInvalidArgument) || !errors.Is(err, tc.also) {
			t.Errorf("NewInteger, %s = %v, %v; want atomicvalue.ErrInvalidArgument and %v", tc.name, n, err, tc.also)
		}
	}

	closed := startClient(t, builder(t, zktest.Shared(t).ConnectString()))
	onClosed := newValue(t, closed, path)
	intOnClosed := newInteger(t, closed, path)
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	var nilCtx context.Context
	ctx := t.Context()
	var nilValue *atomicvalue.Value
	var nilInt *atomicvalue.Integer
	for name, v := range map[string]*atomicvalue.Value{"nil": nilValue, "zero": {}, "closed client": onClosed, "nil ctx": newValue(t, c, path)} {
		cx := ctx
		if name == "nil ctx" {
			cx = nilCtx
		}
		errs := []error{}
		_, err := v.Get(cx)
		errs = append(errs, err)
		_, err = v.TrySet(cx, []byte("x"))
		errs = append(errs, err)
		_, err = v.CompareAndSet(cx, nil, []byte("x"))
		errs = append(errs, err)
		errs = append(errs, v.ForceSet(cx, []byte("x")))
		_, err = v.Initialize(cx, []byte("x"))
		errs = append(errs, err)
		want := atomicvalue.ErrInvalidArgument
		if name == "closed client" {
			want = framework.ErrClosed
		}
		for i, err := range errs {
			if !errors.Is(err, want) {
				t.Errorf("Value %s, op %d: err = %v, want %v", name, i, err, want)
			}
		}
	}
	for name, n := range map[string]*atomicvalue.Integer{"nil": nilInt, "zero": {}} {
		if _, err := n.Increment(ctx); !errors.Is(err, atomicvalue.ErrInvalidArgument) {
			t.Errorf("Integer %s: Increment err = %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, err := intOnClosed.Increment(ctx); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("Integer on a closed client: Increment err = %v, want framework.ErrClosed", err)
	}
	if exists(t, c, path) {
		t.Error("bad input wrote the node")
	}

	l := newLong(t, c, path, p)
	for _, f := range []int{0, -1} {
		if cch, err := atomiclong.NewCached(l, f); cch != nil || !errors.Is(err, atomiclong.ErrInvalidArgument) {
			t.Errorf("NewCached(factor %d) = %v, %v; want ErrInvalidArgument", f, cch, err)
		}
	}
	if cch, err := atomiclong.NewCached(nil, 10); cch != nil || !errors.Is(err, atomiclong.ErrInvalidArgument) {
		t.Errorf("NewCached(nil) = %v, %v; want ErrInvalidArgument", cch, err)
	}
	var zc *atomiclong.Cached
	if _, err := zc.Next(ctx); !errors.Is(err, atomiclong.ErrInvalidArgument) {
		t.Errorf("nil Cached: Next err = %v", err)
	}
	cch, err := atomiclong.NewCached(l, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cch.Next(nilCtx); !errors.Is(err, atomiclong.ErrInvalidArgument) {
		t.Errorf("Next(nil ctx) err = %v", err)
	}
	if exists(t, c, path) {
		t.Error("bad input to Cached wrote the node")
	}
}

// TestAtomicValue_LostReplyIsIndeterminate: a CompareAndSet, a TrySet and
// an Increment whose write the server applied and whose reply was lost end
// either in a success or in an error matching ErrIndeterminate that names
// the write: never in a failure without an error (the caller would try
// again and apply it twice), and an Increment never adds twice.
func TestAtomicValue_LostReplyIsIndeterminate(t *testing.T) {
	faultsNoLeaks(t)
	c, p, obs := lostReplyClient(t)
	path := counterPath(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	check := func(what string, succeeded bool, err error, post, pre, now []byte) {
		t.Helper()
		switch {
		case err == nil:
			if !succeeded || !bytes.Equal(now, post) {
				t.Fatalf("%s: succeeded %v without an error, node %x, wrote %x: a lost reply read as a lost race",
					what, succeeded, now, post)
			}
		case errors.Is(err, atomicvalue.ErrIndeterminate):
			if succeeded || (!bytes.Equal(now, post) && !bytes.Equal(now, pre)) {
				t.Fatalf("%s: indeterminate, succeeded %v, node %x; want not succeeded and %x or %x", what, succeeded, now, pre, post)
			}
			t.Logf("%s: indeterminate (%v), node %x", what, err, now)
		default:
			t.Fatalf("%s with a lost reply: %v", what, err)
		}
	}

	v := newValue(t, c, path+"/v", atomicvalue.WithoutPromotedLock())
	if err := newValue(t, obs, path+"/v").ForceSet(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	p.LoseNextReply(zktest.OpSetData)
	r, err := v.CompareAndSet(ctx, []byte("a"), []byte("b"))
	struck(t, p, 1)
	check("CompareAndSet", r.Succeeded, err, []byte("b"), []byte("a"), nodeBytes(t, obs, path+"/v"))
	if err != nil && string(r.PostValue) != "b" {
		t.Errorf("indeterminate CompareAndSet: PostValue %q, want the write's b", r.PostValue)
	}

	cur := nodeBytes(t, obs, path+"/v")
	p.LoseNextReply(zktest.OpSetData)
	r, err = v.TrySet(ctx, []byte("c"))
	struck(t, p, 2)
	check("TrySet", r.Succeeded, err, []byte("c"), cur, nodeBytes(t, obs, path+"/v"))

	n := newInteger(t, c, path+"/n")
	if err := newInteger(t, obs, path+"/n").ForceSet(ctx, 0); err != nil {
		t.Fatal(err)
	}
	p.LoseNextReply(zktest.OpSetData)
	ri, err := n.Increment(ctx)
	struck(t, p, 3)
	check("Increment", ri.Succeeded, err, curatorInt(1), curatorInt(0), nodeBytes(t, obs, path+"/n"))
	if err != nil && (ri.PreValue != 0 || ri.PostValue != 1) {
		t.Errorf("indeterminate Increment: %d -> %d, want 0 -> 1", ri.PreValue, ri.PostValue)
	}
}

// TestAtomicValue_CachedHandsOutUniqueValues: two Cached on one counter,
// each used by two goroutines, hand out values that are all distinct, in
// ranges of the factor; the counter ends at the ranges taken.
func TestAtomicValue_CachedHandsOutUniqueValues(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t) + "/ids"
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const factor, perWorker = 7, 30
	var mu sync.Mutex
	seen := map[int64]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 2 {
		l := newLong(t, newClient(t), path, nTimes(t, 10))
		cached, err := atomiclong.NewCached(l, factor)
		if err != nil {
			t.Fatal(err)
		}
		for w := range 2 {
			who := fmt.Sprintf("cached%d/worker%d", i, w)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range perWorker {
					r, err := cached.Next(ctx)
					if err != nil || !r.Succeeded || r.PostValue != r.PreValue+1 {
						errs <- fmt.Errorf("%s: Next = %+v, %v", who, r, err)
						return
					}
					mu.Lock()
					if other, dup := seen[r.PreValue]; dup {
						errs <- fmt.Errorf("%s and %s both got %d", who, other, r.PreValue)
					}
					seen[r.PreValue] = who
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(seen) != 4*perWorker {
		t.Fatalf("%d distinct values, want %d", len(seen), 4*perWorker)
	}
	ranges := map[int64]bool{}
	for v := range seen {
		ranges[v/factor] = true
	}
	got, err := newLong(t, newClient(t), path, nTimes(t, 1)).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.PostValue != int64(len(ranges))*factor {
		t.Errorf("counter = %d, want %d ranges of %d", got.PostValue, len(ranges), factor)
	}
}

// TestAtomicValue_IntegerUnderContention: four clients increment one
// Integer with the default promoted lock; every increment succeeds once.
func TestAtomicValue_IntegerUnderContention(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t) + "/n"
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const clients, each = 4, 40
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	var mu sync.Mutex
	posts := map[int32]bool{}
	for range clients {
		n := newInteger(t, newClient(t), path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				r, err := n.Increment(ctx)
				if err != nil || !r.Succeeded || r.PostValue != r.PreValue+1 {
					errs <- fmt.Errorf("Increment = %+v, %v", r, err)
					return
				}
				mu.Lock()
				if posts[r.PostValue] {
					errs <- fmt.Errorf("two increments wrote %d", r.PostValue)
				}
				posts[r.PostValue] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	obs := newClient(t)
	if got := nodeBytes(t, obs, path); !bytes.Equal(got, curatorInt(clients*each)) {
		t.Errorf("node holds %x, want %x", got, curatorInt(clients*each))
	}
	if kids := children(t, obs, path+atomicvalue.DefaultLockSuffix); len(kids) != 0 {
		t.Errorf("lock nodes left: %v", kids)
	}
}
