package integration

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/zktest"
)

// javaCache reads a Java cache's entries: "cc.dump" (CuratorCache) or
// "pcc.dump" (PathChildrenCache).
func javaCache(t *testing.T, j *interop.Helper, cmd, path string) []interop.CacheEntry {
	t.Helper()
	f, err := j.Fields(javaCtx(t, 10*time.Second), cmd, path)
	if err != nil {
		t.Fatalf("Curator %s %s: %v", cmd, path, err)
	}
	entries, err := interop.ParseCacheEntries(f)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// sameAsJava reports how a Go cache's entries differ from a Java cache's
// ("" if they do not).
func sameAsJava(goEntries []cache.Entry, java []interop.CacheEntry) string {
	var g, j []string
	for _, e := range goEntries {
		g = append(g, fmt.Sprintf("%s:%d:%x", e.Path, e.Stat.Version, e.Data))
	}
	for _, e := range java {
		j = append(j, fmt.Sprintf("%s:%d:%x", e.Path, e.Version, e.Data))
	}
	if gs, js := strings.Join(g, " "), strings.Join(j, " "); gs != js {
		return fmt.Sprintf("go %s\njava %s", gs, js)
	}
	return ""
}

// TestCacheInterop_JavaAndGoCachesSeeEachOthersWrites: a Java
// CuratorCache and PathChildrenCache and a Go Tree and Children cache on
// one path follow the writes of both sides, and end with the same nodes,
// versions and data. Each side's first write is seen by the other side's
// listeners.
func TestCacheInterop_JavaAndGoCachesSeeEachOthersWrites(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	j := interop.StartCache(t, zktest.Shared(t).ConnectString())
	mustCreate(t, c, p+"/before", "made before the caches")

	goEvents := newRecorder(false)
	tree := startTree(t, c, p, goEvents)
	kids := startChildren(t, c, p, nil)
	for _, cmd := range []string{"cc.start", "pcc.start"} {
		if _, err := j.Call(javaCtx(t, 30*time.Second), cmd, p); err != nil {
			t.Fatalf("Curator %s: %v", cmd, err)
		}
	}

	// Go writes, Java writes, over each other's nodes.
	mustCreate(t, c, p+"/go", "from go")
	mustCreate(t, c, p+"/go/deep", "a grandchild")
	for _, w := range [][2]string{{p + "/java", "from java"}, {p + "/go", "java over go"}, {p + "/java/deep", "java grandchild"}} {
		if _, err := j.Call(javaCtx(t, 10*time.Second), "set", w[0], interop.Hex([]byte(w[1]))); err != nil {
			t.Fatalf("Curator set %s: %v", w[0], err)
		}
	}
	mustSet(t, c, p+"/java", "go over java")
	mustDelete(t, c, p+"/before")
	if _, err := j.Call(javaCtx(t, 10*time.Second), "delete", p+"/go/deep"); err != nil {
		t.Fatal(err)
	}

	eventually(t, 15*time.Second, func() bool {
		gt, _ := tree.Entries()
		gk, _ := kids.Entries()
		return sameAsJava(gt, javaCache(t, j, "cc.dump", p)) == "" && sameAsJava(gk, javaCache(t, j, "pcc.dump", p)) == ""
	}, "the Go and Java caches hold the same nodes")
	server, err := serverTree(t.Context(), c, p, -1)
	if err != nil {
		t.Fatal(err)
	}
	gt, _ := tree.Entries()
	if diff := sameTree(server, gt); diff != "" {
		t.Errorf("both caches differ from the server: %s", diff)
	}
	if e, err := tree.Get(p + "/go"); err != nil || string(e.Data) != "java over go" || e.Stat.Version != 1 {
		t.Errorf("Go cache: %s = %q version %d, %v", p+"/go", e.Data, e.Stat.Version, err)
	}

	// Each side's listeners saw the other's writes.
	sawJava := false
	for _, ev := range goEvents.all() {
		if ev.Type == cache.NodeAdded && ev.Entry.Path == p+"/java/deep" && bytes.Equal(ev.Entry.Data, []byte("java grandchild")) {
			sawJava = true
		}
	}
	if !sawJava {
		t.Errorf("the Go listener did not see Java's create of %s/java/deep: %s", p, goEvents.describe())
	}
	want := map[string]bool{
		"cc " + p + " NODE_CREATED " + p + "/go/deep 0 " + interop.Hex([]byte("a grandchild")): false,
		"cc " + p + " NODE_DELETED " + p + "/before":                                           false,
		"pcc " + p + " CHILD_UPDATED " + p + "/java 1 " + interop.Hex([]byte("go over java")):  false,
	}
	for _, line := range j.Events() {
		for w := range want {
			if strings.HasPrefix(line, w) {
				want[w] = true
			}
		}
	}
	for w, seen := range want {
		if !seen {
			t.Errorf("the Java listeners did not see %q; they saw %q", w, j.Events())
		}
	}
}
