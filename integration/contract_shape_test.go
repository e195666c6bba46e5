package integration

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/recipes/discovery"
	"github.com/go-curator/curator/recipes/groupmember"
	"github.com/go-curator/curator/recipes/leaderlatch"
	"github.com/go-curator/curator/recipes/leaderselector"
	"github.com/go-curator/curator/recipes/multilock"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/persistentnode"
	"github.com/go-curator/curator/recipes/queue"
	"github.com/go-curator/curator/recipes/rwlock"
	"github.com/go-curator/curator/recipes/semaphoremutex"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/recipes/sharedcount"
)

// holdLike is the one shape of every hold, lease and leadership (issue 26
// item 3; framework doc, "API rules"): a value any goroutine may use.
type holdLike interface {
	Lost() <-chan struct{}
	FencingToken() (int64, error)
	Release(ctx context.Context) error
	Session() framework.Session
	Node() string
}

// The compile-time half of the contract.
var (
	_ holdLike = (*mutex.Hold)(nil)
	_ holdLike = (*rwlock.Hold)(nil)
	_ holdLike = (*multilock.Hold)(nil)
	_ holdLike = (*semaphorev2.Lease)(nil)
	_ holdLike = (*semaphoremutex.Hold)(nil)
	_ holdLike = (*leaderlatch.Leadership)(nil)
	_ holdLike = (*leaderselector.Leadership)(nil)
)

// holdTypes lists every hold-like type of the library by its source name
// (package.Type): a nil pointer of each. The test finds them in the source
// too (an exported type with Lost and Release methods), so a new one
// cannot be left out.
func holdTypes() map[string]any {
	return map[string]any{
		"mutex.Hold":                (*mutex.Hold)(nil),
		"rwlock.Hold":               (*rwlock.Hold)(nil),
		"multilock.Hold":            (*multilock.Hold)(nil),
		"semaphorev2.Lease":         (*semaphorev2.Lease)(nil),
		"semaphoremutex.Hold":       (*semaphoremutex.Hold)(nil),
		"leaderlatch.Leadership":    (*leaderlatch.Leadership)(nil),
		"leaderselector.Leadership": (*leaderselector.Leadership)(nil),
	}
}

// holdPending lists the holds that do not have the whole shape yet, with
// the methods they lack: the test logs them, and fails once one has the
// shape, so that it moves to the compile-time list above.
var holdPending = map[string][]string{}

// closeTakesCtx is the Close rule (framework doc, "API rules"): a Close
// that writes to ZooKeeper (deletes the nodes the value made) takes a ctx
// to bound that write; a Close that only stops local work (watches,
// listeners, goroutines, or the client's connection) takes none and is
// an io.Closer. Every exported Close of the library must be listed here.
var closeTakesCtx = map[string]bool{
	"framework.Client":          false, // closes the connection and joins background work
	"framework.PersistentWatch": true,  // removes the watch from the server (removeWatches)
	"framework.CircuitBreaker":  false, // stops its timer and the listener's goroutine
	"cache.Node":                false, // stops the watches and the listeners
	"cache.Children":            false,
	"cache.Tree":                false,
	"sharedcount.Count":         false, // stops the watch loop and the listeners
	"sharedcount.Value":         false,
	"semaphorev2.Lease":         true, // deletes the lease node
	"leaderlatch.Latch":         true, // deletes the candidate's node
	"leaderselector.Selector":   true, // deletes the contender's node
	"leaderselector.Election":   true,
	"persistentnode.Node":       true, // deletes the node it keeps
	"persistentnode.TTLNode":    true,
	"groupmember.Member":        true,  // deletes the member's node
	"discovery.Discovery":       true,  // unregisters (deletes) its instances
	"discovery.Provider":        false, // stops its cache
	"discovery.Cache":           false, // stops the children cache and the listeners
	"queue.Queue":               true,  // leaves the consumers' line (deletes its node) and waits for the item in hand
	"queue.IDQueue":             true,
	"queue.PriorityQueue":       true,
	"queue.DelayQueue":          true,
}

