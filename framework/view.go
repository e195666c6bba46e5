package framework

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// ChildrenView is a copy, kept in the client, of one node's children: the
// lock recipes use it to decide, without reading the children again, who
// is first after a node goes (with ten thousand waiters, that read is the
// whole cost of a hand-off).
//
// The client keeps it with a persistent recursive watch (ZooKeeper 3.6's
// addWatch, which go-zookeeper v1.0.4 does not send: the client's wire
// sends it, and the read that fills the view, on go-zookeeper's connection
// and keeps their replies to itself). Every change the server reports on
// that connection is applied in the order the server sent it, before
// go-zookeeper sees the event, so the view is always the children as the
// server had them at one point of its history, no older than any event the
// client has delivered.
//
// The view is in step only while the connection it was read on lasts and
// its changes add up: the server numbers the sequential children of a node
// by the count of children ever created under it, and a created child
// whose number is not the count the view has seen, or a deleted child the
// view did not know, means an event did not come (ZooKeeper does not send
// a watcher the events of nodes it may not read). Then, and on every new
// connection, the view reads again. Against a server without addWatch the
// view is never in step, and the recipes read as before.
type ChildrenView struct {
	c    *Client
	path string // the server's path, namespace included
}

// ChildrenView returns the view of path's children. It does no I/O: the
// first call of Children starts the watch.
func (c *Client) ChildrenView(path string) (*ChildrenView, error) {
	if c == nil {
		return nil, ErrNilClient
	}
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	return &ChildrenView{c: c, path: fixPath(c.ns, path)}, nil
}

// Children returns the node's children, in no set order, and true, when
// the view is in step; otherwise nil and false, and the view starts to
// catch up. A view unused for a while (viewIdle) ends, and its watch is
// removed, unless the client has another watch on the path.
func (v *ChildrenView) Children() ([]string, bool) {
	if v == nil || v.c == nil {
		return nil, false
	}
	conn, w := v.c.connWire()
	if w == nil {
		return nil, false
	}
	h := w.cur.Load()
	if h == nil {
		return nil, false
	}
	return w.views.children(h, v.path, func(p string) bool { return v.c.watched(conn, p) })
}

// InStep reports whether the view is in step (Children would return its
// list), without starting it.
func (v *ChildrenView) InStep() bool {
	if v == nil || v.c == nil {
		return false
	}
	_, w := v.c.connWire()
	if w == nil {
		return false
	}
	h := w.cur.Load()
	return h != nil && w.views.inStep(h, v.path)
}

// watched reports whether the client has a watch of its own on path (a
// removeWatches for the view's watch would remove it too).
func (c *Client) watched(conn *zk.Conn, path string) bool {
	k := armKey{conn, path}
	c.oneShots.mu.Lock()
	n := len(c.oneShots.m[k])
	c.oneShots.mu.Unlock()
	return n > 0 || c.reg.watching(conn, path)
}

// ZooKeeper's opcodes, codes and values the views use.
const (
	opGetChildren2    = 12
	opRemoveWatches   = 18
	opAddWatch        = 106
	addWatchRecursive = 1  // AddWatchMode.PERSISTENT_RECURSIVE
	watcherTypeAny    = 3  // WatcherType.Any
	codeUnimplemented = -6 // KeeperException.Code.UNIMPLEMENTED
	codeNoNode        = -101
	statCversionAt    = 36 // offset of cversion in a Stat
)

const (
	viewIdle   = 30 * time.Second // a view unused this long ends
	viewsMax   = 256              // views per connection at most
	sweepEvery = time.Second
	firstOwnID = -1000 // own xids go down from here, clear of ZooKeeper's special ones
)

type ownKind uint8

const (
	ownAdd ownKind = iota
	ownRead
	ownRemove
)

// ownReq is one request the wire sent on its own.
type ownReq struct {
	xid  int32
	kind ownKind
	v    *view
}

