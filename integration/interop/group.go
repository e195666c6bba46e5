package interop

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// The group helper is a Java program of its own, java/GroupHelper.java,
// for Curator's GroupMember. It speaks CuratorHelper's protocol and is
// driven through the same Helper type.

var groupProgram = &program{class: "GroupHelper", kind: "group", what: "group helper"}

// StartGroup starts a group helper connected to connectString with
// DefaultSessionTimeout; t.Cleanup closes it (its members, then its
// session). It skips or fails t when Java Curator is missing, as Start
// does.
func StartGroup(t testing.TB, connectString string) *Helper {
	t.Helper()
	return start(t, groupProgram, connectString, DefaultSessionTimeout, false)
}

// ParseMembers parses the reply of gm.members ("<id>:<hex>" words; "-"
// for no payload) into a map from ID to payload.
func ParseMembers(words []string) (map[string][]byte, error) {
	out := make(map[string][]byte, len(words))
	for _, w := range words {
		i := strings.LastIndexByte(w, ':')
		if i < 0 {
			return nil, fmt.Errorf("interop: bad member %q", w)
		}
		var data []byte
		if h := w[i+1:]; h != "-" {
			var err error
			if data, err = hex.DecodeString(h); err != nil {
				return nil, fmt.Errorf("interop: bad payload in %q: %w", w, err)
			}
		}
		out[w[:i]] = data
	}
	return out, nil
}