// closeValues gives a nil pointer of each type of closeTakesCtx, for the
// reflect check of the compiled signatures.
func closeValues() map[string]any {
	return map[string]any{
		"framework.Client":          (*framework.Client)(nil),
		"framework.PersistentWatch": (*framework.PersistentWatch)(nil),
		"framework.CircuitBreaker":  (*framework.CircuitBreaker)(nil),
		"cache.Node":                (*cache.Node)(nil),
		"cache.Children":            (*cache.Children)(nil),
		"cache.Tree":                (*cache.Tree)(nil),
		"sharedcount.Count":         (*sharedcount.Count)(nil),
		"sharedcount.Value":         (*sharedcount.Value)(nil),
		"semaphorev2.Lease":         (*semaphorev2.Lease)(nil),
		"leaderlatch.Latch":         (*leaderlatch.Latch)(nil),
		"leaderselector.Selector":   (*leaderselector.Selector)(nil),
		"leaderselector.Election":   (*leaderselector.Election)(nil),
		"persistentnode.Node":       (*persistentnode.Node)(nil),
		"discovery.Discovery":       (*discovery.Discovery)(nil),
		"discovery.Provider":        (*discovery.Provider)(nil),
		"discovery.Cache":           (*discovery.Cache)(nil),
		"persistentnode.TTLNode":    (*persistentnode.TTLNode)(nil),
		"groupmember.Member":        (*groupmember.Member)(nil),
		"queue.Queue":               (*queue.Queue)(nil),
		"queue.IDQueue":             (*queue.IDQueue)(nil),
		"queue.PriorityQueue":       (*queue.PriorityQueue)(nil),
		"queue.DelayQueue":          (*queue.DelayQueue)(nil),
	}
}

// sourceMethods maps "package.Type" to the methods the library's public
// packages (framework, retry, recipes/...; not internal/) declare on it,
// each as its signature without the receiver ("(ctx context.Context)
// error").
func sourceMethods(t *testing.T) map[string]map[string]string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	fset := token.NewFileSet()
	for _, top := range []string{"framework", "retry", "recipes"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "internal" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || !fn.Name.IsExported() {
					continue
				}
				recv := fn.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				id, ok := recv.(*ast.Ident)
				if !ok || !id.IsExported() {
					continue
				}
				name := f.Name.Name + "." + id.Name
				if out[name] == nil {
					out[name] = map[string]string{}
				}
				out[name][fn.Name.Name] = signature(fn.Type)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("read the library's source: %v", err)
		}
	}
	if len(out) < 30 {
		t.Fatalf("found methods on only %d types under %s: wrong directory?", len(out), root)
	}
	return out
}

// signature prints a func type without its name: "(ctx context.Context) error".
func signature(ft *ast.FuncType) string {
	return strings.TrimPrefix(types.ExprString(ft), "func")
}

// TestContract_HoldsHaveOneShape checks that every hold, lease and
// leadership of the library has the methods of holdLike, with the same
// signatures, found both in the source (so a new hold type is caught) and
// in the compiled types; and that a nil and a zero one hold nothing:
// Lost closed, Node "", Session invalid, FencingToken and Release errors.
func TestContract_HoldsHaveOneShape(t *testing.T) {
	want := reflect.TypeFor[holdLike]()
	vals := holdTypes()

	src := sourceMethods(t)
	for name, ms := range src {
		_, lost := ms["Lost"]
		_, release := ms["Release"]
		if lost && release {
			if _, ok := vals[name]; !ok {
				t.Errorf("%s has Lost and Release: add it to holdTypes (and to the compile-time list)", name)
			}
		}
	}

	for name, v := range vals {
		t.Run(name, func(t *testing.T) {
			typ := reflect.TypeOf(v)
			var missing []string
			for i := range want.NumMethod() {
				m := want.Method(i)
				got, ok := typ.MethodByName(m.Name)
				switch {
				case !ok:
					missing = append(missing, m.Name)
				case !sameSignature(got.Type, m.Type):
					t.Errorf("%s.%s is %v; the hold shape is %v", name, m.Name, got.Type, m.Type)
				}
			}
			if pend, ok := holdPending[name]; ok {
				if !slices.Equal(missing, pend) {
					t.Errorf("%s lacks %v, holdPending says %v: update holdPending (and the compile-time list)", name, missing, pend)
				}
				t.Logf("%s lacks %v (pending)", name, missing)
			} else if len(missing) > 0 {
				t.Errorf("%s lacks %v of the hold shape", name, missing)
			}

			zero := reflect.New(typ.Elem()).Interface()
			for _, h := range []any{v, zero} {
				checkEmptyHold(t, name, h)
			}
		})
	}
}

