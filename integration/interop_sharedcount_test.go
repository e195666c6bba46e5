package integration

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/recipes/sharedcount"
)

// javaCount reads Curator's cached SharedCount: value and version.
func javaCount(t testing.TB, j *interop.Helper, path string) (value, version int) {
	t.Helper()
	f, err := j.Fields(javaCtx(t, 10*time.Second), "count.get", path)
	if err != nil || len(f) != 2 {
		t.Fatalf("Curator count.get %s = %q, %v", path, f, err)
	}
	value, err1 := strconv.Atoi(f[0])
	version, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		t.Fatalf("Curator count.get %s = %q", path, f)
	}
	return value, version
}

func startCount(t testing.TB, c *framework.Client, path string, seed int32) *sharedcount.Count {
	t.Helper()
	n, err := sharedcount.New(c, path, seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(t.Context()); err != nil {
		t.Fatalf("Start count %s: %v", path, err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// TestInterop_SharedCountJavaSetReachesGoListener: Curator's setCount
// values reach a Go listener, and both sides then read the same value and
// version.
func TestInterop_SharedCountJavaSetReachesGoListener(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j := startJava(t)
	path := base + "/count"

	count := startCount(t, c, path, 3)
	var mu sync.Mutex
	var seen []int32
	remove := count.AddListener(sharedcount.Listener[int32]{Changed: func(v sharedcount.VersionedValue[int32]) {
		mu.Lock()
		seen = append(seen, v.Value)
		mu.Unlock()
	}})
	defer remove()

	// Curator reads Go's seed: 4 bytes, big-endian.
	if v, _ := javaCount(t, j, path); v != 3 {
		t.Fatalf("Curator reads Go's seed as %d, want 3", v)
	}
	for _, n := range []string{"-7", "2147483647"} {
		if _, err := j.Call(javaCtx(t, 10*time.Second), "count.set", path, n); err != nil {
			t.Fatalf("Curator count.set %s: %v", n, err)
		}
	}
	eventually(t, 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(seen, 2147483647)
	}, "Curator's last setCount reaching the Go listener")
	mu.Lock()
	for _, v := range seen {
		if v != -7 && v != 2147483647 {
			t.Errorf("Go listener saw %d, which Curator never wrote", v)
		}
	}
	mu.Unlock()

	goV := count.VersionedValue()
	javaValue, javaVersion := javaCount(t, j, path)
	if int(goV.Value) != javaValue || int(goV.Version) != javaVersion {
		t.Errorf("Go reads %d at version %d, Curator %d at version %d", goV.Value, goV.Version, javaValue, javaVersion)
	}
}

// TestInterop_SharedCountStaleTrySetFails: a compare-and-set made with a
// version read before the other side wrote fails, in both directions, and
// the other side's value stays.
func TestInterop_SharedCountStaleTrySetFails(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j := startJava(t)
	path := base + "/count"
	ctx := t.Context()
	count := startCount(t, c, path, 0)

	// Go reads, Curator writes, Go's TrySetCount with what it read fails.
	stale := count.VersionedValue()
	if _, err := j.Call(javaCtx(t, 10*time.Second), "count.set", path, "5"); err != nil {
		t.Fatalf("Curator count.set: %v", err)
	}
	ok, err := count.TrySetCount(ctx, stale, 9)
	if err != nil || ok {
		t.Fatalf("Go TrySetCount with the version before Curator's write = %v, %v; want false", ok, err)
	}
	eventually(t, 10*time.Second, func() bool { return count.Count() == 5 }, "Go's cache reading Curator's 5")
	if v, _ := javaCount(t, j, path); v != 5 {
		t.Fatalf("Curator reads %d after Go's failed TrySetCount, want 5", v)
	}

	// With the current version Go's TrySetCount succeeds and Curator sees it.
	ok, err = count.TrySetCount(ctx, count.VersionedValue(), 6)
	if err != nil || !ok {
		t.Fatalf("Go TrySetCount with the current version = %v, %v; want true", ok, err)
	}
	eventually(t, 10*time.Second, func() bool { v, _ := javaCount(t, j, path); return v == 6 }, "Curator reading Go's 6")

	// Curator reads, Go writes, Curator's trySetCount with what it read fails.
	f, err := j.Fields(javaCtx(t, 10*time.Second), "count.trysetstale", path, "100")
	if err != nil || len(f) != 2 || f[0] != "6" {
		t.Fatalf("Curator count.trysetstale read %q, %v; want 6", f, err)
	}
	if err := count.SetCount(ctx, 11); err != nil {
		t.Fatalf("Go SetCount: %v", err)
	}
	ok, err = j.Bool(javaCtx(t, 10*time.Second), "go")
	if err != nil || ok {
		t.Fatalf("Curator trySetCount with the version before Go's write = %v, %v; want false", ok, err)
	}
	eventually(t, 10*time.Second, func() bool { v, _ := javaCount(t, j, path); return v == 11 }, "Curator reading Go's 11")
	if got := count.Count(); got != 11 {
		t.Errorf("Go reads %d after Curator's failed trySetCount, want 11", got)
	}
}

// TestInterop_SharedCountGoSetReachesJavaListener: Go's SetCount values
// reach a Curator SharedCountListener.
func TestInterop_SharedCountGoSetReachesJavaListener(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j := startJava(t)
	path := base + "/count"
	count := startCount(t, c, path, 1)

	if _, err := j.Call(javaCtx(t, 10*time.Second), "count.listen", path); err != nil {
		t.Fatalf("Curator count.listen: %v", err)
	}
	for _, n := range []int32{-1, 77} {
		if err := count.SetCount(t.Context(), n); err != nil {
			t.Fatalf("Go SetCount(%d): %v", n, err)
		}
	}
	eventually(t, 10*time.Second, func() bool { return slices.Contains(j.Events(), "count 77") },
		"Go's last SetCount reaching the Curator listener")
	for _, e := range j.Events() {
		if e != "count -1" && e != "count 77" && !strings.HasPrefix(e, "state ") {
			t.Errorf("Curator listener saw %q, which Go never wrote", e)
		}
	}
}
