package framework

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// ProtectedPrefix starts the last segment of every protected node's name,
// as in Curator: "_c_" + a 36-character UUID + "-".
const ProtectedPrefix = "_c_"

// protectedPrefixLen is len("_c_") + 36 + len("-").
const protectedPrefixLen = len(ProtectedPrefix) + 36 + 1

// ValidatePath checks a ZooKeeper path the way the server would, and a
// little more strictly: it must be absolute, must not end in "/" (except
// the root), must not contain empty, "." or ".." segments, and must not
// contain NUL, control or otherwise disallowed characters.
func ValidatePath(p string) error {
	if reason := pathProblem(p); reason != "" {
		return fmt.Errorf("%w %q: %s", ErrInvalidPath, p, reason)
	}
	return nil
}

func pathProblem(p string) string {
	switch {
	case p == "":
		return "empty"
	case p[0] != '/':
		return "not absolute"
	case p == "/":
		return ""
	case p[len(p)-1] == '/':
		return "ends with /"
	case !utf8.ValidString(p):
		return "not valid UTF-8"
	}
	// One pass over the bytes: segments end at each '/' and at the end;
	// ASCII is checked here, anything else by rune below.
	seg, ascii := 1, true
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			if b := p[i]; b >= 0x80 {
				ascii = false
			} else if b == 0 {
				return "contains NUL"
			} else if b < 0x20 || b == 0x7f {
				return fmt.Sprintf("contains disallowed character %U", rune(b))
			}
			continue
		}
		switch p[seg:i] {
		case "":
			return "empty segment (//)"
		case ".", "..":
			return "relative segment " + p[seg:i]
		}
		seg = i + 1
	}
	if ascii {
		return ""
	}
	for _, r := range p {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) ||
			(r >= 0xd800 && r <= 0xf8ff) || (r >= 0xfff0 && r <= 0xffff) || r > 0xffff {
			// The server checks UTF-16 code units: a character outside the
			// Basic Multilingual Plane is a surrogate pair, which it rejects.
			return fmt.Sprintf("contains disallowed character %U", r)
		}
	}
	return ""
}

// JoinPath joins a parent path and a child name.
func JoinPath(parent, child string) string {
	if parent == "/" {
		return "/" + child
	}
	return parent + "/" + child
}

// SplitPath returns the parent of p and its last segment.
func SplitPath(p string) (parent, name string) {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/", p[i+1:]
	}
	return p[:i], p[i+1:]
}

// NewProtectedPrefix returns a fresh "_c_<uuid>-" prefix.
func NewProtectedPrefix() string {
	return ProtectedPrefix + uuid.NewString() + "-"
}

// IsProtected reports whether a node name carries Curator's protection
// prefix "_c_<uuid>-".
func IsProtected(name string) bool {
	if len(name) <= protectedPrefixLen || !strings.HasPrefix(name, ProtectedPrefix) ||
		name[protectedPrefixLen-1] != '-' {
		return false
	}
	return uuid.Validate(name[len(ProtectedPrefix):protectedPrefixLen-1]) == nil
}

// StripProtected returns name without its protection prefix, if it has one.
func StripProtected(name string) string {
	if IsProtected(name) {
		return name[protectedPrefixLen:]
	}
	return name
}

// fixPath applies the namespace ("" or "/ns") to a validated path.
func fixPath(ns, p string) string {
	if ns == "" {
		return p
	}
	if p == "/" {
		return ns
	}
	return ns + p
}

// hasNamespace reports whether the client has a namespace (below its
// chroot, if any): ns is chroot + "/" + namespace.
func (c *Client) hasNamespace() bool { return len(c.ns) > len(c.chroot) }

// explainNoNode adds to a zk.ErrNoNode that the chroot does not exist,
// when it does not: ZooKeeper then answers NoNode to every path below it,
// as it does for Curator. It costs one exists, on NoNode errors of clients
// with a chroot only.
func (c *Client) explainNoNode(err error) error {
	if c == nil || c.chroot == "" || !errors.Is(err, zk.ErrNoNode) || errors.Is(err, ErrNoChroot) {
		return err
	}
	conn := c.zkConn()
	if conn == nil {
		return err
	}
	if ok, _, xerr := conn.Exists(c.chroot); xerr != nil || ok {
		return err
	}
	return errtext.Errorf("%w: %s (create it, or fix the connect string): %w", ErrNoChroot, c.chroot, err)
}

// unfixPath removes the namespace from a server path. A path outside the
// namespace ("/shopping" for namespace "/shop") is returned unchanged.
func unfixPath(ns, p string) string {
	if ns == "" || !strings.HasPrefix(p, ns) {
		return p
	}
	switch rest := p[len(ns):]; {
	case rest == "":
		return "/"
	case rest[0] == '/':
		return rest
	}
	return p
}
