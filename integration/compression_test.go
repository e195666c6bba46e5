package integration

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/integration/interop"
)

// Issue 32, item 1: compression per operation and for the whole client,
// with Curator's default gzip, beside Java Curator 5.4.

// compressionPayloads are the data the tests write: none, short, long and
// repetitive, and every byte value.
func compressionPayloads() map[string][]byte {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	return map[string][]byte{
		"empty": {},
		"short": []byte("hello, curator"),
		"long":  []byte(strings.Repeat("go-curator compresses like Curator. ", 2000)),
		"bytes": all,
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("stored data is not gzip: %v", err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("stored data is not gzip: %v", err)
	}
	return out
}

func TestCompression_PerOperation(t *testing.T) {
	securityNoLeaks(t)
	connect, _, _ := ops2Chroot(t)
	c := startClient(t, builder(t, connect).Namespace("ns"))
	ctx := t.Context()
	for name, data := range compressionPayloads() {
		p := "/c/" + name
		if _, err := c.Create().Compressed().CreatingParentsIfNeeded().ForPath(ctx, p, data); err != nil {
			t.Fatal(err)
		}
		raw, _, err := c.GetData().ForPath(ctx, p)
		if err != nil || !bytes.Equal(gunzip(t, raw), data) {
			t.Errorf("%s: the stored bytes are not the data gzipped", name)
		}
		got, stat, err := c.GetData().Decompressed().ForPath(ctx, p)
		if err != nil || !bytes.Equal(got, data) || stat == nil || int(stat.DataLength) != len(raw) {
			t.Errorf("%s: Decompressed read = %d bytes, %+v, %v; want the %d bytes written", name, len(got), stat, err, len(data))
		}
		if name == "long" && len(raw) >= len(data)/10 {
			t.Errorf("%d repetitive bytes stored as %d: not compressed", len(data), len(raw))
		}
		next := append([]byte("next "), data...)
		if _, err := c.SetData().Compressed().ForPath(ctx, p, next); err != nil {
			t.Fatal(err)
		}
		if got, _, err := c.GetData().Decompressed().ForPath(ctx, p); err != nil || !bytes.Equal(got, next) {
			t.Errorf("%s: after SetData().Compressed() = %q, %v", name, got, err)
		}
	}

	// OrSetData compresses the write too.
	if _, err := c.Create().Compressed().OrSetData().ForPath(ctx, "/c/short", []byte("again")); err != nil {
		t.Fatal(err)
	}
	if got, _, err := c.GetData().Decompressed().ForPath(ctx, "/c/short"); err != nil || string(got) != "again" {
		t.Errorf("OrSetData().Compressed() = %q, %v", got, err)
	}

	// Data that is not compressed is an error, never a panic or raw bytes.
	if _, err := c.Create().ForPath(ctx, "/c/plain", []byte("not gzip")); err != nil {
		t.Fatal(err)
	}
	got, stat, err := c.GetData().Decompressed().ForPath(ctx, "/c/plain")
	if !errors.Is(err, framework.ErrBadCompressedData) || got != nil || stat == nil {
		t.Errorf("Decompressed read of plain data = %q, %+v, %v; want nil data, the stat, ErrBadCompressedData", got, stat, err)
	}
	raw, _, _ := c.GetData().ForPath(ctx, "/c/long")
	for name, bad := range map[string][]byte{
		"truncated":   raw[:len(raw)/2],
		"bad crc":     append(append([]byte(nil), raw[:len(raw)-8]...), 0, 0, 0, 0, 0, 0, 0, 0),
		"magic only":  {0x1f, 0x8b},
		"trailing ff": append(append([]byte(nil), raw...), 0xff),
	} {
		if _, err := c.SetData().ForPath(ctx, "/c/bad", bad); err != nil {
			if _, err = c.Create().ForPath(ctx, "/c/bad", bad); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := c.GetData().Decompressed().ForPath(ctx, "/c/bad"); !errors.Is(err, framework.ErrBadCompressedData) {
			t.Errorf("%s: Decompressed read = %v; want ErrBadCompressedData", name, err)
		}
	}
}

// upper is a provider that is not gzip, to check that the client's
// provider is the one used.
type upper struct{}

func (upper) Compress(_ string, d []byte) ([]byte, error) {
	return append([]byte("U:"), bytes.ToUpper(d)...), nil
}

func (upper) Decompress(_ string, d []byte) ([]byte, error) {
	rest, ok := bytes.CutPrefix(d, []byte("U:"))
	if !ok {
		return nil, errors.New("no U: prefix")
	}
	return bytes.ToLower(rest), nil
}

func TestCompression_WholeClientAndProvider(t *testing.T) {
	securityNoLeaks(t)
	connect, _, _ := ops2Chroot(t)
	ctx := t.Context()
	all := startClient(t, builder(t, connect).EnableCompression())
	plain := startClient(t, builder(t, connect))

	if _, err := all.Create().CreatingParentsIfNeeded().ForPath(ctx, "/w/a", []byte("every write")); err != nil {
		t.Fatal(err)
	}
	if _, err := all.Transaction().Create("/w/t", []byte("in a transaction"), framework.Persistent).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"/w/a": "every write", "/w/t": "in a transaction"} {
		raw, _, err := plain.GetData().ForPath(ctx, p)
		if err != nil || string(gunzip(t, raw)) != want {
			t.Errorf("%s stored by an EnableCompression client is not %q gzipped (%v)", p, want, err)
		}
		if got, _, err := all.GetData().ForPath(ctx, p); err != nil || string(got) != want {
			t.Errorf("%s read by the EnableCompression client = %q, %v", p, got, err)
		}
		if got, _, err := plain.GetData().Decompressed().ForPath(ctx, p); err != nil || string(got) != want {
			t.Errorf("%s read Decompressed by another client = %q, %v", p, got, err)
		}
	}
	// A parent made for the create holds no data: it reads as empty.
	if got, _, err := all.GetData().ForPath(ctx, "/w"); err != nil || len(got) != 0 {
		t.Errorf("the data-less parent read under EnableCompression = %q, %v; want empty", got, err)
	}
	if _, err := plain.Create().ForPath(ctx, "/w/raw", []byte("raw")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := all.GetData().ForPath(ctx, "/w/raw"); !errors.Is(err, framework.ErrBadCompressedData) {
		t.Errorf("an uncompressed node read under EnableCompression = %v; want ErrBadCompressedData", err)
	}

	custom := startClient(t, builder(t, connect).CompressionProvider(upper{}))
	if _, err := custom.Create().Compressed().ForPath(ctx, "/w/u", []byte("shout")); err != nil {
		t.Fatal(err)
	}
	if raw, _, _ := plain.GetData().ForPath(ctx, "/w/u"); string(raw) != "U:SHOUT" {
		t.Errorf("the custom provider stored %q, want U:SHOUT", raw)
	}
	if got, _, err := custom.GetData().Decompressed().ForPath(ctx, "/w/u"); err != nil || string(got) != "shout" {
		t.Errorf("the custom provider read %q, %v", got, err)
	}
	if _, _, err := custom.GetData().Decompressed().ForPath(ctx, "/w/raw"); !errors.Is(err, framework.ErrBadCompressedData) {
		t.Errorf("a provider's own error = %v; want it to match ErrBadCompressedData", err)
	}
}

func TestCompression_GzipProviderRejectsGarbage(t *testing.T) {
	var g framework.GzipCompression
	for _, in := range [][]byte{{0}, {0x1f}, {0x1f, 0x8b, 8}, []byte("plain text"), bytes.Repeat([]byte{0xff}, 64)} {
		if out, err := g.Decompress("/p", in); !errors.Is(err, framework.ErrBadCompressedData) || out != nil {
			t.Errorf("Decompress(%x) = %x, %v; want ErrBadCompressedData", in, out, err)
		}
	}
	out, err := g.Compress("/p", []byte("x"))
	if err != nil || out[0] != 0x1f || out[1] != 0x8b || out[9] != 0 {
		t.Errorf("Compress = %x, %v; want a gzip header with OS byte 0, as Java writes", out, err)
	}
}

func TestInteropCompression_JavaAndGoReadEachOthersData(t *testing.T) {
	securityNoLeaks(t)
	connect, _, _ := ops2Chroot(t)
	java := interop.StartCompress(t, connect)
	c := startClient(t, builder(t, connect))
	ctx := t.Context()
	for name, data := range compressionPayloads() {
		if name == "long" {
			data = data[:4000] // the helper's lines stay short
		}
		t.Run(name, func(t *testing.T) {
			fromJava, fromGo := "/java/"+name, "/go/"+name
			if _, err := java.Call(ctx, "create.compressed", fromJava, interop.Hex(data)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Create().Compressed().CreatingParentsIfNeeded().ForPath(ctx, fromGo, data); err != nil {
				t.Fatal(err)
			}
			if got, _, err := c.GetData().Decompressed().ForPath(ctx, fromJava); err != nil || !bytes.Equal(got, data) {
				t.Errorf("Go read of Curator's compressed node = %d bytes, %v; want the %d written", len(got), err, len(data))
			}
			if got, err := java.Data(ctx, "get.decompressed", fromGo); err != nil || !bytes.Equal(got, data) {
				t.Errorf("Curator's read of Go's compressed node = %d bytes, %v; want the %d written", len(got), err, len(data))
			}
			// Both wrote gzip: each side's raw bytes are the other's format.
			raw, err := java.Data(ctx, "get.raw", fromJava)
			if err != nil || !bytes.Equal(gunzip(t, raw), data) {
				t.Errorf("Curator stored bytes that are not gzip of the data (%v)", err)
			}

			next := append([]byte("set "), data...)
			if _, err := java.Call(ctx, "set.compressed", fromGo, interop.Hex(next)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.SetData().Compressed().ForPath(ctx, fromJava, next); err != nil {
				t.Fatal(err)
			}
			if got, _, err := c.GetData().Decompressed().ForPath(ctx, fromGo); err != nil || !bytes.Equal(got, next) {
				t.Errorf("Go read after Curator's compressed write = %d bytes, %v", len(got), err)
			}
			if got, err := java.Data(ctx, "get.decompressed", fromJava); err != nil || !bytes.Equal(got, next) {
				t.Errorf("Curator's read after Go's compressed write = %d bytes, %v", len(got), err)
			}
		})
	}
}
