package retry

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The library module keeps no test-only dependencies (a consumer's module
// graph would list them): these few checks stand in for testify's, with its
// names, so the tests read the same. assert reports and goes on; require
// stops the test.
type checker struct{ stop bool }

var (
	assert  = checker{}
	require = checker{stop: true}
)

func (c checker) fail(t testing.TB, msg []any, format string, args ...any) {
	t.Helper()
	text := fmt.Sprintf(format, args...)
	if len(msg) > 0 {
		if f, ok := msg[0].(string); ok {
			text += ": " + fmt.Sprintf(f, msg[1:]...)
		}
	}
	if c.stop {
		t.Fatal(text)
	}
	t.Error(text)
}

func (c checker) Equal(t testing.TB, want, got any, msg ...any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		c.fail(t, msg, "got %v, want %v", got, want)
	}
}

func (c checker) True(t testing.TB, v bool, msg ...any) {
	t.Helper()
	if !v {
		c.fail(t, msg, "want true")
	}
}

func (c checker) False(t testing.TB, v bool, msg ...any) {
	t.Helper()
	if v {
		c.fail(t, msg, "want false")
	}
}

func (c checker) NoError(t testing.TB, err error, msg ...any) {
	t.Helper()
	if err != nil {
		c.fail(t, msg, "unexpected error: %v", err)
	}
}

func (c checker) ErrorIs(t testing.TB, err, target error, msg ...any) {
	t.Helper()
	if !errors.Is(err, target) {
		c.fail(t, msg, "error %v does not match %v", err, target)
	}
}

func (c checker) Nil(t testing.TB, v any, msg ...any) {
	t.Helper()
	if v != nil && !reflect.ValueOf(v).IsZero() {
		c.fail(t, msg, "got %v, want nil", v)
	}
}

func (c checker) Zero(t testing.TB, v any, msg ...any) {
	t.Helper()
	if v != nil && !reflect.ValueOf(v).IsZero() {
		c.fail(t, msg, "got %v, want the zero value", v)
	}
}

func (c checker) Contains(t testing.TB, s, sub string, msg ...any) {
	t.Helper()
	if !strings.Contains(s, sub) {
		c.fail(t, msg, "%q does not contain %q", s, sub)
	}
}

func (c checker) ElementsMatch(t testing.TB, want, got any, msg ...any) {
	t.Helper()
	w, g := sortedStrings(want), sortedStrings(got)
	if !slices.Equal(w, g) {
		c.fail(t, msg, "elements %v, want %v (any order)", got, want)
	}
}

func sortedStrings(v any) []string {
	rv := reflect.ValueOf(v)
	out := make([]string, rv.Len())
	for i := range out {
		out[i] = fmt.Sprint(rv.Index(i).Interface())
	}
	slices.Sort(out)
	return out
}

func (c checker) NotPanics(t testing.TB, f func(), msg ...any) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			c.fail(t, msg, "panicked: %v", r)
		}
	}()
	f()
}

func number(v any) float64 {
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return float64(rv.Int())
	case rv.CanUint():
		return float64(rv.Uint())
	case rv.CanFloat():
		return rv.Float()
	}
	panic(fmt.Sprintf("not a number: %T", v))
}

func (c checker) Positive(t testing.TB, v any, msg ...any) {
	t.Helper()
	if number(v) <= 0 {
		c.fail(t, msg, "got %v, want > 0", v)
	}
}

func (c checker) GreaterOrEqual(t testing.TB, a, b any, msg ...any) {
	t.Helper()
	if number(a) < number(b) {
		c.fail(t, msg, "got %v, want >= %v", a, b)
	}
}

func (c checker) LessOrEqual(t testing.TB, a, b any, msg ...any) {
	t.Helper()
	if number(a) > number(b) {
		c.fail(t, msg, "got %v, want <= %v", a, b)
	}
}
