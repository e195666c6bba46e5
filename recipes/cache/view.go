package cache

import (
	"encoding/binary"
	"slices"
	"strings"
	"unsafe"

	"github.com/go-curator/curator/framework"
	"github.com/go-zookeeper/zk"
)

// The view keeps per node only what an Entry is made of, and builds the
// Entry when asked: a record (one string) holding the node's zk.Stat as
// varints, deltas where fields usually match (Mzxid and Pzxid against
// Czxid, Mtime against Ctime), then its data. A node of 16 bytes of data
// costs one 48-byte allocation, a data-less node one of 24 bytes, where a
// zk.Stat alone is 72.
//
// Paths are not copied: the view holds the strings the lasting watch
// reported, whose bytes the watch keeps anyway as its own map's keys. A
// node sits in its parent's list of children, sorted by path, which is
// both the view and the children index: 32 bytes per node (path and
// record), and no map entry per node.

// recNilData is the flag of a record whose Data is nil (a node with null
// data, or a cache WithoutData), not empty.
const recNilData = 1

// encodeRecord returns st and data as one record.
func encodeRecord(st *zk.Stat, data []byte) string {
	var buf [1 + 11*binary.MaxVarintLen64]byte
	b := buf[:1]
	if data == nil {
		b[0] = recNilData
	}
	b = binary.AppendUvarint(b, uint64(st.Czxid))
	b = binary.AppendVarint(b, st.Mzxid-st.Czxid)
	b = binary.AppendVarint(b, st.Pzxid-st.Czxid)
	b = binary.AppendVarint(b, st.Ctime)
	b = binary.AppendVarint(b, st.Mtime-st.Ctime)
	b = binary.AppendVarint(b, int64(st.Version))
	b = binary.AppendVarint(b, int64(st.Cversion))
	b = binary.AppendVarint(b, int64(st.Aversion))
	b = binary.AppendUvarint(b, uint64(st.EphemeralOwner))
	b = binary.AppendVarint(b, int64(st.DataLength))
	b = binary.AppendVarint(b, int64(st.NumChildren))
	return string(b) + string(data) // one allocation
}

// recReader reads a record's varints.
type recReader struct {
	s string
	i int
}

func (r *recReader) uvarint() uint64 {
	var x uint64
	for shift := 0; r.i < len(r.s); shift += 7 {
		c := r.s[r.i]
		r.i++
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return x
}

func (r *recReader) varint() int64 {
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// decodeRecord returns the stat and data of rec. The data shares rec's
// bytes: like the Entry it goes into, it must not be modified.
func decodeRecord(rec string) (zk.Stat, []byte) {
	r := recReader{s: rec, i: 1}
	var st zk.Stat
	st.Czxid = int64(r.uvarint())
	st.Mzxid = st.Czxid + r.varint()
	st.Pzxid = st.Czxid + r.varint()
	st.Ctime = r.varint()
	st.Mtime = st.Ctime + r.varint()
	st.Version = int32(r.varint())
	st.Cversion = int32(r.varint())
	st.Aversion = int32(r.varint())
	st.EphemeralOwner = int64(r.uvarint())
	st.DataLength = int32(r.varint())
	st.NumChildren = int32(r.varint())
	switch {
	case rec[0]&recNilData != 0:
		return st, nil
	case r.i == len(rec):
		return st, []byte{}
	}
	d := rec[r.i:]
	return st, unsafe.Slice(unsafe.StringData(d), len(d))
}

// entryOf returns the Entry of the node at p, of record rec.
func entryOf(p, rec string) Entry {
	st, data := decodeRecord(rec)
	return Entry{Path: p, Data: data, Stat: st}
}

// child is a cached node in its parent's list.
type child struct {
	path string // as the watch reported it
	rec  string
}

func cmpChild(c child, p string) int { return strings.Compare(c.path, p) }

// view is a cache's nodes: its root, and the cached children of each
// cached node that has some.
type view struct {
	root    string
	hasRoot bool // the root is in the view (never, in a Children cache)
	rootRec string
	dirs    map[string][]child // parent path -> children, sorted by path
	n       int                // nodes in the view
}

func newView(root string) *view { return &view{root: root, dirs: make(map[string][]child)} }

// under reports whether p is strictly below the root.
func (v *view) under(p string) bool {
	if v.root == "/" {
		return len(p) > 1 && p[0] == '/'
	}
	return len(p) > len(v.root) && p[len(v.root)] == '/' && strings.HasPrefix(p, v.root)
}

// get returns the record of the node at p.
func (v *view) get(p string) (string, bool) {
	if p == v.root {
		return v.rootRec, v.hasRoot
	}
	if !v.under(p) {
		return "", false
	}
	parent, _ := framework.SplitPath(p)
	kids := v.dirs[parent]
	if i, ok := slices.BinarySearchFunc(kids, p, cmpChild); ok {
		return kids[i].rec, true
	}
	return "", false
}

// has reports whether the node at p is in the view.
func (v *view) has(p string) bool {
	_, ok := v.get(p)
	return ok
}

// put sets the record of the node at p (a path under the root, or the
// root), and returns the record it replaces, if any.
func (v *view) put(p, rec string) (old string, had bool) {
	if p == v.root {
		old, had = v.rootRec, v.hasRoot
		v.rootRec, v.hasRoot = rec, true
		if !had {
			v.n++
		}
		return old, had
	}
	parent, _ := framework.SplitPath(p)
	kids := v.dirs[parent]
	i, ok := slices.BinarySearchFunc(kids, p, cmpChild)
	if ok {
		old = kids[i].rec
		// The path too: the watch's map now holds this string as its
		// key, so the old one is let go.
		kids[i] = child{path: p, rec: rec}
		return old, true
	}
	v.dirs[parent] = slices.Insert(kids, i, child{path: p, rec: rec})
	v.n++
	return "", false
}

// remove takes the node at p out of the view, and returns its record.
func (v *view) remove(p string) (old string, had bool) {
	if p == v.root {
		old, had = v.rootRec, v.hasRoot
		v.rootRec, v.hasRoot = "", false
		if had {
			v.n--
		}
		return old, had
	}
	if !v.under(p) {
		return "", false
	}
	parent, _ := framework.SplitPath(p)
	kids := v.dirs[parent]
	i, ok := slices.BinarySearchFunc(kids, p, cmpChild)
	if !ok {
		return "", false
	}
	old = kids[i].rec
	v.n--
	switch kids = slices.Delete(kids, i, i+1); {
	case len(kids) == 0:
		delete(v.dirs, parent)
	case cap(kids) > 64 && len(kids) < cap(kids)/4:
		v.dirs[parent] = slices.Clone(kids) // give back a shrunk list's room
	default:
		v.dirs[parent] = kids
	}
	return old, true
}

// entries returns every node of the view, sorted by path.
func (v *view) entries() []Entry {
	out := make([]Entry, 0, v.n)
	if v.hasRoot {
		out = append(out, entryOf(v.root, v.rootRec))
	}
	for _, kids := range v.dirs {
		for _, k := range kids {
			out = append(out, entryOf(k.path, k.rec))
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// children returns the names of the cached children of p, sorted.
func (v *view) children(p string) []string {
	kids := v.dirs[p]
	if len(kids) == 0 {
		return nil
	}
	names := make([]string, len(kids))
	for i, k := range kids {
		_, names[i] = framework.SplitPath(k.path)
	}
	return names
}
