package interop

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The cache helper is a third Java program, java/CacheHelper.java, for
// Curator's CuratorCache and PathChildrenCache. It speaks CuratorHelper's
// protocol and is driven through the same Helper type; only its source
// and main class differ, so it is compiled and started here.

//go:embed java/CacheHelper.java
var cacheSource []byte

// cacheClass is the cache helper's class, in the default package.
const cacheClass = "CacheHelper"

var cacheBuilt struct {
	once sync.Once
	tc   toolchain
	err  error
}

// StartCache starts a cache helper connected to connectString with
// DefaultSessionTimeout; t.Cleanup closes it (its caches, then its
// session). It skips or fails t when Java Curator is missing, as Start
// does.
func StartCache(t testing.TB, connectString string) *Helper {
	t.Helper()
	cacheBuilt.once.Do(func() { cacheBuilt.tc, cacheBuilt.err = prepareCache() })
	if errors.Is(cacheBuilt.err, ErrUnavailable) {
		if os.Getenv("ZK_TEST_REQUIRE") == "1" {
			t.Fatalf("%v, and ZK_TEST_REQUIRE=1", cacheBuilt.err)
		}
		t.Skipf("%v (apt-get install -y default-jdk-headless libcurator-recipes-java, or set CURATOR_JAVA_DIR)", cacheBuilt.err)
	}
	if cacheBuilt.err != nil {
		t.Fatalf("interop: build the cache helper: %v", cacheBuilt.err)
	}
	h, err := launchCache(cacheBuilt.tc, t.Name())
	if err != nil {
		t.Fatalf("interop: start the cache helper: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("interop: close %s: %v", h.name, err)
		}
		if t.Failed() {
			t.Logf("interop: %s stderr (tail):\n%s", h.name, h.Stderr())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if _, err := h.Call(ctx, "connect", connectString, strconv.FormatInt(DefaultSessionTimeout.Milliseconds(), 10)); err != nil {
		t.Fatalf("interop: connect the cache helper to %s: %v\n%s", connectString, err, h.Stderr())
	}
	return h
}

func prepareCache() (toolchain, error) {
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
	classes, err := compileCache(javac, cp)
	if err != nil {
		return toolchain{}, err
	}
	return toolchain{java: java, classpath: classes + string(os.PathListSeparator) + cp, jars: jars}, nil
}

// compileCache builds the cache helper into
// os.TempDir()/go-curator-interop-cache-<hash>, reusing that directory
// when an earlier run made it; the build goes to a fresh directory renamed
// into place, so concurrent test binaries never see a half-built one.
func compileCache(javac, classpath string) (string, error) {
	sum := sha256.New()
	for _, part := range [][]byte{cacheSource, []byte(classpath), []byte(javac)} {
		sum.Write(part)
		sum.Write([]byte{0})
	}
	dir := filepath.Join(os.TempDir(), "go-curator-interop-cache-"+hex.EncodeToString(sum.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, cacheClass+".class")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "go-curator-interop-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	file := filepath.Join(tmp, "src", cacheClass+".java")
	out := filepath.Join(tmp, "classes")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(file, cacheSource, 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command(javac, "-encoding", "UTF-8", "-Xlint:-path", "-cp", classpath, "-d", out, file)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac: %w\n%s", err, msg)
	}
	if err := os.Rename(out, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, cacheClass+".class")); statErr == nil {
			return dir, nil // another test binary won the race
		}
		return "", err
	}
	return dir, nil
}

// launchCache starts a cache helper process, as launch does for
// CuratorHelper.
func launchCache(tc toolchain, testName string) (*Helper, error) {
	helperSeq.Lock()
	helperSeq.n++
	n := helperSeq.n
	helperSeq.Unlock()

	cmd := exec.Command(tc.java,
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=error",
		"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
		"-cp", tc.classpath, cacheClass)
	h := &Helper{
		name:       fmt.Sprintf("java-cache#%d(%s)", n, testName),
		cmd:        cmd,
		slot:       make(chan struct{}, 1),
		replies:    make(chan string),
		readerDone: make(chan struct{}),
		quit:       make(chan struct{}),
	}
	cmd.Stderr = &h.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	h.stdin = stdin
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go h.read(stdout)
	return h, nil
}

// CacheEntry is one node as a Java cache holds it.
type CacheEntry struct {
	Path    string
	Version int32
	Data    []byte
}

// ParseCacheEntries parses the reply of cc.dump and pcc.dump
// ("<path>:<version>:<hex>" words; "-" for no data).
func ParseCacheEntries(words []string) ([]CacheEntry, error) {
	var out []CacheEntry
	for _, w := range words {
		i := strings.LastIndexByte(w, ':')
		j := strings.LastIndexByte(w[:max(i, 0)], ':')
		if i < 0 || j < 0 {
			return nil, fmt.Errorf("interop: bad cache entry %q", w)
		}
		v, err := strconv.ParseInt(w[j+1:i], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("interop: bad version in %q: %w", w, err)
		}
		var data []byte
		if h := w[i+1:]; h != "-" {
			if data, err = hex.DecodeString(h); err != nil {
				return nil, fmt.Errorf("interop: bad data in %q: %w", w, err)
			}
		}
		out = append(out, CacheEntry{Path: w[:j], Version: int32(v), Data: data})
	}
	return out, nil
}

// Hex encodes data for the cache helper's set command.
func Hex(data []byte) string {
	if len(data) == 0 {
		return "-"
	}
	return hex.EncodeToString(data)
}
