package integration

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The library's packages stand in layers, and no import runs back up them
// (issue 32 §4):
//
//	leaves       internal/chans, internal/errtext, internal/goid, internal/queue
//	retry        retry
//	framework    framework, framework/internal/...
//	recipe core  internal/recipe, internal/observe, internal/lockcore
//	recipes      recipes/..., and internal packages shared by recipes
//	             (internal/atomiccore, which uses recipes/mutex)
//
// So: a leaf imports only leaves; retry only leaves; the framework and its
// subpackages nothing from recipes/ and, of internal/, only the leaves; the
// recipe core nothing from recipes/.
//
// The leaves are used by the framework and by the recipes alike, so they
// cannot move under framework/internal (Go's internal rule would hide them
// from recipes/ and internal/lockcore). They stay in internal/ and are
// kept leaves instead: they import nothing from the module but each other
// (queue uses goid), so whatever imports them, no import runs back up.

const layerModulePath = "github.com/go-curator/curator"

// leafPackages are the shared leaves, relative to the module.
var leafPackages = []string{"internal/chans", "internal/errtext", "internal/goid", "internal/queue"}

// recipeCore are the packages every recipe builds on, beneath them all.
var recipeCore = []string{"internal/recipe", "internal/observe", "internal/lockcore"}

// layerImports returns, for each package of the library module (the
// root module's directories that hold non-test Go files), the module's
// packages it imports directly, relative to the module. Directories that
// are modules of their own (integration, bench, ...) are left out.
func layerImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		if rel != "." {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
		}
		pkg, err := build.Default.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		var deps []string
		for _, imp := range pkg.Imports {
			if imp == layerModulePath || strings.HasPrefix(imp, layerModulePath+"/") {
				deps = append(deps, strings.TrimPrefix(strings.TrimPrefix(imp, layerModulePath), "/"))
			}
		}
		out[rel] = deps
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// closure returns every module package that pkg imports, directly or not.
func layerClosure(graph map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, d := range graph[p] {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(pkg)
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func layerUnder(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// layerViolations returns the imports, direct or not, of the packages in
// graph that break the layering rules above.
func layerViolations(graph map[string][]string) []string {
	var bad []string
	for pkg := range graph {
		deps := layerClosure(graph, pkg)
		switch {
		case slices.Contains(leafPackages, pkg):
			for _, d := range deps {
				if !slices.Contains(leafPackages, d) {
					bad = append(bad, pkg+" (a leaf) imports "+d)
				}
			}
		case layerUnder(pkg, "retry"):
			for _, d := range deps {
				if !slices.Contains(leafPackages, d) {
					bad = append(bad, pkg+" imports "+d+", above it")
				}
			}
		case layerUnder(pkg, "framework"):
			for _, d := range deps {
				if layerUnder(d, "recipes") || (layerUnder(d, "internal") && !slices.Contains(leafPackages, d)) {
					bad = append(bad, pkg+" imports "+d+", above it")
				}
			}
		case slices.ContainsFunc(recipeCore, func(c string) bool { return layerUnder(pkg, c) }):
			for _, d := range deps {
				if layerUnder(d, "recipes") {
					bad = append(bad, pkg+" imports "+d+", above it")
				}
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// TestLayers_NoImportRunsBackUp checks the layering of the library
// module's packages, through their non-test files.
func TestLayers_NoImportRunsBackUp(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	graph := layerImports(t, root)
	for _, p := range append([]string{"framework", "retry", "internal/lockcore", "recipes/mutex"}, leafPackages...) {
		if _, ok := graph[p]; !ok {
			t.Fatalf("package %s not found under %s: the walk is broken", p, root)
		}
	}
	if !slices.Contains(graph["framework"], "internal/queue") {
		t.Fatalf("framework's imports %v lack internal/queue: the import reading is broken", graph["framework"])
	}
	for _, v := range layerViolations(graph) {
		t.Error(v)
	}
}

// TestLayers_RulesCatchUpwardImports shows that the rules fail on the
// imports they forbid, direct and indirect.
func TestLayers_RulesCatchUpwardImports(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		graph map[string][]string
		want  string
	}{
		{"a leaf imports the framework", map[string][]string{"internal/queue": {"framework"}, "framework": nil}, "internal/queue (a leaf) imports framework"},
		{"the framework imports a recipe through its subpackage", map[string][]string{
			"framework": {"framework/internal/transport"}, "framework/internal/transport": {"recipes/mutex"}, "recipes/mutex": nil,
		}, "framework imports recipes/mutex, above it"},
		{"the framework imports the lock core", map[string][]string{"framework": {"internal/lockcore"}, "internal/lockcore": nil}, "framework imports internal/lockcore, above it"},
		{"retry imports the framework", map[string][]string{"retry": {"framework"}, "framework": nil}, "retry imports framework, above it"},
		{"the recipe core imports a recipe", map[string][]string{"internal/recipe": {"recipes/cache"}, "recipes/cache": nil}, "internal/recipe imports recipes/cache, above it"},
		{"the framework imports a new core package", map[string][]string{"framework": {"internal/atomiccore"}, "internal/atomiccore": nil}, "framework imports internal/atomiccore, above it"},
	}
	for _, c := range cases {
		got := layerViolations(c.graph)
		if !slices.Contains(got, c.want) {
			t.Errorf("%s: violations %q lack %q", c.name, got, c.want)
		}
	}
	ok := map[string][]string{"internal/queue": {"internal/goid"}, "internal/goid": nil, "framework": {"internal/queue", "retry"}, "retry": nil, "recipes/mutex": {"framework", "internal/lockcore"}, "internal/lockcore": {"framework"}}
	if got := layerViolations(ok); len(got) != 0 {
		t.Errorf("the allowed layering reports %q", got)
	}
}
