package goid

import (
	"runtime"
	"strconv"
	"sync"
	"testing"
)

func TestGet_DiffersAcrossGoroutinesAndIsStable(t *testing.T) {
	main := Get()
	if main <= 0 || Get() != main {
		t.Fatalf("Get() = %d, then %d: want a stable positive ID", main, Get())
	}
	ids := make([]int64, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() { defer wg.Done(); ids[i] = Get() }()
	}
	wg.Wait()
	seen := map[int64]bool{main: true}
	for _, id := range ids {
		if id <= 0 || seen[id] {
			t.Fatalf("goroutine IDs %v (main %d): want distinct positive IDs", ids, main)
		}
		seen[id] = true
	}
}

// TestGet_MatchesStack checks the fast way against the stack trace's
// header on many goroutines, before and after each one's stack has grown,
// and on goroutines whose records the runtime reuses.
func TestGet_MatchesStack(t *testing.T) {
	t.Logf("offset of the ID in the goroutine record: %d (-1: the portable way)", offset())
	if haveG && offset() < 0 {
		t.Errorf("the ID's offset was not found on %s/%s with %s", runtime.GOOS, runtime.GOARCH, runtime.Version())
	}
	check := func() {
		want := fromStack()
		if got := Get(); got != want || want <= 0 {
			t.Errorf("Get() = %d, the stack trace says %d", got, want)
		}
	}
	for range 20 { // sequential: records are put back and reused
		var wg sync.WaitGroup
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				check()
				growStack(40)
				check()
				runtime.Gosched()
				check()
			}()
		}
		wg.Wait()
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"goroutine 1 [running]:\nmain.main()", 1},
		{"goroutine 18 [running]:", 18},
		{"goroutine 9223372036854775807 [", 1<<63 - 1},
		{"goroutine 9223372036854775808 [", -1}, // overflows int64
		{"goroutine 99999999999999999999 [", -1},
		{"goroutine 42 gp=0xc000002380 m=0 mp=0x5ee580 [running]:", 42},
		{"goroutine 42", -1},    // cut short: no space after the ID
		{"goroutine  42 [", -1}, // no ID before the space
		{"goroutine x [", -1},
		{"goroutine 4x2 [", -1},
		{"goroutine -1 [", -1},
		{"goroutine ", -1},
		{"Goroutine 1 [", -1},
		{"", -1},
	} {
		if got := parse([]byte(tc.in)); got != tc.want {
			t.Errorf("parse(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// FuzzParse checks parse against strconv on any input: it returns the
// ID strconv reads from a well-formed header, and -1 for anything else.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"goroutine 1 [running]:", "goroutine 18 [", "goroutine 9223372036854775808 [", "goroutine x", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := parse(b)
		want := int64(-1)
		s := string(b)
		if len(s) > len(prefix) && s[:len(prefix)] == prefix {
			rest := s[len(prefix):]
			if i := indexByte(rest, ' '); i > 0 {
				digits := rest[:i]
				if n, err := strconv.ParseInt(digits, 10, 64); err == nil && digits[0] != '+' && digits[0] != '-' {
					want = n
				}
			}
		}
		if got != want {
			t.Fatalf("parse(%q) = %d, want %d", b, got, want)
		}
	})
}

func indexByte(s string, c byte) int {
	for i := range len(s) {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func BenchmarkGet(b *testing.B) {
	for b.Loop() {
		Get()
	}
}

// BenchmarkFromStack is the portable way (and Get with -tags goid_stack).
func BenchmarkFromStack(b *testing.B) {
	for b.Loop() {
		fromStack()
	}
}

// atDepth calls f under about n more frames, as a lock acquired deep in a
// service's call stack is: the traceback runtime.Stack walks grows with it.
//
//go:noinline
func atDepth(n int, f func()) {
	if n == 0 {
		f()
		return
	}
	atDepth(n-1, f)
}

func BenchmarkGetDepth32(b *testing.B) {
	atDepth(32, func() {
		for b.Loop() {
			Get()
		}
	})
}

func BenchmarkFromStackDepth32(b *testing.B) {
	atDepth(32, func() {
		for b.Loop() {
			fromStack()
		}
	})
}
