package integration

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// go doc prints an exported const or var with the expression that
// defines it, so `const LockName = lockName` shows a reader a name they
// cannot look up (issue 32 §4). An exported const or var of a public
// package of the library must not be defined by an unexported name of its
// package, nor by a name from one of the module's internal packages (but
// for godocSentinelMaker and the listed exceptions).

// godocSentinelMaker is the one internal name allowed in a value: a
// recipe's sentinel that matches a lower layer's (its ErrSessionLost
// matches framework.ErrSessionLost) is made by errtext.Sentinel, and go doc
// then shows its message and the sentinel it matches, which is what a
// reader needs. No public function makes such an error without a second
// package prefix in its text.
const godocSentinelMaker = "errtext.Sentinel"

// godocNameExceptions are the exported vars whose values still name an
// unexported or internal name, each waiting for a change in a file its
// owner is editing; the test fails once one is fixed, so that it leaves
// this list.
var godocNameExceptions = map[string]string{
	"recipes/cache.ErrNoNode": "a value of the unexported type noNode, which matches the framework's no-node sentinels",
}

// publicPackageDirs returns the directories of the library module's
// public packages (not internal, not a module of their own), relative to
// root.
func publicPackageDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if rel != "." {
			if strings.HasPrefix(name, ".") || name == "testdata" || name == "internal" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		if slices.ContainsFunc(files, func(f string) bool { return !strings.HasSuffix(f, "_test.go") }) {
			dirs = append(dirs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// leakedNames returns, for each exported const or var of the package in
// dir, the unexported package-level names and internal-package names its
// value uses, as "pkg.Name: names".
func leakedNames(fset *token.FileSet, dir string, files []*ast.File) []string {
	own := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					own[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							own[n.Name] = true
						}
					case *ast.TypeSpec:
						own[s.Name.Name] = true
					}
				}
			}
		}
	}
	var out []string
	for _, f := range files {
		internal := map[string]bool{} // local names of imported internal packages
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.Contains("/"+p+"/", "/internal/") {
				continue
			}
			name := filepath.Base(p)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			internal[name] = true
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				var used []string
				note := func(n string) {
					if !slices.Contains(used, n) {
						used = append(used, n)
					}
				}
				var exprs []ast.Node
				for _, v := range vs.Values {
					exprs = append(exprs, v)
				}
				if vs.Type != nil {
					exprs = append(exprs, vs.Type)
				}
				for _, e := range exprs {
					ast.Inspect(e, func(n ast.Node) bool {
						switch n := n.(type) {
						case *ast.SelectorExpr:
							if x, ok := n.X.(*ast.Ident); ok && internal[x.Name] {
								note(x.Name + "." + n.Sel.Name)
							}
							ast.Inspect(n.X, func(m ast.Node) bool {
								if id, ok := m.(*ast.Ident); ok && m != n.X && own[id.Name] && !id.IsExported() {
									note(id.Name)
								}
								return true
							})
							return false // Sel is a field or a package's name
						case *ast.KeyValueExpr:
							if _, ok := n.Key.(*ast.Ident); ok {
								ast.Inspect(n.Value, func(m ast.Node) bool {
									if id, ok := m.(*ast.Ident); ok && own[id.Name] && !id.IsExported() {
										note(id.Name)
									}
									return true
								})
								return false // a struct field's name
							}
						case *ast.Ident:
							if own[n.Name] && !n.IsExported() && types.Universe.Lookup(n.Name) == nil {
								note(n.Name)
							}
						}
						return true
					})
				}
				used = slices.DeleteFunc(used, func(n string) bool { return n == godocSentinelMaker })
				if len(used) == 0 {
					continue
				}
				for _, name := range vs.Names {
					if name.IsExported() {
						out = append(out, fmt.Sprintf("%s.%s: %s (%s)", dir, name.Name, strings.Join(used, ", "), fset.Position(name.Pos())))
					}
				}
			}
		}
	}
	return out
}

// TestGoDoc_ExportedValuesNameNoInternals walks the library's public
// packages.
func TestGoDoc_ExportedValuesNameNoInternals(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dirs := publicPackageDirs(t, root)
	if !slices.Contains(dirs, "framework") || !slices.Contains(dirs, "recipes/mutex") || slices.Contains(dirs, "internal/lockcore") {
		t.Fatalf("public packages %v: the walk is broken", dirs)
	}
	seen := map[string]bool{}
	for _, dir := range dirs {
		fset := token.NewFileSet()
		var files []*ast.File
		paths, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		for _, l := range leakedNames(fset, dir, files) {
			key, _, _ := strings.Cut(l, ":")
			seen[key] = true
			if _, ok := godocNameExceptions[key]; !ok {
				t.Errorf("%s: go doc shows a name the reader cannot look up; give the value itself", l)
			}
		}
	}
	for key := range godocNameExceptions {
		if !seen[key] {
			t.Errorf("%s no longer names an internal: remove it from godocNameExceptions", key)
		}
	}
}

// TestGoDoc_LeakCheckCatches shows the check catching an alias of an
// unexported name, a conversion and a call naming an internal package, and
// passing literals, exported names and other packages' names.
func TestGoDoc_LeakCheckCatches(t *testing.T) {
	t.Parallel()
	src := `package p
import (
	"errors"
	"time"
	"example.com/m/internal/core"
	"example.com/m/internal/errtext"
	"example.com/m/framework"
)
const lockName = "lock-"
type hidden struct{}
func (hidden) Error() string { return "" }
const LockName = lockName
var Msg = []byte(core.Message)
var ErrLost = core.Sentinel("p: lost", framework.ErrSessionLost)
var ErrGone = errtext.Sentinel("p: gone", framework.ErrSessionLost)
var ErrHidden error = hidden{}
const Bound = 2 * time.Second
const Name = "lock-"
var ErrX = errors.New("p: x")
var ErrY = framework.ErrNoNode
const Max = 1 << 20
var Limits = struct{ n int }{n: 3}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := leakedNames(fset, "p", []*ast.File{f})
	var names []string
	for _, l := range got {
		k, _, _ := strings.Cut(l, ":")
		names = append(names, k)
	}
	want := []string{"p.LockName", "p.Msg", "p.ErrLost", "p.ErrHidden"}
	if !slices.Equal(names, want) {
		t.Errorf("flagged %q, want %q (%q)", names, want, got)
	}
}
