package main

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

//go:embed java/CuratorBench.java
var curatorSource []byte

//go:embed kazoo/kazoo_bench.py
var kazooSource []byte

// curatorJars are the jars, in javaDir, that the Curator peer compiles and
// runs against: Debian's libcurator-recipes-java and its dependencies.
var curatorJars = []string{
	"curator-recipes-5.4.0.jar", "curator-framework-5.4.0.jar", "curator-client-5.4.0.jar",
	"zookeeper-3.8.0.jar", "zookeeper-jute-3.8.0.jar", "guava-*.jar",
	"slf4j-api-1.7.32.jar", "slf4j-simple-1.7.32.jar",
}

// javaDir is where Debian installs jars.
const javaDir = "/usr/share/java"

// pythonPath is Debian's python3, which has python3-kazoo.
const pythonPath = "/usr/bin/python3"

// errPeerMissing marks a peer whose toolchain is not installed.
var errPeerMissing = errors.New("peer unavailable")

// peer is one running peer program: it answers "run ..." lines with one
// JSON line each. Runs go one at a time.
type peer struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	dir  string // removed by close

	mu     sync.Mutex
	stderr *tailBuffer
}

// peerAnswer is a peer's JSON answer to one run.
type peerAnswer struct {
	Ready      bool    `json:"ready"`
	Started    bool    `json:"started"`
	Fatal      string  `json:"fatal"`
	Ops        int     `json:"ops"`
	LatUS      []int64 `json:"lat_us"`
	Overlaps   int64   `json:"overlaps"`
	MaxHolders int64   `json:"max_holders"`
	Errors     int64   `json:"errors"`
	FirstError string  `json:"first_error"`
	Attempts   int64   `json:"attempts"`
	TotalOK    int64   `json:"total_ok"`
	Final      *int64  `json:"final"`
	PerClient  []int64 `json:"per_client"`
	SlowestUS  int64   `json:"slowest_us"`
}

// startCurator compiles bench/java/CuratorBench.java with javac into a
// temporary directory and starts it against connect.
func startCurator(ctx context.Context, connect string) (*peer, error) {
	return startJava(ctx, implCurator, "CuratorBench", curatorSource, "-Xmx512m", connect)
}

// startJava compiles source, the Java class class, with javac against
// Curator's jars into a temporary directory, and starts it with the heap
// option heap and the argument connect, as the peer name.
func startJava(ctx context.Context, name, class string, source []byte, heap, connect string) (*peer, error) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		return nil, fmt.Errorf("%w: Curator needs javac (apt-get install -y default-jdk-headless): %v", errPeerMissing, err)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("%w: Curator needs java: %v", errPeerMissing, err)
	}
	var jars []string
	for _, pattern := range curatorJars {
		m, _ := filepath.Glob(filepath.Join(javaDir, pattern))
		if len(m) == 0 {
			return nil, fmt.Errorf("%w: no %s in %s (apt-get install -y libcurator-recipes-java)", errPeerMissing, pattern, javaDir)
		}
		slices.Sort(m)
		jars = append(jars, m[len(m)-1])
	}
	dir, err := os.MkdirTemp("", "go-curator-bench-java-")
	if err != nil {
		return nil, err
	}
	src := filepath.Join(dir, class+".java")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cp := strings.Join(jars, ":")
	out, err := exec.CommandContext(ctx, javac, "-encoding", "UTF-8", "-Xlint:-path", "-cp", cp, "-d", dir, src).CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("javac %s.java: %w\n%s", class, err, out)
	}
	cmd := exec.Command(java, heap,
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=error",
		"-cp", dir+":"+cp, class, connect)
	return startPeer(ctx, name, cmd, dir)
}

// startKazoo writes bench/kazoo/kazoo_bench.py to a temporary directory and
// runs it with Debian's python3 against connect.
func startKazoo(ctx context.Context, connect string) (*peer, error) {
	if _, err := os.Stat(pythonPath); err != nil {
		return nil, fmt.Errorf("%w: Kazoo needs %s: %v", errPeerMissing, pythonPath, err)
	}
	if out, err := exec.CommandContext(ctx, pythonPath, "-c", "import kazoo").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: no kazoo for %s (apt-get install -y python3-kazoo): %v %s", errPeerMissing, pythonPath, err, out)
	}
	dir, err := os.MkdirTemp("", "go-curator-bench-kazoo-")
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "kazoo_bench.py")
	if err := os.WriteFile(script, kazooSource, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.Command(pythonPath, "-u", script, connect)
	return startPeer(ctx, implKazoo, cmd, dir)
}

