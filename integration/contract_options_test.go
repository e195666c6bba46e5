package integration

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestContract_OptionsHaveOneShape checks the options rule (framework doc,
// "API rules of the recipes"; issue 26 item 3) in the library's source:
// every exported type of recipes/ named Option or ending in Option is
// func(*o) error, where o is an unexported struct of the same package, so
// that an option given a bad value can say so and the constructor returns
// its error.
func TestContract_OptionsHaveOneShape(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "recipes"))
	if err != nil {
		t.Fatal(err)
	}
	type pkgTypes struct {
		structs map[string]bool          // unexported struct types
		options map[string]*ast.TypeSpec // exported ...Option types
	}
	pkgs := map[string]*pkgTypes{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
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
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		pt := pkgs[dir]
		if pt == nil {
			pt = &pkgTypes{structs: map[string]bool{}, options: map[string]*ast.TypeSpec{}}
			pkgs[dir] = pt
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				if _, ok := ts.Type.(*ast.StructType); ok && !ts.Name.IsExported() {
					pt.structs[ts.Name.Name] = true
				}
				if ts.Name.IsExported() && strings.HasSuffix(ts.Name.Name, "Option") {
					pt.options[ts.Name.Name] = ts
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read the library's source: %v", err)
	}
	var found []string
	for dir, pt := range pkgs {
		for name, ts := range pt.options {
			full := dir + "." + name
			found = append(found, full)
			if ts.Assign.IsValid() {
				t.Errorf("%s is an alias; want a defined func type", full)
				continue
			}
			ft, ok := ts.Type.(*ast.FuncType)
			if !ok {
				t.Errorf("%s is not a func type", full)
				continue
			}
			if err := optionShape(ft, pt.structs); err != "" {
				t.Errorf("%s is %s: %s; want func(*o) error, o an unexported struct of the package",
					full, "func"+signature(ft), err)
			}
		}
	}
	sort.Strings(found)
	t.Logf("option types: %v", found)
	// Sanity: the walk found the packages' options (mutex.Option,
	// cache.TreeOption, discovery.ProviderOption, ...).
	for _, want := range []string{"mutex.Option", "cache.TreeOption", "discovery.ProviderOption", "persistentnode.TTLOption"} {
		if !slices.Contains(found, want) {
			t.Errorf("did not find %s in %s: wrong directory?", want, root)
		}
	}
}

// optionShape returns why ft is not func(*o) error with o one of structs,
// or "".
func optionShape(ft *ast.FuncType, structs map[string]bool) string {
	if ft.TypeParams != nil {
		return "generic"
	}
	params := ft.Params.List
	if len(params) != 1 || len(params[0].Names) > 1 {
		return "not one parameter"
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return "its parameter is not a pointer"
	}
	id, ok := star.X.(*ast.Ident)
	if !ok || !structs[id.Name] {
		return "its parameter does not point to an unexported struct of the package"
	}
	if ft.Results == nil || len(ft.Results.List) != 1 || len(ft.Results.List[0].Names) > 1 {
		return "not one result"
	}
	if r, ok := ft.Results.List[0].Type.(*ast.Ident); !ok || r.Name != "error" {
		return "its result is not error"
	}
	return ""
}
