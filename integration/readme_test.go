package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The Go blocks of README.md and of docs/*.md are compiled as they stand,
// so that the pages cannot drift from the API (issue 26 item 3, issue 32
// §4). Each ```go block (indented ones in lists too) becomes a package of
// its own, given to the go command through an -overlay (nothing is written
// into the repository), with //line directives so that an error names its
// page and line:
//
//   - A block that parses as Go declarations (a func TestX, a type) is a
//     file by itself: it must stand alone, with nothing but its imports.
//   - Any other block is a list of statements, the body of
//     func() error, beside readmeStubs: the reader's values that the
//     README's prose names (ctx, a client, a retry policy, ...). A
//     variable the block declares at its top level counts as used, as the
//     reader's code after the block would use it.
//   - Imports are added as goimports would: for each name the block uses
//     and does not declare, the standard packages of readmeStdImports,
//     the library's packages by their package names (framework, retry,
//     zktest, mutex, ...), and readmeOtherImports.
//
// A block that is not meant to compile (pseudo-code) must not be marked
// go: use ```text.

// readmeStubs is the file beside every statement block: the names the
// README uses for the reader's own values and work. Keep it small: a
// name belongs here only if the README's prose defines it for every
// block (a block must not use one that its own section leaves undefined).
const readmeStubs = `package readme

import (
	"context"
	"crypto/tls"
	"crypto/x509"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/semaphoremutex"
	"github.com/go-curator/curator/retry"
)

// The caller's values, as "Quick start" makes them.
var (
	ctx    context.Context   // the caller's context
	client *framework.Client // a client, as every recipe takes it
	policy retry.Policy      // a retry policy
	h      *mutex.Hold       // a hold, as Acquire returns it
)

// The values of the reader's own set-up.
var (
	servers  string          // the connect string of your ensemble
	password string          // a digest password
	pool     *x509.CertPool  // the CAs you trust
	cert     tls.Certificate // your client certificate
)

// The reader's own work.
var (
	done       <-chan error       // the guarded work's result
	cancelWork context.CancelFunc // cancels the guarded work
)

func work()                          {}
func export(*semaphoremutex.Hold)    {}
func resize(int32)                   {}
func bill(ctx context.Context) error { return nil }
`

// readmeStdImports are the standard packages a block may use by name.
var readmeStdImports = []string{
	"context", "crypto/tls", "crypto/x509", "encoding/json", "errors", "fmt", "log", "log/slog",
	"net/http", "os", "strings", "sync", "testing", "time",
}

// readmeOtherImports are the packages outside the library a block may use,
// by the name the README gives them.
var readmeOtherImports = map[string]string{
	"zk":          "github.com/go-zookeeper/zk",
	"prometheus":  "github.com/prometheus/client_golang/prometheus",
	"promhttp":    "github.com/prometheus/client_golang/prometheus/promhttp",
	"curatorprom": "github.com/go-curator/curator/contrib/prometheus",
}

// readmeBlock is one ```go block: its first line's number in the README
// and its text, unindented.
type readmeBlock struct {
	file string // README.md or docs/NAME.md, as errors name it
	line int
	text string
}

var fence = regexp.MustCompile("^([ \t]*)```(\\S*)")

// readmeBlocks returns the ```go blocks of file (README.md, or a page of
// docs/), whose text is readme.
func readmeBlocks(t *testing.T, file string, readme []byte) []readmeBlock {
	t.Helper()
	var blocks []readmeBlock
	var cur *readmeBlock
	var indent string
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(readme))
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		m := fence.FindStringSubmatch(l)
		switch {
		case cur == nil && m != nil && m[2] == "go":
			cur, indent, lines = &readmeBlock{file: file, line: n + 1}, m[1], nil
		case cur == nil && m != nil && m[2] != "":
			// another language: skip to its closing fence
			cur, indent, lines = &readmeBlock{file: file, line: -1}, m[1], nil
		case cur != nil && m != nil && m[2] == "":
			if cur.line > 0 {
				cur.text = strings.Join(lines, "\n") + "\n"
				blocks = append(blocks, *cur)
			}
			cur = nil
		case cur != nil:
			lines = append(lines, strings.TrimPrefix(l, indent))
		}
	}
	if cur != nil {
		t.Errorf("%s: the block at line %d has no closing fence", file, cur.line-1)
	}
	return blocks
}

// libraryImports maps the package name of each public package of the
// library (framework, retry, zktest, recipes/...) to its import path.
func libraryImports(t *testing.T, root string) map[string]string {
	t.Helper()
	dirs := []string{"framework", "retry", "zktest"}
	recipes, err := os.ReadDir(filepath.Join(root, "recipes"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range recipes {
		if d.IsDir() {
			dirs = append(dirs, "recipes/"+d.Name())
		}
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(root, d, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			pf, err := parser.ParseFile(fset, f, nil, parser.PackageClauseOnly)
			if err != nil {
				t.Fatal(err)
			}
			out[pf.Name.Name] = "github.com/go-curator/curator/" + d
			break
		}
	}
	return out
}

// readmeFile turns a block into the Go file of its package, and reports
// whether it is a block of statements (which needs readmeStubs).
func readmeFile(b readmeBlock, imports map[string]string) (src string, stmts bool, err error) {
	fset := token.NewFileSet()
	asDecls := "package readme\n//line " + b.file + ":" + fmt.Sprint(b.line) + "\n" + b.text
	f, derr := parser.ParseFile(fset, "block.go", asDecls, 0)
	body := ""
	if derr != nil || len(f.Decls) == 0 {
		stmts = true
		body = "func _() error {\n//line " + b.file + ":" + fmt.Sprint(b.line) + "\n" + b.text
		var serr error
		f, serr = parser.ParseFile(fset, "block.go", "package readme\n"+body+"}\n", 0)
		if serr != nil {
			if derr == nil {
				derr = serr
			}
			return "", false, fmt.Errorf("parses neither as declarations nor as statements: %v", derr)
		}
	}

	var paths []string
	for _, id := range f.Unresolved {
		if p, ok := imports[id.Name]; ok {
			spec := fmt.Sprintf("%q", p)
			if filepath.Base(p) != id.Name {
				spec = id.Name + " " + spec
			}
			if !slices.Contains(paths, spec) {
				paths = append(paths, spec)
			}
		}
	}
	slices.Sort(paths)
	head := "package readme\n\nimport (\n\t" + strings.Join(paths, "\n\t") + "\n)\n\n"
	if len(paths) == 0 {
		head = "package readme\n\n"
	}
	if !stmts {
		return head + "//line " + b.file + ":" + fmt.Sprint(b.line) + "\n" + b.text, false, nil
	}

	// Mark the block's top-level variables as used.
	var used []string
	fn := f.Decls[len(f.Decls)-1].(*ast.FuncDecl)
	for _, st := range fn.Body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, e := range st.Lhs {
					if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
						used = append(used, id.Name)
					}
				}
			}
		case *ast.DeclStmt:
			if gd, ok := st.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				for _, s := range gd.Specs {
					for _, id := range s.(*ast.ValueSpec).Names {
						if id.Name != "_" {
							used = append(used, id.Name)
						}
					}
				}
			}
		}
	}
	slices.Sort(used)
	tail := ""
	for _, u := range slices.Compact(used) {
		tail += "\t_ = " + u + "\n"
	}
	return head + body + tail + "\treturn nil\n}\n", true, nil
}

// docPages returns README.md and the pages of docs/, relative to root.
func docPages(t *testing.T, root string) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, p := range pages {
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// TestReadme_GoBlocksCompile compiles every ```go block of README.md and
// of the pages of docs/.
func TestReadme_GoBlocksCompile(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	if out, err := exec.Command(goCmd, "env", "GOWORK").Output(); err != nil || strings.TrimSpace(string(out)) == "off" || strings.TrimSpace(string(out)) == "" {
		const why = "needs the repository's go.work: README blocks import the library's other modules (zktest, contrib/prometheus)"
		if os.Getenv("ZK_TEST_REQUIRE") == "1" {
			t.Fatal(why + ", and ZK_TEST_REQUIRE=1")
		}
		t.Skip(why)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	pages := docPages(t, root)
	for _, page := range pages {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, readmeBlocks(t, page, text)...)
	}
	if len(blocks) < 10 {
		t.Fatalf("found %d go blocks in %v; the extraction is broken", len(blocks), pages)
	}

	imports := libraryImports(t, root)
	for _, p := range readmeStdImports {
		imports[filepath.Base(p)] = p
	}
	for name, p := range readmeOtherImports {
		imports[name] = p
	}

	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	overlay := map[string]string{}
	write := func(pkgDir, name, src string) {
		f := filepath.Join(tmp, filepath.Base(pkgDir)+"_"+name)
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(here, pkgDir, name)] = f
	}
	var pkgs []string
	for i, b := range blocks {
		src, stmts, err := readmeFile(b, imports)
		if err != nil {
			t.Errorf("%s:%d: %v", b.file, b.line, err)
			continue
		}
		dir := fmt.Sprintf("readme_blocks/b%02d", i)
		write(dir, "block.go", src)
		if stmts {
			write(dir, "stubs.go", readmeStubs)
		}
		pkgs = append(pkgs, "./"+dir)
	}
	js, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ovf := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovf, js, 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(goCmd, append([]string{"build", "-overlay", ovf}, pkgs...)...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Logf("%d go blocks of %v compile", len(pkgs), pages)
		return
	}
	reported := 0
	for _, l := range strings.Split(string(out), "\n") {
		if slices.ContainsFunc(pages, func(p string) bool { return strings.HasPrefix(l, p+":") }) {
			t.Error(l)
			reported++
		}
	}
	if reported == 0 {
		t.Fatalf("go build of the README's blocks failed:\n%s", out)
	}
}
