package interop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The errors a Helper returns.
var (
	// ErrJava wraps an "ERR ..." reply: Curator threw.
	ErrJava = errors.New("interop: Curator helper replied ERR")
	// ErrExited means the helper process has ended.
	ErrExited = errors.New("interop: Curator helper exited")
	// ErrWedged means an earlier call gave up waiting for its reply, so
	// replies can no longer be matched to calls.
	ErrWedged = errors.New("interop: Curator helper abandoned after a call timed out")
	// ErrBadArg means an argument was empty or held whitespace.
	ErrBadArg = errors.New("interop: bad argument")
)

// DefaultSessionTimeout is the Java client's session timeout.
const DefaultSessionTimeout = 10 * time.Second

// Bounds for starting and ending a helper process.
const (
	connectTimeout = 30 * time.Second
	closeTimeout   = 5 * time.Second
)

// Helper is one running Java helper process: one Curator client, one
// ZooKeeper session. Its methods are safe for concurrent use; calls run one
// at a time.
type Helper struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser

	slot   chan struct{} // holds a token while a call is in flight
	wedged error         // set while holding the slot

	replies    chan string
	readerDone chan struct{} // stdout ended: the process is gone or going
	quit       chan struct{} // closed by Close: stop delivering replies

	mu     sync.Mutex
	events []string
	stderr tail

	closeOnce sync.Once
	closeErr  error
}

// Start starts a helper connected to connectString with
// DefaultSessionTimeout; t.Cleanup closes it. It skips or fails t when Java
// Curator is missing (see the package doc) and fails t when the helper does
// not start or connect.
func Start(t testing.TB, connectString string) *Helper {
	t.Helper()
	return StartSession(t, connectString, DefaultSessionTimeout)
}

// StartSession is Start with a given session timeout.
func StartSession(t testing.TB, connectString string, sessionTimeout time.Duration) *Helper {
	t.Helper()
	return start(t, curatorProgram, connectString, sessionTimeout, false)
}

// start compiles p (on first use), starts it, has t.Cleanup close it, and
// connects it to connectString. It skips or fails t as p.prepared does, and
// fails t when the helper does not start or connect.
func start(t testing.TB, p *program, connectString string, sessionTimeout time.Duration, fullJIT bool) *Helper {
	t.Helper()
	tc := p.prepared(t)
	h, err := launch(tc, p, t.Name(), fullJIT)
	if err != nil {
		t.Fatalf("interop: start the %s: %v", p.what, err)
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
		t.Fatalf("interop: connect the %s to %s: %v\n%s", p.what, connectString, err, h.Stderr())
	}
	return h
}

var helperSeq struct {
	sync.Mutex
	n int
}

// launch starts a process running p's main class. Its JVM stops at C1,
// which starts faster, unless fullJIT.
func launch(tc toolchain, p *program, testName string, fullJIT bool) (*Helper, error) {
	helperSeq.Lock()
	helperSeq.n++
	n := helperSeq.n
	helperSeq.Unlock()

	args := []string{"-Dorg.slf4j.simpleLogger.defaultLogLevel=error", "-XX:+UseSerialGC", "-Xshare:auto"}
	if !fullJIT {
		args = append(args, "-XX:TieredStopAtLevel=1")
	}
	cmd := exec.Command(tc.java, append(args, "-cp", tc.classpath, p.class)...)
	prefix := "java"
	if p.kind != "" {
		prefix += "-" + p.kind
	}
	h := &Helper{
		name:       fmt.Sprintf("%s#%d(%s)", prefix, n, testName),
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

// read routes stdout lines: EVENT lines to the event log, others to the
// waiting call.
func (h *Helper) read(stdout io.Reader) {
	defer close(h.readerDone)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "EVENT ") {
			h.mu.Lock()
			h.events = append(h.events, strings.TrimPrefix(line, "EVENT "))
			h.mu.Unlock()
			continue
		}
		select {
		case h.replies <- line:
		case <-h.quit:
			// Nobody will read replies any more; drain to EOF.
		}
	}
}

// String names the helper in messages.
func (h *Helper) String() string { return h.name }