// sameSignature compares a method's type (receiver first) with an
// interface method's type (no receiver).
func sameSignature(method, iface reflect.Type) bool {
	if method.NumIn() != iface.NumIn()+1 || method.NumOut() != iface.NumOut() {
		return false
	}
	for i := range iface.NumIn() {
		if method.In(i+1) != iface.In(i) {
			return false
		}
	}
	for i := range iface.NumOut() {
		if method.Out(i) != iface.Out(i) {
			return false
		}
	}
	return true
}

// checkEmptyHold checks a nil or zero hold: it holds nothing.
func checkEmptyHold(t *testing.T, name string, h any) {
	t.Helper()
	kind := "zero"
	if reflect.ValueOf(h).IsNil() {
		kind = "nil"
	}
	if lost, ok := h.(interface{ Lost() <-chan struct{} }); ok {
		select {
		case <-lost.Lost():
		default:
			t.Errorf("%s %s: Lost() is not closed", kind, name)
		}
	}
	if n, ok := h.(interface{ Node() string }); ok && n.Node() != "" {
		t.Errorf("%s %s: Node() = %q, want \"\"", kind, name, n.Node())
	}
	if s, ok := h.(interface{ Session() framework.Session }); ok && s.Session().Valid() {
		t.Errorf("%s %s: Session() is valid", kind, name)
	}
	if f, ok := h.(interface{ FencingToken() (int64, error) }); ok {
		if _, err := f.FencingToken(); err == nil {
			t.Errorf("%s %s: FencingToken() returned no error", kind, name)
		}
	}
	if r, ok := h.(interface{ Release(context.Context) error }); ok {
		if err := r.Release(t.Context()); err == nil {
			t.Errorf("%s %s: Release returned no error", kind, name)
		}
	}
}

// TestContract_CloseTakesCtxOnlyForIO checks every exported Close of the
// library, in the source and compiled, against the Close rule:
// Close(ctx) error where Close deletes nodes, Close() error where it only
// stops local work.
func TestContract_CloseTakesCtxOnlyForIO(t *testing.T) {
	src := sourceMethods(t)
	var found []string
	for name, ms := range src {
		sig, ok := ms["Close"]
		if !ok {
			continue
		}
		found = append(found, name)
		withCtx, listed := closeTakesCtx[name]
		if !listed {
			t.Errorf("%s.Close%s: add %s to closeTakesCtx under the Close rule (framework doc, \"API rules\")", name, sig, name)
			continue
		}
		want := "() error"
		if withCtx {
			want = "(ctx context.Context) error"
		}
		if sig != want {
			t.Errorf("source: %s.Close%s, the Close rule wants Close%s", name, sig, want)
		}
	}
	for name := range closeTakesCtx {
		if !slices.Contains(found, name) {
			t.Errorf("closeTakesCtx lists %s, which has no Close in the source", name)
		}
	}

	errType := reflect.TypeFor[error]()
	for name, v := range closeValues() {
		m, ok := reflect.TypeOf(v).MethodByName("Close")
		if !ok {
			t.Errorf("%s has no Close", name)
			continue
		}
		in := []reflect.Type{reflect.TypeOf(v)}
		if closeTakesCtx[name] {
			in = append(in, ctxType)
		}
		want := reflect.FuncOf(in, []reflect.Type{errType}, false)
		if m.Type != want {
			t.Errorf("compiled: %s.Close is %v, the Close rule wants %v", name, m.Type, want)
		}
	}
	if len(closeValues()) != len(closeTakesCtx) {
		t.Errorf("closeValues has %d types, closeTakesCtx %d", len(closeValues()), len(closeTakesCtx))
	}
}

