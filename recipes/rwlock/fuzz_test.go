package rwlock

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/go-curator/curator/internal/lockcore"
)

// FuzzPolicies builds a queue of readers and writers from the input (one
// byte per contender: bit 0 makes it a writer, the other bits pick its
// protected prefix, and the contenders are listed in the order of their
// bytes, not of their sequence numbers), sorts it as the lock core does,
// and checks both policies at every position:
//   - the sort restores sequence order, whatever the prefixes;
//   - a writer holds only when first, and otherwise watches its immediate
//     predecessor;
//   - a reader holds exactly when no writer is ahead of it, and otherwise
//     watches a writer ahead of it;
//   - so a holding writer is alone, and every waiter watches a node ahead
//     of it in the queue (no cycle, no herd on one node for writers).
//
// The seed corpus is in testdata/fuzz/FuzzPolicies.
func FuzzPolicies(f *testing.F) {
	f.Add([]byte{0}, uint32(0))
	f.Add([]byte{1, 0, 0}, uint32(7))
	f.Add([]byte{0, 0, 1, 0, 1, 1, 0}, uint32(4294967290))
	f.Fuzz(func(t *testing.T, kinds []byte, start uint32) {
		if len(kinds) > 64 {
			kinds = kinds[:64]
		}
		type contender struct {
			node string
			b    byte
			seq  int
		}
		cs := make([]contender, len(kinds))
		for j, b := range kinds {
			name := readName
			if b&1 == 1 {
				name = writeName
			}
			prefix := fmt.Sprintf("_c_%08x-0000-4000-8000-%012x-", uint32(b>>1)*0x01010101, j)
			cs[j] = contender{node: fmt.Sprintf("%s%s%010d", prefix, name, int(start)+j), b: b, seq: j}
		}
		listed := slices.Clone(cs)
		slices.SortStableFunc(listed, func(a, b contender) int { return int(b.b) - int(a.b) })
		kids := make([]string, len(listed))
		for j, c := range listed {
			kids[j] = c.node
		}
		lockcore.Sort(kids, readName, writeName)
		for j, c := range cs {
			if kids[j] != c.node {
				t.Fatalf("sorted queue %v: position %d is %q, want %q", kids, j, kids[j], c.node)
			}
		}
		writerAhead := false
		for i, k := range kids {
			held, watch := writePolicy(kids, i)
			if held != (i == 0) || (!held && watch != kids[i-1]) || (held && watch != "") {
				t.Fatalf("writePolicy(%v, %d) = %v, %q", kids, i, held, watch)
			}
			held, watch = readPolicy(kids, i)
			if held == writerAhead || (held && watch != "") {
				t.Fatalf("readPolicy(%v, %d) = %v, %q with a writer ahead: %v", kids, i, held, watch, writerAhead)
			}
			if !held {
				at := slices.Index(kids, watch)
				if at < 0 || at >= i || !strings.Contains(watch, writeName) {
					t.Fatalf("readPolicy(%v, %d) watches %q, not a writer ahead", kids, i, watch)
				}
			}
			writerAhead = writerAhead || isWriter(k)
		}
	})
}