// Call sends one command (its words joined by spaces) and returns the text
// after "OK". An "ERR" reply returns an error wrapping ErrJava. When ctx
// ends before the reply, the helper is abandoned: this and every later call
// return ErrWedged, and Close kills the process. Calls run one at a time; a
// call that cannot start before ctx ends returns ctx's error.
func (h *Helper) Call(ctx context.Context, words ...string) (string, error) {
	if len(words) == 0 {
		return "", fmt.Errorf("%w: no command", ErrBadArg)
	}
	for _, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\r\n") {
			return "", fmt.Errorf("%w %q in %q", ErrBadArg, w, words)
		}
	}
	line := strings.Join(words, " ")
	select {
	case h.slot <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("interop: %q: waiting for the call in flight: %w", line, ctx.Err())
	}
	defer func() { <-h.slot }()
	if h.wedged != nil {
		return "", h.wedged
	}
	select {
	case <-h.readerDone:
		return "", fmt.Errorf("%w before %q", ErrExited, line)
	default:
	}
	if _, err := io.WriteString(h.stdin, line+"\n"); err != nil {
		return "", fmt.Errorf("%w: send %q: %v", ErrExited, line, err)
	}
	select {
	case reply := <-h.replies:
		switch {
		case reply == "OK":
			return "", nil
		case strings.HasPrefix(reply, "OK "):
			return reply[3:], nil
		case strings.HasPrefix(reply, "ERR "):
			return "", fmt.Errorf("%w: %s: %s", ErrJava, line, reply[4:])
		default:
			h.wedged = fmt.Errorf("%w: unexpected reply %q to %q", ErrWedged, reply, line)
			return "", h.wedged
		}
	case <-h.readerDone:
		return "", fmt.Errorf("%w during %q", ErrExited, line)
	case <-ctx.Done():
		h.wedged = fmt.Errorf("%w: %q: %w", ErrWedged, line, ctx.Err())
		return "", h.wedged
	}
}

// Bool runs a command whose reply starts with true or false.
func (h *Helper) Bool(ctx context.Context, words ...string) (bool, error) {
	out, err := h.Call(ctx, words...)
	if err != nil {
		return false, err
	}
	first, _, _ := strings.Cut(out, " ")
	switch first {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("interop: %q: want true or false, got %q", words, out)
}

// Fields runs a command and splits its reply into words.
func (h *Helper) Fields(ctx context.Context, words ...string) ([]string, error) {
	out, err := h.Call(ctx, words...)
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// Events returns the EVENT lines received so far, without "EVENT ".
func (h *Helper) Events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.events...)
}

// Stderr returns the tail of the helper's stderr.
func (h *Helper) Stderr() string { return h.stderr.String() }

// Close closes the Curator client (ending its session, so its ephemeral
// nodes go at once) and waits for the process to exit, killing it after a
// bound. A call still in flight ends with ErrExited. Close is idempotent.
func (h *Helper) Close() error {
	h.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		_, callErr := h.Call(ctx, "close")
		cancel()
		close(h.quit)
		h.stdin.Close() // the helper exits 2 s after end of input
		killed := false
		select {
		case <-h.readerDone:
		case <-time.After(closeTimeout):
			killed = true
			h.cmd.Process.Kill()
			<-h.readerDone
		}
		waitErr := h.cmd.Wait()
		if killed || callErr != nil && !errors.Is(callErr, ErrJava) {
			return // the test already saw what went wrong
		}
		h.closeErr = errors.Join(callErr, waitErr)
	})
	return h.closeErr
}

// tail keeps the last 16 KiB written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 16 * 1024

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > tailMax {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-tailMax:]...)
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

// CuratorVersion returns the helper's curator-recipes version, such as
// "5.4.0".
func (h *Helper) CuratorVersion(ctx context.Context) (string, error) {
	return h.Call(ctx, "version")
}

// VersionAtLeast reports whether a dotted version such as "5.4.0" is at
// least major.minor. An unparsable version reports false.
func VersionAtLeast(version string, major, minor int) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	maj, err1 := strconv.Atoi(parts[0])
	mnr, err2 := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return maj > major || maj == major && mnr >= minor
}
