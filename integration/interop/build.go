package interop

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The Java sources: one helper per main class, each compiled with
// LineProtocol.java, the protocol loop and process setup they share.
//
//go:embed java/*.java
var javaSources embed.FS

// program is one Java helper: the main class it runs, in the default
// package, compiled from its own source and LineProtocol.java on first use.
type program struct {
	class string // main class; its source is java/<class>.java
	kind  string // in process names, "java-<kind>#n"; "" for "java#n"
	what  string // in messages: "the <what>"

	jars []string // jars it needs beyond jarNames, by Debian name

	once sync.Once
	tc   toolchain
	err  error
}

// The helpers.
var (
	curatorProgram = &program{class: "CuratorHelper", what: "Curator helper"}
	cacheProgram   = &program{class: "CacheHelper", kind: "cache", what: "cache helper"}
	leaderProgram  = &program{class: "LeaderHelper", kind: "leader", what: "leader helper"}
)

// sources are the files p compiles: its own and the shared protocol.
func (p *program) sources() []string {
	return []string{p.class + ".java", "LineProtocol.java"}
}

// jarNames are the jars the helper compiles and runs against, by their
// Debian names without version.
var jarNames = []string{
	"curator-recipes", "curator-framework", "curator-client",
	"zookeeper", "zookeeper-jute", "guava", "slf4j-api", "slf4j-simple",
}

// ErrUnavailable means that Java or Curator's jars are missing.
var ErrUnavailable = errors.New("interop: Java Curator unavailable")

// toolchain is what a helper process is started with.
type toolchain struct {
	java      string
	classpath string // compiled classes first, then the jars
	jars      []string
}

// prepared returns p compiled, building it on first use. It fails the test
// when ZK_TEST_REQUIRE=1 and Java Curator is missing, and skips it
// otherwise; other build errors fail the test.
func (p *program) prepared(t testing.TB) toolchain {
	t.Helper()
	p.once.Do(func() { p.tc, p.err = prepare(p.sources(), p.jars...) })
	if errors.Is(p.err, ErrUnavailable) {
		if os.Getenv("ZK_TEST_REQUIRE") == "1" {
			t.Fatalf("%v, and ZK_TEST_REQUIRE=1", p.err)
		}
		t.Skipf("%v (apt-get install -y default-jdk-headless libcurator-recipes-java, or set CURATOR_JAVA_DIR)", p.err)
	}
	if p.err != nil {
		t.Fatalf("interop: build the %s: %v", p.what, p.err)
	}
	return p.tc
}

// prepare finds java, javac and Curator's jars (and the extra ones), and
// compiles the named files of java/.
func prepare(files []string, extra ...string) (toolchain, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return toolchain{}, fmt.Errorf("%w: no java on PATH", ErrUnavailable)
	}
	javac, err := exec.LookPath("javac")
	if err != nil {
		return toolchain{}, fmt.Errorf("%w: no javac on PATH", ErrUnavailable)
	}
	jars, err := findJars(extra...)
	if err != nil {
		return toolchain{}, err
	}
	cp := strings.Join(jars, string(os.PathListSeparator))
	classes, err := compile(javac, cp, files)
	if err != nil {
		return toolchain{}, err
	}
	return toolchain{
		java:      java,
		classpath: classes + string(os.PathListSeparator) + cp,
		jars:      jars,
	}, nil
}

// findJars locates each jar of jarNames and extra in CURATOR_JAVA_DIR or
// /usr/share/java, by its unversioned name or else the highest versioned
// one.
func findJars(extra ...string) ([]string, error) {
	dir := os.Getenv("CURATOR_JAVA_DIR")
	if dir == "" {
		dir = "/usr/share/java"
	}
	var jars, missing []string
	for _, name := range append(append([]string(nil), jarNames...), extra...) {
		p := filepath.Join(dir, name+".jar")
		if _, err := os.Stat(p); err != nil {
			versioned, _ := filepath.Glob(filepath.Join(dir, name+"-[0-9]*.jar"))
			if len(versioned) == 0 {
				missing = append(missing, name)
				continue
			}
			sort.Strings(versioned)
			p = versioned[len(versioned)-1]
		}
		jars = append(jars, p)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: no %s jar in %s", ErrUnavailable, strings.Join(missing, ", "), dir)
	}
	return jars, nil
}

// compile builds the named files of java/ into
// os.TempDir()/go-curator-interop-<hash>, reusing that directory when an
// earlier run made it. The build goes to a fresh directory that is renamed
// into place, so concurrent test binaries never see a half-built one.
func compile(javac, classpath string, files []string) (string, error) {
	sum := sha256.New()
	srcs := make([][]byte, len(files))
	for i, name := range files {
		src, err := javaSources.ReadFile("java/" + name)
		if err != nil {
			return "", err
		}
		srcs[i] = src
		for _, part := range [][]byte{[]byte(name), src} {
			sum.Write(part)
			sum.Write([]byte{0})
		}
	}
	sum.Write([]byte(classpath))
	sum.Write([]byte{0})
	sum.Write([]byte(javac))
	dir := filepath.Join(os.TempDir(), "go-curator-interop-"+hex.EncodeToString(sum.Sum(nil))[:16])
	// The first file's class marks a finished build (the rename below is
	// atomic, so it stands for them all).
	done := filepath.Join(dir, strings.TrimSuffix(files[0], ".java")+".class")
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "go-curator-interop-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	out := filepath.Join(tmp, "classes")
	if err := os.MkdirAll(filepath.Join(tmp, "src"), 0o755); err != nil {
		return "", err
	}
	args := []string{"-encoding", "UTF-8", "-Xlint:-path", "-cp", classpath, "-d", out}
	for i, name := range files {
		file := filepath.Join(tmp, "src", name)
		if err := os.WriteFile(file, srcs[i], 0o644); err != nil {
			return "", err
		}
		args = append(args, file)
	}
	cmd := exec.Command(javac, args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac: %w\n%s", err, msg)
	}
	if err := os.Rename(out, dir); err != nil {
		// Another test binary may have won the race; use its build.
		if _, statErr := os.Stat(done); statErr == nil {
			return dir, nil
		}
		return "", err
	}
	return dir, nil
}
