package interop

import (
	"crypto/sha256"
	_ "embed"
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

//go:embed java/CuratorHelper.java
var helperSource []byte

// mainClass is the helper's class, in the default package.
const mainClass = "CuratorHelper"

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

var built struct {
	once sync.Once
	tc   toolchain
	err  error
}

// prepared returns the compiled helper, building it on first use. It fails
// the test when ZK_TEST_REQUIRE=1 and Java Curator is missing, and skips it
// otherwise; other build errors fail the test.
func prepared(t testing.TB) toolchain {
	t.Helper()
	built.once.Do(func() { built.tc, built.err = prepare() })
	if errors.Is(built.err, ErrUnavailable) {
		if os.Getenv("ZK_TEST_REQUIRE") == "1" {
			t.Fatalf("%v, and ZK_TEST_REQUIRE=1", built.err)
		}
		t.Skipf("%v (apt-get install -y default-jdk-headless libcurator-recipes-java, or set CURATOR_JAVA_DIR)", built.err)
	}
	if built.err != nil {
		t.Fatalf("interop: build the Curator helper: %v", built.err)
	}
	return built.tc
}

func prepare() (toolchain, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return toolchain{}, fmt.Errorf("%w: no java on PATH", ErrUnavailable)
	}
	javac, err := exec.LookPath("javac")
	if err != nil {
		return toolchain{}, fmt.Errorf("%w: no javac on PATH", ErrUnavailable)
	}
	jars, err := findJars()
	if err != nil {
		return toolchain{}, err
	}
	cp := strings.Join(jars, string(os.PathListSeparator))
	classes, err := compile(javac, cp)
	if err != nil {
		return toolchain{}, err
	}
	return toolchain{
		java:      java,
		classpath: classes + string(os.PathListSeparator) + cp,
		jars:      jars,
	}, nil
}

// findJars locates each jar in CURATOR_JAVA_DIR or /usr/share/java, by its
// unversioned name or else the highest versioned one.
func findJars() ([]string, error) {
	dir := os.Getenv("CURATOR_JAVA_DIR")
	if dir == "" {
		dir = "/usr/share/java"
	}
	var jars, missing []string
	for _, name := range jarNames {
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

// compile builds the helper into os.TempDir()/go-curator-interop-<hash>,
// reusing that directory when an earlier run made it. The build goes to a
// fresh directory that is renamed into place, so concurrent test binaries
// never see a half-built one.
func compile(javac, classpath string) (string, error) {
	sum := sha256.New()
	sum.Write(helperSource)
	sum.Write([]byte{0})
	sum.Write([]byte(classpath))
	sum.Write([]byte{0})
	sum.Write([]byte(javac))
	dir := filepath.Join(os.TempDir(), "go-curator-interop-"+hex.EncodeToString(sum.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, mainClass+".class")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "go-curator-interop-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	src := filepath.Join(tmp, "src", mainClass+".java")
	out := filepath.Join(tmp, "classes")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(src, helperSource, 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command(javac, "-encoding", "UTF-8", "-Xlint:-path", "-cp", classpath, "-d", out, src)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac: %w\n%s", err, msg)
	}
	if err := os.Rename(out, dir); err != nil {
		// Another test binary may have won the race; use its build.
		if _, statErr := os.Stat(filepath.Join(dir, mainClass+".class")); statErr == nil {
			return dir, nil
		}
		return "", err
	}
	return dir, nil
}
