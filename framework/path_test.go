package framework

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestValidatePath(t *testing.T) {
	valid := []string{
		"/", "/a", "/a/b", "/a/b/c", "/zookeeper", "/a.b", "/.a", "/a..", "/..a", "/a/...", "/a b",
		"/_c_0f8c2b6e-1111-4a5b-8c9d-0123456789ab-lock-0000000001", "/ünï/cödé", "/日本", "/a-b_c:d@e",
	}
	for _, p := range valid {
		if err := ValidatePath(p); err != nil {
			t.Errorf("ValidatePath(%q) = %v, want nil", p, err)
		}
	}

	invalid := []struct{ path, reason string }{
		{"", "empty"},
		{"a", "not absolute"},
		{"a/b", "not absolute"},
		{" /a", "not absolute"},
		{"/a/", "ends with /"},
		{"//", "ends with /"},
		{"//a", "empty segment"},
		{"/a//b", "empty segment"},
		{"/.", "relative segment ."},
		{"/..", "relative segment .."},
		{"/a/./b", "relative segment ."},
		{"/a/../b", "relative segment .."},
		{"/a/.", "relative segment ."},
		{"/a\x00b", "NUL"},
		{"/\x00", "NUL"},
		{"/a\x01b", "U+0001"},
		{"/a\x1fb", "U+001F"},
		{"/a\tb", "U+0009"},
		{"/a\nb", "U+000A"},
		{"/a\x7fb", "U+007F"},
		{"/a\u0085b", "U+0085"},
		{"/a\u009fb", "U+009F"},
		{"/a\ue000b", "U+E000"},
		{"/a\uf8ffb", "U+F8FF"},
		{"/a\ufff0b", "U+FFF0"},
		{"/a\uffffb", "U+FFFF"},
		{"/a\xffb", "UTF-8"},
		{"/a\xc3", "UTF-8"},
	}
	for _, tc := range invalid {
		err := ValidatePath(tc.path)
		if !errors.Is(err, ErrInvalidPath) {
			t.Errorf("ValidatePath(%q) = %v, want ErrInvalidPath", tc.path, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, strconv.Quote(tc.path)) || !strings.Contains(msg, tc.reason) {
			t.Errorf("ValidatePath(%q) = %q, want it to name the path and say %q", tc.path, msg, tc.reason)
		}
	}
}

func TestJoinSplitPath(t *testing.T) {
	for _, tc := range []struct{ path, parent, name string }{
		{"/a", "/", "a"},
		{"/a/b", "/a", "b"},
		{"/a/b/c-0000000001", "/a/b", "c-0000000001"},
		{"/", "/", ""},
	} {
		parent, name := SplitPath(tc.path)
		if parent != tc.parent || name != tc.name {
			t.Errorf("SplitPath(%q) = %q, %q; want %q, %q", tc.path, parent, name, tc.parent, tc.name)
		}
		if tc.name != "" {
			if got := JoinPath(parent, name); got != tc.path {
				t.Errorf("JoinPath(%q, %q) = %q, want %q", parent, name, got, tc.path)
			}
		}
	}
}

func TestFixUnfixPath(t *testing.T) {
	for _, tc := range []struct{ ns, path, server string }{
		{"", "/", "/"},
		{"", "/a/b", "/a/b"},
		{"/shop", "/", "/shop"},
		{"/shop", "/a", "/shop/a"},
		{"/shop", "/a/b", "/shop/a/b"},
		{"/shop", "/shop", "/shop/shop"},
		{"/a/b", "/c", "/a/b/c"},
	} {
		if got := fixPath(tc.ns, tc.path); got != tc.server {
			t.Errorf("fixPath(%q, %q) = %q, want %q", tc.ns, tc.path, got, tc.server)
		}
		if got := unfixPath(tc.ns, tc.server); got != tc.path {
			t.Errorf("unfixPath(%q, %q) = %q, want %q", tc.ns, tc.server, got, tc.path)
		}
	}
	// A server path outside the namespace is returned unchanged, even when
	// the namespace is a prefix of its first segment.
	for _, tc := range []struct{ ns, server string }{
		{"/shop", "/shopping"},
		{"/shop", "/shopping/cart"},
		{"/shop", "/other/shop"},
		{"/a/b", "/a/bc"},
		{"/shop", "/"},
	} {
		if got := unfixPath(tc.ns, tc.server); got != tc.server {
			t.Errorf("unfixPath(%q, %q) = %q, want it unchanged", tc.ns, tc.server, got)
		}
	}
}

func TestIsProtected(t *testing.T) {
	id := uuid.NewString()
	for _, tc := range []struct {
		name      string
		protected bool
		stripped  string
	}{
		{"_c_" + id + "-lock-0000000001", true, "lock-0000000001"},
		{"_c_" + id + "-", false, ""}, // Curator wants a name after the prefix
		{"_c_" + strings.ToUpper(id) + "-x", true, "x"},
		{"_c_" + id + "x", false, ""},                     // no '-' after the UUID
		{"_c_" + id[:35] + "-lock", false, ""},            // short UUID
		{"_c_" + id[:8] + "_" + id[9:] + "-x", false, ""}, // not a UUID
		{"_c_zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz-x", false, ""},
		{"_C_" + id + "-x", false, ""},
		{"c_" + id + "-x", false, ""},
		{"lock-0000000001", false, ""},
		{"_c_", false, ""},
		{"", false, ""},
	} {
		if got := IsProtected(tc.name); got != tc.protected {
			t.Errorf("IsProtected(%q) = %v, want %v", tc.name, got, tc.protected)
		}
		want := tc.name
		if tc.protected {
			want = tc.stripped
		}
		if got := StripProtected(tc.name); got != want {
			t.Errorf("StripProtected(%q) = %q, want %q", tc.name, got, want)
		}
	}
}

func TestNewProtectedPrefix(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		p := NewProtectedPrefix()
		if len(p) != protectedPrefixLen || IsProtected(p) || !IsProtected(p+"lock-") {
			t.Fatalf("NewProtectedPrefix() = %q: want _c_<36-char uuid>-", p)
		}
		if _, err := uuid.Parse(p[3:39]); err != nil {
			t.Fatalf("NewProtectedPrefix() = %q: %v", p, err)
		}
		if seen[p] {
			t.Fatalf("NewProtectedPrefix() repeated %q", p)
		}
		seen[p] = true
	}
}

func TestIsRetryable_UnnamedCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("unknown error: %v", -7), true},
		{fmt.Errorf("framework: get /a: %w", fmt.Errorf("unknown error: %v", -13)), true},
		{fmt.Errorf("x: %w (last: %w)", errors.New("y"), fmt.Errorf("unknown error: %v", -7)), true},
		{fmt.Errorf("unknown error: %v", -2), false},
		{nil, false},
	} {
		if got := IsRetryable(tc.err); got != tc.want {
			t.Errorf("IsRetryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestValidatePath_OutsideBMP(t *testing.T) {
	if err := ValidatePath("/a\U0001F600"); !errors.Is(err, ErrInvalidPath) {
		t.Fatalf("ValidatePath(non-BMP) = %v, want ErrInvalidPath", err)
	}
}
