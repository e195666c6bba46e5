// Command testsum summarizes `go test -json` output read from stdin.
//
// It prints each package's ok/FAIL line, the output of every failed test and
// of every failed package or build, one line per skipped test with its
// reason, and finally "N passed, N failed, N skipped". It exits with status 1
// if any test, package or build failed, or if it saw no test event at all.
//
//	go test -json ./... | go run ./zktest/cmd/testsum
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (see `go doc test2json`).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events
	Test       string
	Elapsed    float64
	Output     string
}

// summary accumulates the results of a run.
type summary struct {
	w                       io.Writer
	passed, failed, skipped int
	pkgFailed, buildFailed  int
	events                  int
	output                  map[string][]string // by package and test; test "" is the package
	build                   map[string][]string // build output by import path
	running                 map[string]bool     // tests started and not finished
	skips                   []string
}

func main() {
	if !summarize(os.Stdin, os.Stdout) {
		os.Exit(1)
	}
}

// summarize reads go test -json from r, reports to w, and says whether the
// run succeeded.
func summarize(r io.Reader, w io.Writer) bool {
	s := &summary{
		w:       w,
		output:  map[string][]string{},
		build:   map[string][]string{},
		running: map[string]bool{},
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		var e event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
			fmt.Fprintln(w, line) // not from test2json: pass it on
			continue
		}
		s.events++
		s.add(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(w, "testsum: read: %v\n", err)
		return false
	}
	for _, skip := range s.skips {
		fmt.Fprintln(w, skip)
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped", s.passed, s.failed, s.skipped)
	if s.pkgFailed > 0 || s.buildFailed > 0 {
		fmt.Fprintf(w, " (%d packages failed, %d builds failed)", s.pkgFailed, s.buildFailed)
	}
	fmt.Fprintln(w)
	if s.events == 0 {
		fmt.Fprintln(w, "testsum: no test events on stdin")
		return false
	}
	return s.failed == 0 && s.pkgFailed == 0 && s.buildFailed == 0
}

func (s *summary) add(e event) {
	key := e.Package + " " + e.Test
	switch e.Action {
	case "build-output":
		s.build[e.ImportPath] = append(s.build[e.ImportPath], e.Output)
	case "build-fail":
		s.buildFailed++
		fmt.Fprintf(s.w, "BUILD FAIL %s\n%s", e.ImportPath, strings.Join(s.build[e.ImportPath], ""))
	case "run":
		s.running[key] = true
	case "output":
		s.output[key] = append(s.output[key], e.Output)
	case "pass", "fail", "skip":
		delete(s.running, key)
		if e.Test == "" {
			s.endPackage(e)
		} else {
			s.endTest(e, key)
		}
		delete(s.output, key)
	}
}

func (s *summary) endTest(e event, key string) {
	switch e.Action {
	case "pass":
		s.passed++
	case "fail":
		s.failed++
		fmt.Fprintf(s.w, "--- FAIL: %s %s (%.2fs)\n", e.Package, e.Test, e.Elapsed)
		for _, l := range s.output[key] {
			// Drop test2json's framing and the test's own FAIL line, which
			// the line above replaces.
			if !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(l, "--- FAIL: "+e.Test+" ") {
				fmt.Fprint(s.w, l)
			}
		}
	case "skip":
		s.skipped++
		s.skips = append(s.skips, fmt.Sprintf("--- SKIP: %s %s: %s", e.Package, e.Test, reason(s.output[key])))
	}
}

func (s *summary) endPackage(e event) {
	switch e.Action {
	case "pass":
		fmt.Fprintf(s.w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
	case "skip":
		fmt.Fprintf(s.w, "?   \t%s\t[no test files]\n", e.Package)
	case "fail":
		s.pkgFailed++
		// A panic or timeout kills the binary while tests run: show them.
		var unfinished []string
		for key := range s.running {
			if strings.HasPrefix(key, e.Package+" ") {
				unfinished = append(unfinished, key)
			}
		}
		sort.Strings(unfinished)
		for _, key := range unfinished {
			fmt.Fprintf(s.w, "--- UNFINISHED: %s\n%s", key, testOutput(s.output[key]))
			delete(s.running, key)
		}
		for _, l := range s.output[e.Package+" "] {
			if l != "FAIL\n" && !strings.HasPrefix(l, "FAIL\t"+e.Package) {
				fmt.Fprint(s.w, l)
			}
		}
		fmt.Fprintf(s.w, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
	}
}

// testOutput joins a test's output without the === RUN/PAUSE/CONT framing.
func testOutput(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		if strings.HasPrefix(l, "=== ") {
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// reason returns a skipped test's log on one line, without the framing.
func reason(lines []string) string {
	var parts []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(l, "--- SKIP") {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " | ")
}
