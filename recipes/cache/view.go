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
// varints, then its data. The record starts with a mask of the fields it
// holds: a field that is zero, or equal to the field it is a delta of
// (Mzxid and Pzxid of Czxid, Mtime of Ctime, DataLength of the data's
// length), is left out. A node never changed, with 16 bytes of data,
// costs one 32-byte allocation, a data-less one a 16-byte one, where a
// zk.Stat alone is 72 bytes.
//
// Paths are not copied: the view holds the strings the lasting watch
// reported, whose bytes the watch keeps anyway as its own map's keys. A
// node sits in its parent's list of children, sorted by path, which is
// both the view and the children index: 32 bytes per node (path and
// record), and no map entry per node.

// The bits of a record's mask, the common ones first so that the mask of
// a node never changed fits in one byte.
const (
	recNilData = 1 << iota // Data is nil (null data, or WithoutData), not empty
	recCzxid
	recCtime
	recDataLength // DataLength differs from the data's length
	recMzxid      // as a delta of Czxid
	recMtime      // as a delta of Ctime
	recVersion
	recPzxid // as a delta of Czxid
	recCversion
	recNumChildren
	recAversion
	recEphemeralOwner
)

// encodeRecord returns st and data as one record.
func encodeRecord(st *zk.Stat, data []byte) string {
	fields := [...]struct {
		bit uint64
		v   int64
	}{
		{recCzxid, st.Czxid},
		{recCtime, st.Ctime},
		{recDataLength, int64(st.DataLength) - int64(len(data))},
		{recMzxid, st.Mzxid - st.Czxid},
		{recMtime, st.Mtime - st.Ctime},
		{recVersion, int64(st.Version)},
		{recPzxid, st.Pzxid - st.Czxid},
		{recCversion, int64(st.Cversion)},
		{recNumChildren, int64(st.NumChildren)},
		{recAversion, int64(st.Aversion)},
		{recEphemeralOwner, st.EphemeralOwner},
	}
	var mask uint64
	if data == nil {
		mask = recNilData
	}
	for _, f := range fields {
		if f.v != 0 {
			mask |= f.bit
		}
	}
	var buf [(len(fields) + 1) * binary.MaxVarintLen64]byte
	b := binary.AppendUvarint(buf[:0], mask)
	for _, f := range fields {
		if f.v != 0 {
			b = binary.AppendVarint(b, f.v)
		}
	}
	return string(b) + string(data) // one allocation
}

// recReader reads a record's varints.
type recReader struct {
	s    string
	i    int
	mask uint64
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

// field returns the next field if the mask has bit, else 0.
func (r *recReader) field(bit uint64) int64 {
	if r.mask&bit == 0 {
		return 0
	}
	u := r.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// decodeRecord returns the stat and data of rec. The data shares rec's
// bytes: like the Entry it goes into, it must not be modified.
func decodeRecord(rec string) (zk.Stat, []byte) {
	r := recReader{s: rec}
	r.mask = r.uvarint()
	var st zk.Stat
	st.Czxid = r.field(recCzxid)
	st.Ctime = r.field(recCtime)
	dataLength := r.field(recDataLength)
	st.Mzxid = st.Czxid + r.field(recMzxid)
	st.Mtime = st.Ctime + r.field(recMtime)
	st.Version = int32(r.field(recVersion))
	st.Pzxid = st.Czxid + r.field(recPzxid)
	st.Cversion = int32(r.field(recCversion))
	st.NumChildren = int32(r.field(recNumChildren))
	st.Aversion = int32(r.field(recAversion))
	st.EphemeralOwner = r.field(recEphemeralOwner)
	var data []byte
	switch d := rec[r.i:]; {
	case r.mask&recNilData != 0:
	case d == "":
		data = []byte{}
	default:
		data = unsafe.Slice(unsafe.StringData(d), len(d))
	}
	st.DataLength = int32(dataLength + int64(len(data)))
	return st, data
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

// trim gives back the room the lists of children grew into while the
// view loaded (append leaves up to half of a list empty): called once a
// load or a resync is complete.
func (v *view) trim() {
	for p, kids := range v.dirs {
		if cap(kids)-len(kids) > len(kids)/16 {
			v.dirs[p] = append(make([]child, 0, len(kids)), kids...)
		}
	}
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