// viewSet is a wire's views, by server path. Its lock is taken by the
// connection's reader for each event on a child of a viewed node, and by
// Children.
type viewSet struct {
	mu    sync.Mutex
	m     map[string]*view
	xid   int32
	off   bool // the server has no addWatch
	swept time.Time
}

type view struct {
	path     string
	conn     *wireConn // in step on this connection; nil: not in step
	syncing  *wireConn // addWatch and read sent on this connection
	armed    *wireConn // the server holds the view's watch for this connection
	addOK    bool      // the addWatch of the sync under way was answered OK
	kids     []string  // in creation order after the read's, sorted by sequence
	cversion int32     // children ever created under path; -1: unknown
	used     time.Time
}

func (s *viewSet) nextXid() int32 {
	if s.xid > firstOwnID || s.xid < -1<<30 {
		s.xid = firstOwnID
	}
	s.xid--
	return s.xid
}

// children serves ChildrenView.Children on h, the wire's connection.
func (s *viewSet) children(h *wireConn, path string, watched func(string) bool) ([]string, bool) {
	now := time.Now()
	s.mu.Lock()
	if s.off {
		s.mu.Unlock()
		return nil, false
	}
	frames, reqs := s.sweep(h, now, path, watched)
	v := s.m[path]
	if v == nil && len(s.m) < viewsMax {
		if s.m == nil {
			s.m = make(map[string]*view)
		}
		v = &view{path: path, cversion: -1}
		s.m[path] = v
	}
	var kids []string
	ok := false
	switch {
	case v == nil:
	case v.conn == h:
		v.used = now
		kids, ok = slices.Clone(v.kids), true
	case v.syncing != h:
		v.used = now
		v.syncing, v.addOK = h, false
		add, read := s.nextXid(), s.nextXid()
		frames = appendRequest(frames, add, opAddWatch, func(b []byte) []byte {
			return binary.BigEndian.AppendUint32(appendString(b, path), addWatchRecursive)
		})
		frames = appendRequest(frames, read, opGetChildren2, func(b []byte) []byte {
			return append(appendString(b, path), 0) // no watch
		})
		reqs = append(reqs, ownReq{add, ownAdd, v}, ownReq{read, ownRead, v})
	}
	s.mu.Unlock()
	if len(reqs) > 0 {
		// A failed write breaks the connection: dropConn resets the views.
		_ = h.inject(frames, reqs...)
	}
	return kids, ok
}

// inStep reports whether the view of path is in step on h.
func (s *viewSet) inStep(h *wireConn, path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.m[path]
	return v != nil && v.conn == h
}

// sweep ends the views unused for viewIdle, except keep, and returns the
// removeWatches requests for those in step on h. Called with s.mu held.
func (s *viewSet) sweep(h *wireConn, now time.Time, keep string, watched func(string) bool) ([]byte, []ownReq) {
	if now.Sub(s.swept) < sweepEvery {
		return nil, nil
	}
	s.swept = now
	var frames []byte
	var reqs []ownReq
	for p, v := range s.m {
		if p == keep || now.Sub(v.used) < viewIdle {
			continue
		}
		delete(s.m, p)
		if v.armed != h || watched(p) {
			continue // its watch went with its connection, or stays for another
		}
		x := s.nextXid()
		frames = appendRequest(frames, x, opRemoveWatches, func(b []byte) []byte {
			return binary.BigEndian.AppendUint32(appendString(b, p), watcherTypeAny)
		})
		reqs = append(reqs, ownReq{x, ownRemove, nil})
	}
	return frames, reqs
}

// reply applies the reply to one of the wire's own requests, read on h.
func (s *viewSet) reply(h *wireConn, q ownReq, code int32, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := q.v
	if v == nil || v.syncing != h {
		return
	}
	switch q.kind {
	case ownAdd:
		if code == codeUnimplemented {
			s.off = true
		}
		v.addOK = code == 0
		if v.addOK {
			v.armed = h
		} else {
			v.syncing = nil
		}
	case ownRead:
		v.syncing = nil
		if !v.addOK {
			return
		}
		switch code {
		case 0:
			kids, cversion, ok := parseChildren2(body)
			if !ok {
				return
			}
			slices.SortFunc(kids, bySequence)
			v.kids, v.cversion, v.conn = kids, cversion, h
		case codeNoNode:
			v.kids, v.cversion, v.conn = nil, -1, h
		}
	}
}

