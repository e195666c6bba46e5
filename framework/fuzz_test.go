package framework

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzValidatePath checks that ValidatePath never panics, that every path
// it accepts is one ZooKeeper accepts (absolute, no empty, "." or ".."
// segment, no trailing "/", valid UTF-8 without the characters the server
// rejects), and that accepted paths survive SplitPath/JoinPath and the
// namespace round trip. The seed corpus is in testdata/fuzz.
func FuzzValidatePath(f *testing.F) {
	for _, p := range []string{"/", "/a", "/a/b", "", "a", "/a/", "//a", "/a/./b", "/a/../b", "/a\x00b", "/a\x01b"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := ValidatePath(p)
		if err != nil {
			if !errors.Is(err, ErrInvalidPath) {
				t.Fatalf("ValidatePath(%q) = %v, not ErrInvalidPath", p, err)
			}
			return
		}
		if !strings.HasPrefix(p, "/") || !utf8.ValidString(p) {
			t.Fatalf("accepted %q: not absolute or not UTF-8", p)
		}
		if p == "/" {
			return
		}
		if strings.HasSuffix(p, "/") {
			t.Fatalf("accepted %q: trailing /", p)
		}
		for _, seg := range strings.Split(p[1:], "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("accepted %q: segment %q", p, seg)
			}
		}
		for _, r := range p {
			if r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0xd800 && r <= 0xf8ff) || r >= 0xfff0 && r <= 0xffff {
				t.Fatalf("accepted %q: character %U", p, r)
			}
		}
		parent, name := SplitPath(p)
		if name == "" || ValidatePath(parent) != nil || JoinPath(parent, name) != p {
			t.Fatalf("SplitPath(%q) = %q, %q", p, parent, name)
		}
		for _, ns := range []string{"/ns", "/a/b"} {
			full := fixPath(ns, p)
			if ValidatePath(full) != nil || unfixPath(ns, full) != p {
				t.Fatalf("namespace %s: %q -> %q -> %q", ns, p, full, unfixPath(ns, full))
			}
		}
	})
}
