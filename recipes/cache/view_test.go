package cache

import (
	"math"
	"slices"
	"testing"

	"github.com/go-zookeeper/zk"
)

func TestRecord_RoundTrip(t *testing.T) {
	for name, tc := range map[string]struct {
		st   zk.Stat
		data []byte
	}{
		"zero, nil data": {zk.Stat{}, nil},
		"empty data":     {zk.Stat{Czxid: 5, Mzxid: 5, Pzxid: 5}, []byte{}},
		"typical": {zk.Stat{Czxid: 0x1_0000_2a3b, Mzxid: 0x1_0000_2a3b, Pzxid: 0x1_0000_2a3b,
			Ctime: 1_795_000_000_000, Mtime: 1_795_000_000_000, DataLength: 16}, []byte("value-0000000000")},
		"changed, ephemeral": {zk.Stat{Czxid: 0x3_0000_0001, Mzxid: 0x4_0000_0007, Pzxid: 0x3_0000_0009,
			Ctime: 1_795_000_000_000, Mtime: 1_795_000_123_456, Version: 7, Cversion: 3, Aversion: 1,
			EphemeralOwner: 0x7f00_0012_3456_789a, DataLength: 3, NumChildren: 2}, []byte{0, 1, 0xff}},
		"extremes": {zk.Stat{Czxid: math.MaxInt64, Mzxid: math.MinInt64, Pzxid: -1,
			Ctime: math.MinInt64, Mtime: math.MaxInt64, Version: math.MinInt32, Cversion: math.MaxInt32,
			Aversion: -1, EphemeralOwner: -1, DataLength: math.MaxInt32, NumChildren: math.MinInt32}, []byte("x")},
	} {
		t.Run(name, func(t *testing.T) {
			rec := encodeRecord(&tc.st, tc.data)
			st, data := decodeRecord(rec)
			if st != tc.st {
				t.Errorf("stat = %+v, want %+v", st, tc.st)
			}
			if (data == nil) != (tc.data == nil) || string(data) != string(tc.data) {
				t.Errorf("data = %q (nil %v), want %q (nil %v)", data, data == nil, tc.data, tc.data == nil)
			}
		})
	}
}

func TestRecord_Compact(t *testing.T) {
	st := zk.Stat{Czxid: 0x1_0000_2a3b, Mzxid: 0x1_0000_2a3b, Pzxid: 0x1_0000_2a3b,
		Ctime: 1_795_000_000_000, Mtime: 1_795_000_000_000, DataLength: 16}
	if n := len(encodeRecord(&st, nil)); n > 16 {
		t.Errorf("a data-less record of a node never changed is %d bytes, want at most 16", n)
	}
	if n := len(encodeRecord(&st, []byte("value-0000000000"))); n > 32 {
		t.Errorf("a record of a node never changed with 16 bytes of data is %d bytes, want at most 32", n)
	}
}

func TestView(t *testing.T) {
	st := zk.Stat{Czxid: 1}
	rec := func(d string) string { return encodeRecord(&st, []byte(d)) }
	for _, root := range []string{"/", "/r"} {
		t.Run(root, func(t *testing.T) {
			v := newView(root)
			under := func(n string) string {
				if root == "/" {
					return "/" + n
				}
				return root + "/" + n
			}
			a, b, ab, ac := under("a"), under("b"), under("a/b"), under("a/c")
			for _, p := range []string{root, b, a, ac, ab} {
				if _, had := v.put(p, rec(p)); had {
					t.Fatalf("put %s: had", p)
				}
			}
			v.trim()
			if old, had := v.put(ab, rec("new")); !had || entryOf(ab, old).Data == nil || string(entryOf(ab, old).Data) != ab {
				t.Errorf("put %s again: old %q, had %v", ab, old, had)
			}
			want := []string{root, a, ab, ac, b}
			slices.Sort(want)
			var got []string
			for _, e := range v.entries() {
				got = append(got, e.Path)
			}
			if !slices.Equal(got, want) {
				t.Errorf("entries %v, want %v", got, want)
			}
			if kids := v.children(a); !slices.Equal(kids, []string{"b", "c"}) {
				t.Errorf("children of %s: %v", a, kids)
			}
			if r, ok := v.get(ab); !ok || string(entryOf(ab, r).Data) != "new" {
				t.Errorf("get %s: %q, %v", ab, r, ok)
			}
			for _, p := range []string{under("zz"), "/elsewhere/a", under("a/b/c")} {
				if v.has(p) {
					t.Errorf("has %s", p)
				}
			}
			for _, p := range []string{ab, ac, a} {
				if _, had := v.remove(p); !had {
					t.Errorf("remove %s: not had", p)
				}
			}
			if _, had := v.remove(a); had {
				t.Errorf("remove %s twice", a)
			}
			if v.n != 2 || len(v.dirs) != 1 || v.children(a) != nil {
				t.Errorf("after removals: %d nodes, %d lists, children of %s %v", v.n, len(v.dirs), a, v.children(a))
			}
		})
	}
}