// event applies a watch event read on h, before go-zookeeper sees it.
func (s *viewSet) event(h *wireConn, body []byte) {
	if len(body) < 12 {
		return
	}
	typ := zk.EventType(int32(binary.BigEndian.Uint32(body[0:4])))
	if typ != zk.EventNodeCreated && typ != zk.EventNodeDeleted {
		return
	}
	n := int(int32(binary.BigEndian.Uint32(body[8:12])))
	if n <= 0 || n > len(body)-12 {
		return
	}
	path := body[12 : 12+n]
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) == 0 {
		return
	}
	if v := s.m[string(path)]; v != nil && v.conn == h {
		// The viewed node itself: a new node has no children yet.
		v.kids = v.kids[:0]
		v.cversion = -1
		if typ == zk.EventNodeCreated {
			v.cversion = 0
		}
	}
	i := lastSlash(path)
	parent := path[:max(i, 1)]
	v := s.m[string(parent)]
	if v == nil || v.conn != h {
		return
	}
	name := string(path[i+1:])
	if typ == zk.EventNodeDeleted {
		k := slices.Index(v.kids, name)
		if k < 0 {
			v.conn = nil // its create did not come
			return
		}
		v.kids = slices.Delete(v.kids, k, k+1)
		return
	}
	if seq, ok := sequenceOf(name); v.cversion < 0 || ok && seq != int64(v.cversion) {
		v.conn = nil // a create did not come
		return
	}
	v.cversion++
	v.kids = append(v.kids, name)
}

// dropConn stops the views in step, or catching up, on h.
func (s *viewSet) dropConn(h *wireConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range s.m {
		if v.conn == h {
			v.conn = nil
		}
		if v.syncing == h {
			v.syncing = nil
		}
		if v.armed == h {
			v.armed = nil
		}
	}
}

func lastSlash(p []byte) int {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return i
		}
	}
	return 0
}

// sequenceOf returns the sequence number ZooKeeper appends to a sequential
// node's name: its last ten digits.
func sequenceOf(name string) (int64, bool) {
	if len(name) < 10 {
		return 0, false
	}
	n, err := strconv.ParseInt(name[len(name)-10:], 10, 64)
	return n, err == nil && n >= 0
}

func bySequence(a, b string) int {
	sa, _ := sequenceOf(a)
	sb, _ := sequenceOf(b)
	return cmp.Or(cmp.Compare(sa, sb), cmp.Compare(a, b))
}

// appendRequest appends one request frame: length, xid, opcode, body.
func appendRequest(b []byte, xid, op int32, body func([]byte) []byte) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(xid))
	b = binary.BigEndian.AppendUint32(b, uint32(op))
	b = body(b)
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// parseChildren2 reads a GetChildren2Response: the children, then a Stat.
func parseChildren2(b []byte) ([]string, int32, bool) {
	if len(b) < 4 {
		return nil, 0, false
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	b = b[4:]
	if n < 0 || n > len(b)/4 {
		return nil, 0, false
	}
	kids := make([]string, 0, n)
	for range n {
		if len(b) < 4 {
			return nil, 0, false
		}
		k := int(int32(binary.BigEndian.Uint32(b)))
		if k < 0 || k > len(b)-4 {
			return nil, 0, false
		}
		kids = append(kids, string(b[4:4+k]))
		b = b[4+k:]
	}
	if len(b) < statCversionAt+4 {
		return nil, 0, false
	}
	return kids, int32(binary.BigEndian.Uint32(b[statCversionAt:])), true
}
