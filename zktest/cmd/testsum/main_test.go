package main

import (
	"strings"
	"testing"
)

const (
	pkg   = `"Package":"example.com/p"`
	other = `"Package":"example.com/q"`
)

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		ok    bool
		wants []string
	}{{
		name: "all pass",
		in: lines(
			`{"Action":"start",`+pkg+`}`,
			`{"Action":"run",`+pkg+`,"Test":"TestA"}`,
			`{"Action":"output",`+pkg+`,"Test":"TestA","Output":"=== RUN   TestA\n"}`,
			`{"Action":"pass",`+pkg+`,"Test":"TestA","Elapsed":0.1}`,
			`{"Action":"output",`+pkg+`,"Output":"PASS\n"}`,
			`{"Action":"pass",`+pkg+`,"Elapsed":0.2}`,
		),
		ok:    true,
		wants: []string{"ok  \texample.com/p", "1 passed, 0 failed, 0 skipped"},
	}, {
		name: "fail and skip",
		in: lines(
			`{"Action":"run",`+pkg+`,"Test":"TestA"}`,
			`{"Action":"output",`+pkg+`,"Test":"TestA","Output":"    a_test.go:9: boom\n"}`,
			`{"Action":"output",`+pkg+`,"Test":"TestA","Output":"--- FAIL: TestA (0.10s)\n"}`,
			`{"Action":"fail",`+pkg+`,"Test":"TestA","Elapsed":0.1}`,
			`{"Action":"run",`+pkg+`,"Test":"TestB"}`,
			`{"Action":"output",`+pkg+`,"Test":"TestB","Output":"    b_test.go:3: zktest: no ZooKeeper\n"}`,
			`{"Action":"output",`+pkg+`,"Test":"TestB","Output":"--- SKIP: TestB (0.00s)\n"}`,
			`{"Action":"skip",`+pkg+`,"Test":"TestB"}`,
			`{"Action":"output",`+pkg+`,"Output":"FAIL\n"}`,
			`{"Action":"fail",`+pkg+`,"Elapsed":0.3}`,
		),
		wants: []string{
			"--- FAIL: example.com/p TestA", "a_test.go:9: boom",
			"--- SKIP: example.com/p TestB: b_test.go:3: zktest: no ZooKeeper",
			"FAIL\texample.com/p", "0 passed, 1 failed, 1 skipped (1 packages failed, 0 builds failed)",
		},
	}, {
		name: "build failure and a timeout",
		in: lines(
			`{"ImportPath":"example.com/q","Action":"build-output","Output":"q.go:1: syntax error\n"}`,
			`{"ImportPath":"example.com/q","Action":"build-fail"}`,
			`{"Action":"fail",`+other+`,"Elapsed":0}`,
			`{"Action":"run",`+pkg+`,"Test":"TestSlow"}`,
			`{"Action":"output",`+pkg+`,"Test":"TestSlow","Output":"panic: test timed out\n"}`,
			`{"Action":"fail",`+pkg+`,"Elapsed":600}`,
		),
		wants: []string{
			"BUILD FAIL example.com/q", "q.go:1: syntax error",
			"--- UNFINISHED: example.com/p TestSlow", "panic: test timed out",
			"0 passed, 0 failed, 0 skipped (2 packages failed, 1 builds failed)",
		},
	}, {
		name:  "nothing",
		in:    "no json here\n",
		wants: []string{"no json here", "no test events"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			ok := summarize(strings.NewReader(tc.in), &out)
			if ok != tc.ok {
				t.Errorf("summarize = %v, want %v; output:\n%s", ok, tc.ok, out.String())
			}
			for _, want := range tc.wants {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			if strings.Contains(out.String(), "--- FAIL: TestA") {
				t.Errorf("output repeats the test's own FAIL line:\n%s", out.String())
			}
		})
	}
}
