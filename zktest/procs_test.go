//go:build unix

package zktest

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// recordStarts records the pid of every server process the package starts
// until the calling test ends, and returns a function that lists them. The
// calling test must not be parallel.
func recordStarts(t *testing.T) func() []int {
	t.Helper()
	var mu sync.Mutex
	var pids []int
	hook := func(pid int) {
		mu.Lock()
		pids = append(pids, pid)
		mu.Unlock()
	}
	if !startHook.CompareAndSwap(nil, &hook) {
		t.Fatal("another test records server starts")
	}
	t.Cleanup(func() { startHook.Store(nil) })
	return func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), pids...)
	}
}

// processGone reports whether no process, not even a zombie, has pid:
// kill(pid, 0) finds a zombie until its parent reaps it.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// processState describes pid for a failure message: its state line from
// /proc on Linux ("Z (zombie)" for an unreaped one).
func processState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "alive"
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "State:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "alive"
}

// checkGone fails the test for every pid that still has a process.
func checkGone(t *testing.T, what string, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if !processGone(pid) {
			t.Errorf("%s: process %d is still there (%s)", what, pid, processState(pid))
		}
	}
}

// isolateTemp points TMPDIR, where clusters make their directories, at an
// empty directory of the calling test, and returns a function that fails
// the test for anything left in it.
func isolateTemp(t *testing.T) (checkEmpty func()) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return func() {
		t.Helper()
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			t.Errorf("left behind in TMPDIR: %s", e.Name())
		}
	}
}

// fakeTB is a testing.TB for checking how the package's helpers end a
// test. Fatal and Skip end the calling goroutine, as in package testing.
// Methods it does not define panic: the embedded TB is nil.
type fakeTB struct {
	testing.TB

	mu       sync.Mutex
	failed   bool
	skipped  bool
	returned bool // the body ran to its end
	msgs     []string
	cleanups []func()
}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Name() string { return "fakeTB" }

func (f *fakeTB) note(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, msg)
}

func (f *fakeTB) Log(args ...any)                 { f.note(fmt.Sprint(args...)) }
func (f *fakeTB) Logf(format string, args ...any) { f.note(fmt.Sprintf(format, args...)) }
func (f *fakeTB) Error(args ...any)               { f.note(fmt.Sprint(args...)); f.Fail() }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.note(fmt.Sprintf(format, args...))
	f.Fail()
}
func (f *fakeTB) Fatal(args ...any) { f.note(fmt.Sprint(args...)); f.FailNow() }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.note(fmt.Sprintf(format, args...))
	f.FailNow()
}
func (f *fakeTB) Skip(args ...any) { f.note(fmt.Sprint(args...)); f.SkipNow() }
func (f *fakeTB) Skipf(format string, args ...any) {
	f.note(fmt.Sprintf(format, args...))
	f.SkipNow()
}

func (f *fakeTB) Fail() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = true
}

func (f *fakeTB) FailNow() { f.Fail(); runtime.Goexit() }

func (f *fakeTB) SkipNow() {
	f.mu.Lock()
	f.skipped = true
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

func (f *fakeTB) Skipped() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.skipped
}

func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// output is everything the test logged, one message a line.
func (f *fakeTB) output() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.msgs, "\n")
}

// runFake runs body as a test on a fakeTB, in its own goroutine, then its
// cleanups, last first, and returns the fakeTB.
func runFake(body func(testing.TB)) *fakeTB {
	f := &fakeTB{}
	run := func(fn func()) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			fn()
		}()
		<-done
	}
	run(func() {
		body(f)
		f.mu.Lock()
		f.returned = true
		f.mu.Unlock()
	})
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		run(f.cleanups[i])
	}
	return f
}