func startPeer(ctx context.Context, name string, cmd *exec.Cmd, dir string) (*peer, error) {
	p := &peer{name: name, cmd: cmd, dir: dir, stderr: &tailBuffer{max: 4096}}
	cmd.Stderr = p.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p.in, p.out = in, bufio.NewReaderSize(out, 1<<20)
	a, err := p.read(ctx, 2*time.Minute)
	if err == nil && !a.Ready {
		err = fmt.Errorf("%s: unexpected first answer", name)
	}
	if err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// run asks the peer to run one spec and converts its answer.
func (p *peer) run(ctx context.Context, s spec) (*Result, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("run %s %d %d %d %s\n", s.kind, s.clients,
		s.w.warm.Milliseconds(), s.w.dur.Milliseconds(), s.path)
	if _, err := io.WriteString(p.in, line); err != nil {
		return nil, fmt.Errorf("%s: %w%s", p.name, err, p.stderr.tail())
	}
	var a *peerAnswer
	for {
		var err error
		if a, err = p.read(ctx, runTimeout(s.w, s.clients)); err != nil {
			return nil, err
		}
		if !a.Started {
			break
		}
		// The peer's clients are connected and its clock has started.
		if s.onStart != nil {
			t0 := time.Now().Add(s.w.warm)
			s.onStart(t0, t0.Add(s.w.dur))
		}
	}
	if a.Fatal != "" {
		return nil, fmt.Errorf("%s: %s%s", p.name, a.Fatal, p.stderr.tail())
	}
	r := &Result{
		Ops:        a.Ops,
		Seconds:    s.w.dur.Seconds(),
		Overlaps:   a.Overlaps,
		MaxHolders: a.MaxHolders,
		Errors:     a.Errors,
		FirstError: a.FirstError,
		Attempts:   a.Attempts,
		TotalOK:    a.TotalOK,
		Final:      a.Final,
		PerClient:  a.PerClient,
		Slowest:    time.Duration(a.SlowestUS) * time.Microsecond,
	}
	r.Lat = make([]time.Duration, len(a.LatUS))
	for i, us := range a.LatUS {
		r.Lat[i] = time.Duration(us) * time.Microsecond
	}
	slices.Sort(r.Lat)
	return r, nil
}

// read reads one JSON answer, or fails after timeout or when ctx ends.
func (p *peer) read(ctx context.Context, timeout time.Duration) (*peerAnswer, error) {
	type lineErr struct {
		line []byte
		err  error
	}
	ch := make(chan lineErr, 1)
	go func() {
		line, err := p.out.ReadBytes('\n')
		ch <- lineErr{line, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case le := <-ch:
		if le.err != nil {
			return nil, fmt.Errorf("%s exited: %w%s", p.name, le.err, p.stderr.tail())
		}
		var a peerAnswer
		if err := json.Unmarshal(le.line, &a); err != nil {
			return nil, fmt.Errorf("%s: bad answer %.200q: %w", p.name, le.line, err)
		}
		return &a, nil
	case <-t.C:
		p.cmd.Process.Kill()
		return nil, fmt.Errorf("%s: no answer within %v%s", p.name, timeout, p.stderr.tail())
	case <-ctx.Done():
		p.cmd.Process.Kill()
		return nil, fmt.Errorf("%s: %w", p.name, ctx.Err())
	}
}

// close asks the peer to quit, kills it if it does not, and removes its
// directory.
func (p *peer) close() {
	io.WriteString(p.in, "quit\n")
	p.in.Close()
	done := make(chan struct{})
	go func() {
		p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
	os.RemoveAll(p.dir)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// tail formats the kept bytes for the end of an error message.
func (t *tailBuffer) tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.b) == 0 {
		return ""
	}
	return "\n--- stderr ---\n" + strings.TrimSpace(string(t.b))
}
