//go:build unix

package zktest

import (
	"archive/zip"
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// failFast bounds how long a start that cannot succeed may take, although
// its ctx would allow two minutes: it must not wait for the ctx.
const failFast = 30 * time.Second

// writeJar writes a jar at path holding an empty file for each name.
func writeJar(t *testing.T, path string, names ...string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := zip.NewWriter(f)
	for _, name := range names {
		if _, err := w.Create(name); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// partialJar writes a jar at path that holds ZooKeeper's real server main
// class, from the local install's zookeeper.jar, and no other class.
func partialJar(t *testing.T, path string) {
	t.Helper()
	r, err := zip.OpenReader(filepath.Join(defaultJarDir, "zookeeper.jar"))
	if err != nil {
		t.Skip(err) // the jars come from ZK_TEST_JARS
	}
	defer r.Close()
	class, err := fs.ReadFile(r, serverMain)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := zip.NewWriter(f)
	cw, err := w.Create(serverMain)
	if err == nil {
		_, err = cw.Write(class)
	}
	if err == nil {
		err = w.Close()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
}

// fakeZooKeeperJars returns a directory whose one jar passes findInstall's
// check for a ZooKeeper install (it holds the server's main class, empty),
// so that a test gets past the jars to Java without a real install.
func fakeZooKeeperJars(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeJar(t, filepath.Join(dir, "zookeeper.jar"), serverMain)
	return dir
}

// noJava makes Java missing for the calling test: JAVA_HOME names a
// directory without bin/java and PATH holds no java. It returns JAVA_HOME.
func noJava(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("JAVA_HOME", home)
	t.Setenv("PATH", t.TempDir())
	return home
}

// needInstall ends the test unless the local ZooKeeper install works, as a
// start would: it skips, or fails when ZK_TEST_REQUIRE=1.
func needInstall(t *testing.T) {
	t.Helper()
	if _, err := findInstall(); err != nil {
		unavailable(t, err)
	}
}

// holdPort listens on a free loopback port until the test ends and returns
// the port.
func holdPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// checkNoLeftovers fails the test unless every recorded process is gone and
// TMPDIR is empty.
func checkNoLeftovers(t *testing.T, started func() []int, tmpEmpty func()) {
	t.Helper()
	checkGone(t, "after the failed start", started())
	tmpEmpty()
}

func TestStartLocal_BadInputFailsClearly(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup prepares the environment and returns the servers to start,
		// their Config, and what the error must say.
		setup func(t *testing.T) (n int, cfg Config, want []string)
		// jvms is how many server processes the start runs.
		jvms int
	}{
		{
			name: "ZK_TEST_JARS is an empty directory",
			setup: func(t *testing.T) (int, Config, []string) {
				dir := t.TempDir()
				t.Setenv("ZK_TEST_JARS", dir)
				return 1, Config{}, []string{"ZK_TEST_JARS=" + dir + " holds no .jar files", "lib/ directory of a ZooKeeper release", "apt-get install zookeeper"}
			},
		},
		{
			name: "ZK_TEST_JARS does not exist",
			setup: func(t *testing.T) (int, Config, []string) {
				dir := filepath.Join(t.TempDir(), "missing")
				t.Setenv("ZK_TEST_JARS", dir)
				return 1, Config{}, []string{"ZK_TEST_JARS=" + dir + " is not a directory", "apt-get install zookeeper"}
			},
		},
		{
			name: "ZK_TEST_JARS holds jars that are not ZooKeeper",
			setup: func(t *testing.T) (int, Config, []string) {
				dir := t.TempDir()
				writeJar(t, filepath.Join(dir, "other.jar"), "META-INF/MANIFEST.MF", "com/example/Other.class")
				if err := os.WriteFile(filepath.Join(dir, "broken.jar"), []byte("not a zip"), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Setenv("ZK_TEST_JARS", dir)
				return 3, Config{}, []string{"none of the 2 jars of ZK_TEST_JARS=" + dir, "org.apache.zookeeper.server.ZooKeeperServerMain", "not a ZooKeeper server", "apt-get install zookeeper"}
			},
		},
		{
			// The JVM starts and finds the main class, but not what it needs.
			name: "ZK_TEST_JARS holds part of ZooKeeper",
			setup: func(t *testing.T) (int, Config, []string) {
				needInstall(t)
				dir := t.TempDir()
				partialJar(t, filepath.Join(dir, "zookeeper-part.jar"))
				t.Setenv("ZK_TEST_JARS", dir)
				return 1, Config{}, []string{"the JVM could not load", "jars of ZK_TEST_JARS=" + dir + " are not a whole ZooKeeper install", "lib/ directory of a ZooKeeper release"}
			},
			jvms: 1,
		},
		{
			name: "JAVA_HOME without bin/java and no java on PATH",
			setup: func(t *testing.T) (int, Config, []string) {
				t.Setenv("ZK_TEST_JARS", fakeZooKeeperJars(t))
				home := noJava(t)
				return 1, Config{}, []string{"no Java", "JAVA_HOME=" + home + " has no bin/java", "set JAVA_HOME to a Java runtime"}
			},
		},
		{
			name: "no JAVA_HOME and no java on PATH",
			setup: func(t *testing.T) (int, Config, []string) {
				t.Setenv("ZK_TEST_JARS", fakeZooKeeperJars(t))
				noJava(t)
				t.Setenv("JAVA_HOME", "")
				return 3, Config{}, []string{"no java on PATH and JAVA_HOME is not set", "apt-get install default-jre-headless", "set JAVA_HOME"}
			},
		},
		{
			name: "clientPort in use",
			setup: func(t *testing.T) (int, Config, []string) {
				needInstall(t)
				port := holdPort(t)
				addr := "127.0.0.1:" + strconv.Itoa(port)
				return 1, Config{ExtraConfig: "clientPort=" + strconv.Itoa(port)},
					[]string{"port " + addr + " is in use by another process", "clientPort in Config.ExtraConfig", "free it or choose another port", "Address already in use"}
			},
			jvms: 1, // a port the Config fixed is not retried
		},
		{
			name: "clientPort for an ensemble",
			setup: func(t *testing.T) (int, Config, []string) {
				return 3, Config{ExtraConfig: "clientPort: 2181"}, []string{"clientPort=2181", "ensemble cannot share a client port"}
			},
		},
		{
			name: "clientPort not a port",
			setup: func(t *testing.T) (int, Config, []string) {
				return 1, Config{ExtraConfig: "# clientPort=1\nclientPort = 70000\n"}, []string{"clientPort=70000 is not a port number"}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpEmpty := isolateTemp(t)
			started := recordStarts(t)
			n, cfg, want := tc.setup(t)
			ctx, cancel := context.WithTimeout(t.Context(), setupTimeout)
			defer cancel()
			began := time.Now()
			c, err := StartLocalWith(ctx, n, cfg)
			took := time.Since(began)
			if err == nil {
				c.Close()
				t.Fatalf("StartLocalWith(%d) started %v", n, c)
			}
			if c != nil {
				t.Errorf("StartLocalWith returned a Cluster with its error: %v", c)
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			if took > failFast {
				t.Errorf("StartLocalWith took %v to fail; want < %v", took.Round(time.Millisecond), failFast)
			}
			if pids := started(); len(pids) != tc.jvms {
				t.Errorf("started %d server processes %v; want %d", len(pids), pids, tc.jvms)
			}
			checkNoLeftovers(t, started, tmpEmpty)
			t.Logf("failed in %v with:\n%v", took.Round(time.Millisecond), err)
		})
	}
}

func TestStartLocal_BoundedByCtx(t *testing.T) {
	needInstall(t)
	for _, tc := range []struct {
		name    string
		timeout time.Duration
	}{
		{"ctx already done", 0},
		{"ctx ends during the start", 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpEmpty := isolateTemp(t)
			started := recordStarts(t)
			ctx, cancel := context.WithTimeout(t.Context(), tc.timeout)
			defer cancel()
			began := time.Now()
			c, err := StartLocal(ctx, 3)
			took := time.Since(began)
			if err == nil {
				c.Close()
				t.Fatalf("StartLocal with a %v ctx started %v", tc.timeout, c)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error does not wrap context.DeadlineExceeded: %v", err)
			}
			// Killing and reaping a starting JVM takes well under a
			// second; the bound allows for a loaded machine.
			if took > tc.timeout+10*time.Second {
				t.Errorf("StartLocal took %v with a %v ctx", took.Round(time.Millisecond), tc.timeout)
			}
			if pids := started(); len(pids) > 3 {
				t.Errorf("started %d server processes, want at most 3", len(pids))
			}
			checkNoLeftovers(t, started, tmpEmpty)
		})
	}
}

func TestHelpers_SkipOrFailWithTheReason(t *testing.T) {
	helpers := []struct {
		name  string
		start func(testing.TB) *Cluster
	}{
		{"Start", Start},
		{"StartEnsemble", StartEnsemble},
		{"StartWith", func(tb testing.TB) *Cluster { return StartWith(tb, Config{}) }},
		{"StartEnsembleWith", func(tb testing.TB) *Cluster { return StartEnsembleWith(tb, Config{}) }},
	}
	for _, h := range helpers {
		for _, require := range []string{"", "1"} {
			t.Run(h.name+"/ZK_TEST_REQUIRE="+require, func(t *testing.T) {
				tmpEmpty := isolateTemp(t)
				started := recordStarts(t)
				t.Setenv("ZK_TEST_CONNECT", "")
				t.Setenv("ZK_TEST_DOCKER", "0")
				t.Setenv("ZK_TEST_REQUIRE", require)
				t.Setenv("ZK_TEST_JARS", fakeZooKeeperJars(t))
				home := noJava(t)

				f := runFake(func(tb testing.TB) { h.start(tb) })
				out := f.output()
				if f.returned {
					t.Fatalf("%s returned without a Java; the test said:\n%s", h.name, out)
				}
				if require == "1" && (!f.failed || f.skipped) {
					t.Errorf("with ZK_TEST_REQUIRE=1: failed %v, skipped %v; want a failure", f.failed, f.skipped)
				}
				if require == "" && (f.failed || !f.skipped) {
					t.Errorf("without ZK_TEST_REQUIRE: failed %v, skipped %v; want a skip", f.failed, f.skipped)
				}
				want := []string{"cannot start ZooKeeper", "JAVA_HOME=" + home + " has no bin/java", "set JAVA_HOME"}
				if require == "" {
					want = append(want, "set ZK_TEST_REQUIRE=1 to fail")
				}
				for _, w := range want {
					if !strings.Contains(out, w) {
						t.Errorf("the test's message does not say %q:\n%s", w, out)
					}
				}
				checkNoLeftovers(t, started, tmpEmpty)
			})
		}
	}

	t.Run("StartWith/port in use", func(t *testing.T) {
		needInstall(t)
		tmpEmpty := isolateTemp(t)
		started := recordStarts(t)
		t.Setenv("ZK_TEST_REQUIRE", "1")
		port := strconv.Itoa(holdPort(t))
		f := runFake(func(tb testing.TB) { StartWith(tb, Config{ExtraConfig: "clientPort=" + port}) })
		out := f.output()
		if f.returned || !f.failed {
			t.Errorf("StartWith on a taken port: returned %v, failed %v; want a failure:\n%s", f.returned, f.failed, out)
		}
		if want := "port 127.0.0.1:" + port + " is in use"; !strings.Contains(out, want) {
			t.Errorf("the test's message does not say %q:\n%s", want, out)
		}
		checkNoLeftovers(t, started, tmpEmpty)
	})

	t.Run("StartEnsembleWith/invalid Config fails without ZK_TEST_REQUIRE", func(t *testing.T) {
		t.Setenv("ZK_TEST_REQUIRE", "")
		f := runFake(func(tb testing.TB) { StartEnsembleWith(tb, Config{ExtraConfig: "clientPort=2181"}) })
		if !f.failed || f.skipped || !strings.Contains(f.output(), "cannot share a client port") {
			t.Errorf("failed %v, skipped %v, said %q; want a failure naming clientPort", f.failed, f.skipped, f.output())
		}
	})
}

func TestDiagnose(t *testing.T) {
	bindLog := `[main] INFO org.apache.zookeeper.server.NIOServerCnxnFactory - binding to port /127.0.0.1:23457
[main] ERROR org.apache.zookeeper.server.ZooKeeperServerMain - Unexpected exception, exiting abnormally
java.net.BindException: Address already in use
	at java.base/sun.nio.ch.Net.bind0(Native Method)`
	for _, tc := range []struct {
		name, log string
		fixed     bool
		want      string // "" for nil
	}{
		{"port the harness chose", bindLog, false, "port 127.0.0.1:23457 is in use by another process (the harness found it free"},
		{"port the Config fixed", bindLog, true, "port 127.0.0.1:9 is in use by another process (clientPort in Config.ExtraConfig)"},
		{"port not named", "java.net.BindException: Address already in use", false, "one of its ports is in use"},
		{"missing class", "Error: Could not find or load main class org.apache.zookeeper.server.ZooKeeperServerMain", false,
			"the JVM could not load org.apache.zookeeper.server.ZooKeeperServerMain, so the jars of /usr/share/java are not a whole ZooKeeper install: apt-get install zookeeper"},
		{"old java", "java.lang.UnsupportedClassVersionError: org/apache/zookeeper/server/ZooKeeperServerMain has been compiled by a more recent version", false,
			"/opt/java/bin/java is too old for the ZooKeeper jars of /usr/share/java: set JAVA_HOME"},
		{"nothing known", "[main] INFO started", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := diagnose(tc.log, "/opt/java/bin/java", defaultJarDir, "127.0.0.1:9", tc.fixed)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("diagnose = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Errorf("diagnose = %v, want %q...", err, tc.want)
			}
		})
	}
}
