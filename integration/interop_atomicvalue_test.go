package integration

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/recipes/atomiclong"
	"github.com/go-curator/curator/recipes/atomicvalue"
	"github.com/go-curator/curator/zktest"
)

func startJavaAtomic(t testing.TB) *interop.Helper {
	t.Helper()
	return interop.StartAtomic(t, zktest.Shared(t).ConnectString())
}

// javaInts calls an aint command and parses "<succeeded> <pre> <post>".
func javaInts(t *testing.T, ctx context.Context, j *interop.Helper, words ...string) (bool, int32, int32) {
	t.Helper()
	f, err := j.Fields(ctx, words...)
	if err != nil || len(f) != 3 {
		t.Fatalf("Java %v = %q, %v", words, f, err)
	}
	pre, err1 := strconv.ParseInt(f[1], 10, 32)
	post, err2 := strconv.ParseInt(f[2], 10, 32)
	if err1 != nil || err2 != nil {
		t.Fatalf("Java %v = %q", words, f)
	}
	return f[0] == "true", int32(pre), int32(post)
}

// javaBytes calls an aval command and parses "<succeeded> <preHex> <postHex>"
// ("null" for Java's null, returned as nil).
func javaBytes(t *testing.T, ctx context.Context, j *interop.Helper, words ...string) (bool, []byte, []byte) {
	t.Helper()
	f, err := j.Fields(ctx, words...)
	if err != nil || len(f) != 3 {
		t.Fatalf("Java %v = %q, %v", words, f, err)
	}
	dec := func(s string) []byte {
		if s == "null" {
			return nil
		}
		b, err := interop.Unhex(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return f[0] == "true", dec(f[1]), dec(f[2])
}

// TestInterop_AtomicIntegerBothWays: Curator's DistributedAtomicInteger and
// Go's Integer read and compare-and-set each other's writes, and the node
// holds the same 4 bytes whoever wrote it.
func TestInterop_AtomicIntegerBothWays(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t) + "/n"
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	j := startJavaAtomic(t)
	c := newClient(t)
	n := newInteger(t, c, path)

	// Java creates it, Go reads and CASes.
	if ok, pre, post := javaInts(t, ctx, j, "aint.increment", path); !ok || pre != 0 || post != 1 {
		t.Fatalf("Java increment = %v %d %d", ok, pre, post)
	}
	if got := nodeBytes(t, c, path); !bytes.Equal(got, curatorInt(1)) {
		t.Fatalf("Java wrote %x, want %x", got, curatorInt(1))
	}
	if r, err := n.Get(ctx); err != nil || r.PreValue != 1 {
		t.Fatalf("Go Get = %+v, %v; want 1", r, err)
	}
	if r, err := n.CompareAndSet(ctx, 1, -5); err != nil || !r.Succeeded {
		t.Fatalf("Go CAS 1 -> -5 = %+v, %v", r, err)
	}
	// Go writes, Java reads and CASes.
	if ok, pre, _ := javaInts(t, ctx, j, "aint.get", path); !ok || pre != -5 {
		t.Fatalf("Java reads %d, want -5", pre)
	}
	if ok, _, _ := javaInts(t, ctx, j, "aint.cas", path, "-4", "9"); ok {
		t.Fatal("Java CAS with the wrong expected value succeeded")
	}
	if ok, _, post := javaInts(t, ctx, j, "aint.cas", path, "-5", "2147483647"); !ok || post != 2147483647 {
		t.Fatalf("Java CAS -5 -> max = %v %d", ok, post)
	}
	if r, err := n.Increment(ctx); err != nil || r.PostValue != -2147483648 {
		t.Fatalf("Go Increment past Java's max = %+v, %v; want a wrap to min", r, err)
	}
	if ok, pre, _ := javaInts(t, ctx, j, "aint.get", path); !ok || pre != -2147483648 {
		t.Fatalf("Java reads %d after Go's wrap", pre)
	}
}

// TestInterop_AtomicValueBothWays: Curator's DistributedAtomicValue and
// Go's Value: a missing node is null/nil on both sides, each side's
// initialize, trySet and compareAndSet is seen byte for byte by the other.
func TestInterop_AtomicValueBothWays(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t) + "/v"
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	j := startJavaAtomic(t)
	v := newValue(t, newClient(t), path)

	if ok, pre, post := javaBytes(t, ctx, j, "aval.get", path); !ok || pre != nil || post != nil {
		t.Fatalf("Java get of a missing node = %v %x %x; want null", ok, pre, post)
	}
	if f, err := j.Fields(ctx, "aval.init", path, interop.Hex([]byte("java-1"))); err != nil || len(f) != 1 || f[0] != "true" {
		t.Fatalf("Java initialize = %q, %v", f, err)
	}
	if ok, err := v.Initialize(ctx, []byte("go")); err != nil || ok {
		t.Fatalf("Go Initialize over Java's = %v, %v; want false", ok, err)
	}
	r, err := v.CompareAndSet(ctx, []byte("java-1"), []byte{0, 1, 2, 0xfe})
	if err != nil || !r.Succeeded || string(r.PreValue) != "java-1" {
		t.Fatalf("Go CAS over Java's = %+v, %v", r, err)
	}
	if ok, pre, _ := javaBytes(t, ctx, j, "aval.get", path); !ok || !bytes.Equal(pre, []byte{0, 1, 2, 0xfe}) {
		t.Fatalf("Java reads %x, want 000102fe", pre)
	}
	if ok, _, _ := javaBytes(t, ctx, j, "aval.cas", path, interop.Hex([]byte("nope")), interop.Hex([]byte("x"))); ok {
		t.Fatal("Java CAS with the wrong expected bytes succeeded")
	}
	if ok, pre, post := javaBytes(t, ctx, j, "aval.cas", path, "000102fe", interop.Hex([]byte("java-2"))); !ok ||
		!bytes.Equal(pre, []byte{0, 1, 2, 0xfe}) || string(post) != "java-2" {
		t.Fatalf("Java CAS over Go's = %v %x %x", ok, pre, post)
	}
	if r, err := v.TrySet(ctx, []byte("go-2")); err != nil || !r.Succeeded || string(r.PreValue) != "java-2" {
		t.Fatalf("Go TrySet over Java's = %+v, %v", r, err)
	}
	if ok, pre, post := javaBytes(t, ctx, j, "aval.tryset", path, interop.Hex([]byte("java-3"))); !ok || string(pre) != "go-2" || string(post) != "java-3" {
		t.Fatalf("Java trySet over Go's = %v %q %q", ok, pre, post)
	}
	if r, err := v.Get(ctx); err != nil || string(r.PreValue) != "java-3" {
		t.Fatalf("Go Get = %+v, %v; want java-3", r, err)
	}
}

