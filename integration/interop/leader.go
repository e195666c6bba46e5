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
	"time"
)

// The leader helper is a second Java program, java/LeaderHelper.java, for
// Curator's LeaderLatch and LeaderSelector. It speaks the same protocol
// as CuratorHelper and is driven through the same Helper type; only its
// source and main class differ, so it is compiled and started here.

//go:embed java/LeaderHelper.java
var leaderSource []byte

// leaderClass is the leader helper's class, in the default package.
const leaderClass = "LeaderHelper"

var leaderBuilt struct {
	once sync.Once
	tc   toolchain
	err  error
}

// StartLeader starts a leader helper connected to connectString with
// DefaultSessionTimeout; t.Cleanup closes it (closing its latches and
// selectors, then its session). It skips or fails t when Java Curator is
// missing, as Start does.
func StartLeader(t testing.TB, connectString string) *Helper {
	t.Helper()
	return StartLeaderSession(t, connectString, DefaultSessionTimeout)
}

// StartLeaderSession is StartLeader with a given session timeout.
func StartLeaderSession(t testing.TB, connectString string, sessionTimeout time.Duration) *Helper {
	t.Helper()
	return StartLeaderWith(t, connectString, LeaderOptions{SessionTimeout: sessionTimeout})
}

// LeaderOptions configure a leader helper.
type LeaderOptions struct {
	// SessionTimeout is the Curator client's; 0 means DefaultSessionTimeout.
	SessionTimeout time.Duration
	// FullJIT runs the JVM with its default compilers, for measurements;
	// otherwise it stops at C1, which starts faster, as for every helper.
	FullJIT bool
}

// StartLeaderWith is StartLeader with options.
func StartLeaderWith(t testing.TB, connectString string, opts LeaderOptions) *Helper {
	t.Helper()
	sessionTimeout := opts.SessionTimeout
	if sessionTimeout <= 0 {
		sessionTimeout = DefaultSessionTimeout
	}
	leaderBuilt.once.Do(func() { leaderBuilt.tc, leaderBuilt.err = prepareLeader() })
	if errors.Is(leaderBuilt.err, ErrUnavailable) {
		if os.Getenv("ZK_TEST_REQUIRE") == "1" {
			t.Fatalf("%v, and ZK_TEST_REQUIRE=1", leaderBuilt.err)
		}
		t.Skipf("%v (apt-get install -y default-jdk-headless libcurator-recipes-java, or set CURATOR_JAVA_DIR)", leaderBuilt.err)
	}
	if leaderBuilt.err != nil {
		t.Fatalf("interop: build the leader helper: %v", leaderBuilt.err)
	}
	h, err := launchClass(leaderBuilt.tc, leaderClass, "leader", t.Name(), opts.FullJIT)
	if err != nil {
		t.Fatalf("interop: start the leader helper: %v", err)
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
	if _, err := h.Call(ctx, "connect", connectString, strconv.FormatInt(sessionTimeout.Milliseconds(), 10)); err != nil {
		t.Fatalf("interop: connect the leader helper to %s: %v\n%s", connectString, err, h.Stderr())
	}
	return h
}

func prepareLeader() (toolchain, error) {
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
	classes, err := compileClass(javac, cp, leaderClass, leaderSource)
	if err != nil {
		return toolchain{}, err
	}
	return toolchain{java: java, classpath: classes + string(os.PathListSeparator) + cp, jars: jars}, nil
}

// compileClass builds src, the source of class, into
// os.TempDir()/go-curator-interop-<hash>, reusing that directory when an
// earlier run made it; the build goes to a fresh directory that is renamed
// into place, so concurrent test binaries never see a half-built one.
func compileClass(javac, classpath, class string, src []byte) (string, error) {
	sum := sha256.New()
	for _, part := range [][]byte{src, []byte(classpath), []byte(javac)} {
		sum.Write(part)
		sum.Write([]byte{0})
	}
	dir := filepath.Join(os.TempDir(), "go-curator-interop-"+hex.EncodeToString(sum.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, class+".class")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "go-curator-interop-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	file := filepath.Join(tmp, "src", class+".java")
	out := filepath.Join(tmp, "classes")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(file, src, 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command(javac, "-encoding", "UTF-8", "-Xlint:-path", "-cp", classpath, "-d", out, file)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac: %w\n%s", err, msg)
	}
	if err := os.Rename(out, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, class+".class")); statErr == nil {
			return dir, nil // another test binary won the race
		}
		return "", err
	}
	return dir, nil
}

// launchClass starts a helper process running class, as launch does for
// CuratorHelper (whose JVM stops at C1 unless fullJIT).
func launchClass(tc toolchain, class, kind, testName string, fullJIT bool) (*Helper, error) {
	helperSeq.Lock()
	helperSeq.n++
	n := helperSeq.n
	helperSeq.Unlock()

	args := []string{"-Dorg.slf4j.simpleLogger.defaultLogLevel=error", "-XX:+UseSerialGC", "-Xshare:auto"}
	if !fullJIT {
		args = append(args, "-XX:TieredStopAtLevel=1")
	}
	cmd := exec.Command(tc.java, append(args, "-cp", tc.classpath, class)...)
	h := &Helper{
		name:       fmt.Sprintf("java-%s#%d(%s)", kind, n, testName),
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
