package rwlock

import (
	"strings"

	"github.com/go-curator/curator/internal/lockcore"
)

// Curator's node names. They must have the same length, as Curator's
// sorting relies on it.
const (
	readName  = "__READ__"
	writeName = "__WRIT__"
)

// writePolicy is Curator's standard driver with one lease: a writer holds
// the lock when its node is first of all, readers and writers alike, and
// otherwise watches its immediate predecessor.
var writePolicy = lockcore.MaxLeases(1)

// readPolicy is Curator's readLockPredicate: a reader holds the lock when
// no writer's node is ahead of its own, and otherwise watches the first
// writer ahead of it.
func readPolicy(children []string, i int) (bool, string) {
	for _, k := range children[:i] {
		if isWriter(k) {
			return false, k
		}
	}
	return true, ""
}

func isWriter(node string) bool { return strings.Contains(node, writeName) }