// TestInterop_AtomicIntegerMixedPromoted: two Go Integers and two Curator
// DistributedAtomicIntegers increment one counter at once, sharing the
// promoted lock's path: every success is counted once, and the counter
// ends at their number.
func TestInterop_AtomicIntegerMixedPromoted(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t) + "/n"
	lockPath := path + "-lock"
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const rounds = 20
	var mu sync.Mutex
	posts := map[int32]string{}
	total := 0
	note := func(who string, ok bool, pre, post int32) {
		mu.Lock()
		defer mu.Unlock()
		if !ok {
			return
		}
		total++
		if post != pre+1 {
			t.Errorf("%s: %d -> %d", who, pre, post)
		}
		if other, dup := posts[post]; dup {
			t.Errorf("%s and %s both wrote %d", who, other, post)
		}
		posts[post] = who
	}
	var wg sync.WaitGroup
	for i := range 2 {
		n := newInteger(t, newClient(t), path, atomicvalue.WithPromotedLock(lockPath, 10*time.Second, nTimes(t, 10)))
		j := startJavaAtomic(t)
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range rounds {
				r, err := n.Increment(ctx)
				if err != nil {
					t.Errorf("go%d: %v", i, err)
					return
				}
				note("go"+strconv.Itoa(i), r.Succeeded, r.PreValue, r.PostValue)
			}
		}()
		go func() {
			defer wg.Done()
			for range rounds {
				f, err := j.Fields(ctx, "aint.increment", path, lockPath)
				if err != nil || len(f) != 3 {
					t.Errorf("java%d: %q, %v", i, f, err)
					return
				}
				pre, _ := strconv.ParseInt(f[1], 10, 32)
				post, _ := strconv.ParseInt(f[2], 10, 32)
				note("java"+strconv.Itoa(i), f[0] == "true", int32(pre), int32(post))
			}
		}()
	}
	wg.Wait()
	obs := newClient(t)
	if got := nodeBytes(t, obs, path); !bytes.Equal(got, curatorInt(int32(total))) {
		t.Errorf("node holds %x, want %d successes %x", got, total, curatorInt(int32(total)))
	}
	if kids := children(t, obs, lockPath); len(kids) != 0 {
		t.Errorf("lock nodes left: %v", kids)
	}
}

// TestInterop_CachedAtomicLongShared: Curator's CachedAtomicLong and Go's
// Cached take ranges of one DistributedAtomicLong: no value is handed out
// twice.
func TestInterop_CachedAtomicLongShared(t *testing.T) {
	countersNoLeaks(t)
	path := counterPath(t) + "/ids"
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const factor = 5
	j := startJavaAtomic(t)
	cached, err := atomiclong.NewCached(newLong(t, newClient(t), path, nTimes(t, 10)), factor)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]string{}
	for i := range 3 * factor {
		r, err := cached.Next(ctx)
		if err != nil || !r.Succeeded {
			t.Fatalf("Go Next = %+v, %v", r, err)
		}
		f, err := j.Fields(ctx, "cached.next", path, strconv.Itoa(factor))
		if err != nil || len(f) != 3 || f[0] != "true" {
			t.Fatalf("Java next = %q, %v", f, err)
		}
		jv, _ := strconv.ParseInt(f[1], 10, 64)
		for who, v := range map[string]int64{"go": r.PreValue, "java": jv} {
			if other, dup := seen[v]; dup {
				t.Fatalf("round %d: %s and %s both got %d", i, who, other, v)
			}
			seen[v] = who
		}
	}
	got, err := newLong(t, newClient(t), path, nTimes(t, 1)).Get(ctx)
	if err != nil || got.PostValue != 6*factor {
		t.Fatalf("counter = %+v, %v; want %d (3 ranges each)", got, err, 6*factor)
	}
}