// TestContract_HoldsReportTheirSession takes one of every hold, lease and
// leadership on a server: each reports the session its node was made on
// (the client's current one), a node under its path, and an open Lost,
// and Release gives it up.
func TestContract_HoldsReportTheirSession(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	base := testPath(t)
	sess, err := c.CurrentSession(ctx)
	if err != nil {
		t.Fatal(err)
	}

	take := map[string]func(p string) (any, error){
		"mutex.Hold": func(p string) (any, error) { return must(mutex.New(c, p)).Acquire(ctx) },
		"rwlock.Hold": func(p string) (any, error) {
			return must(rwlock.New(c, p)).WriteLock().Acquire(ctx)
		},
		"multilock.Hold": func(p string) (any, error) {
			// Of semaphoremutex locks: their holds report their session
			// (a mutex.Hold does not yet, see holdPending).
			a, b := must(semaphoremutex.New(c, p+"/a")), must(semaphoremutex.New(c, p+"/b"))
			return must(multilock.New(multilock.Of(a), multilock.Of(b))).Acquire(ctx)
		},
		"semaphorev2.Lease": func(p string) (any, error) { return must(semaphorev2.New(c, p, 2)).Acquire(ctx) },
		"semaphoremutex.Hold": func(p string) (any, error) {
			return must(semaphoremutex.New(c, p)).Acquire(ctx)
		},
		"leaderlatch.Leadership": func(p string) (any, error) {
			l := must(leaderlatch.New(c, p, leaderlatch.WithID("shape")))
			if err := l.Start(ctx); err != nil {
				return nil, err
			}
			t.Cleanup(func() { _ = l.Close(context.Background()) })
			return l.Await(ctx)
		},
		"leaderselector.Leadership": func(p string) (any, error) {
			e := must(leaderselector.NewElection(c, p))
			t.Cleanup(func() { _ = e.Close(context.Background()) })
			return e.Campaign(ctx)
		},
	}
	if len(take) != len(holdTypes()) {
		t.Fatalf("take has %d holds, holdTypes %d", len(take), len(holdTypes()))
	}
	for name, acquire := range take {
		t.Run(name, func(t *testing.T) {
			p := base + "/" + strings.ReplaceAll(name, ".", "_")
			v, err := acquire(p)
			if err != nil {
				t.Fatalf("acquire: %v", err)
			}
			h := v.(interface {
				Lost() <-chan struct{}
				FencingToken() (int64, error)
				Release(ctx context.Context) error
				Node() string
			})
			if !strings.HasPrefix(h.Node(), p+"/") {
				t.Errorf("Node() = %q, want a node under %s", h.Node(), p)
			}
			select {
			case <-h.Lost():
				t.Error("Lost() is closed while held")
			default:
			}
			if _, err := h.FencingToken(); err != nil {
				t.Errorf("FencingToken: %v", err)
			}
			if s, ok := v.(interface{ Session() framework.Session }); ok {
				if got := s.Session(); !got.Valid() || got.ID() != sess.ID() {
					t.Errorf("Session() = %#x (valid %v), want the client's %#x", got.ID(), got.Valid(), sess.ID())
				}
			} else if _, pending := holdPending[name]; !pending {
				t.Error("no Session method")
			}
			if err := h.Release(ctx); err != nil {
				t.Errorf("Release: %v", err)
			}
		})
	}
}
