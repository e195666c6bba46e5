package integration

import (
	"bytes"
	"errors"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
)

// A cache WithDecompression (Curator's dataIsCompressed) over nodes
// written by Create().Compressed() and SetData().Compressed().

func mustCreateCompressed(t *testing.T, c *framework.Client, p, data string) {
	t.Helper()
	if _, err := c.Create().Compressed().CreatingParentsIfNeeded().ForPath(t.Context(), p, []byte(data)); err != nil {
		t.Fatalf("create %s compressed: %v", p, err)
	}
}

func mustSetCompressed(t *testing.T, c *framework.Client, p, data string) {
	t.Helper()
	if _, err := c.SetData().Compressed().ForPath(t.Context(), p, []byte(data)); err != nil {
		t.Fatalf("set %s compressed: %v", p, err)
	}
}

// expectBadData takes an Error event for path whose error says the data
// did not decompress.
func expectBadData(t *testing.T, r *recorder, path string) {
	t.Helper()
	ev := r.expect(t, cache.Error, path)
	if !errors.Is(ev.Err, framework.ErrBadCompressedData) {
		t.Fatalf("Error event for %s: %v, want framework.ErrBadCompressedData", path, ev.Err)
	}
}

func TestCacheCompressed_TreeDecompresses(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreateCompressed(t, c, p, "root")
	mustCreateCompressed(t, c, p+"/a", "alpha")

	r := newRecorder(false)
	tr := startTree(t, c, p, r, cache.WithDecompression())
	r.expect(t, cache.NodeAdded, p, "root")
	r.expect(t, cache.NodeAdded, p+"/a", "alpha")
	r.expect(t, cache.Initialized, "")
	e, err := tr.Get(p + "/a")
	if err != nil || string(e.Data) != "alpha" {
		t.Fatalf("Get(a) = %q, %v; want alpha", e.Data, err)
	}
	raw, stat, err := c.GetData().ForPath(t.Context(), p+"/a")
	if err != nil {
		t.Fatal(err)
	}
	if e.Stat != *stat || int(e.Stat.DataLength) != len(raw) {
		t.Errorf("Get(a) stat %+v, want the server's %+v (DataLength %d, compressed)", e.Stat, *stat, len(raw))
	}

	mustSetCompressed(t, c, p+"/a", "alpha-2")
	ev := r.expect(t, cache.NodeUpdated, p+"/a", "alpha-2")
	if string(ev.Old.Data) != "alpha" {
		t.Errorf("NodeUpdated's old data %q, want alpha", ev.Old.Data)
	}
	mustCreateCompressed(t, c, p+"/a/b", "beta")
	r.expect(t, cache.NodeAdded, p+"/a/b", "beta")
	r.quiet(t)

	// A cache without the option holds the bytes as the server has them.
	plain := startTree(t, c, p, nil)
	if e, err := plain.Get(p + "/a/b"); err != nil || !bytes.HasPrefix(e.Data, []byte{0x1f, 0x8b}) {
		t.Errorf("Get(a/b) without decompression = %q, %v; want gzip bytes", e.Data, err)
	}
}

// Data that does not decompress is an Error event, then the node's event
// with its stat and no data; the cache goes on.
func TestCacheCompressed_CorruptDataIsReported(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreateCompressed(t, c, p, "root")
	mustCreate(t, c, p+"/plain", "not gzip at all")
	mustCreate(t, c, p+"/plain/kid", "")
	mustCreateCompressed(t, c, p+"/plain/kid/ok", "fine")

	r := newRecorder(false)
	tr := startTree(t, c, p, r, cache.WithDecompression())
	r.expect(t, cache.NodeAdded, p, "root")
	expectBadData(t, r, p+"/plain")
	if ev := r.expect(t, cache.NodeAdded, p+"/plain"); ev.Entry.Data != nil || ev.Entry.Stat.DataLength != int32(len("not gzip at all")) {
		t.Errorf("NodeAdded of the plain node: data %q, stat %+v; want nil data, the server's stat", ev.Entry.Data, ev.Entry.Stat)
	}
	// Empty data decompresses to empty data (a node written with none).
	r.expect(t, cache.NodeAdded, p+"/plain/kid", "")
	r.expect(t, cache.NodeAdded, p+"/plain/kid/ok", "fine")
	r.expect(t, cache.Initialized, "")

	// Corrupt gzip: a valid header, then garbage; and a truncated member.
	gz, err := framework.GzipCompression{}.Compress("", []byte("some data that compresses"))
	if err != nil {
		t.Fatal(err)
	}
	corrupt := append(append([]byte{}, gz[:10]...), bytes.Repeat([]byte{0xff}, 20)...)
	for _, bad := range [][]byte{corrupt, gz[:len(gz)-3]} {
		if _, err := c.SetData().ForPath(t.Context(), p+"/plain/kid/ok", bad); err != nil {
			t.Fatal(err)
		}
		expectBadData(t, r, p+"/plain/kid/ok")
		if ev := r.expect(t, cache.NodeUpdated, p+"/plain/kid/ok"); ev.Entry.Data != nil || string(ev.Old.Data) == string(bad) {
			t.Errorf("NodeUpdated after corrupt data: %q (old %q); want nil data", ev.Entry.Data, ev.Old.Data)
		}
	}

	// The cache is not stuck: the next good write is decompressed, and
	// the view holds it.
	mustSetCompressed(t, c, p+"/plain", "now compressed")
	r.expect(t, cache.NodeUpdated, p+"/plain", "now compressed")
	mustSetCompressed(t, c, p+"/plain/kid/ok", "fine again")
	r.expect(t, cache.NodeUpdated, p+"/plain/kid/ok", "fine again")
	if e, err := tr.Get(p + "/plain"); err != nil || string(e.Data) != "now compressed" {
		t.Errorf("Get(plain) = %q, %v", e.Data, err)
	}
	if kids, err := tr.Children(p + "/plain"); err != nil || len(kids) != 1 || kids[0] != "kid" {
		t.Errorf("Children(plain) = %q, %v", kids, err)
	}
	mustDelete(t, c, p+"/plain")
	r.expect(t, cache.NodeRemoved, p+"/plain/kid/ok")
	r.expect(t, cache.NodeRemoved, p+"/plain/kid")
	r.expect(t, cache.NodeRemoved, p+"/plain")
	r.quiet(t)
}

func TestCacheCompressed_Children(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	p := cachePath(t, c)
	mustCreate(t, c, p, "the parent is not decompressed: it is not in the view")
	mustCreateCompressed(t, c, p+"/x", "ex")

	ch, err := cache.NewChildren(c, p, cache.WithDecompression())
	if err != nil {
		t.Fatal(err)
	}
	r := newRecorder(false)
	ch.AddListener(r.listen)
	t.Cleanup(func() { ch.Close() })
	if err := ch.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.expect(t, cache.NodeAdded, p+"/x", "ex")
	r.expect(t, cache.Initialized, "")
	mustCreate(t, c, p+"/y", "plain")
	expectBadData(t, r, p+"/y")
	r.expect(t, cache.NodeAdded, p+"/y")
	mustSetCompressed(t, c, p+"/y", "why")
	r.expect(t, cache.NodeUpdated, p+"/y", "why")
	if e, err := ch.Get(p + "/y"); err != nil || string(e.Data) != "why" {
		t.Errorf("Get(y) = %q, %v", e.Data, err)
	}
	r.quiet(t)
}
