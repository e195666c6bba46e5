package lockcore

import (
	"sort"
	"strconv"
	"strings"
)

// SortKey returns the part of a node name after the last occurrence of any
// of names, as Curator's fixForSorting does; a name containing none of
// them sorts by itself.
func SortKey(node string, names ...string) string {
	cut := -1
	for _, n := range names {
		if i := strings.LastIndex(node, n); i >= 0 && i+len(n) > cut {
			cut = i + len(n)
		}
	}
	if cut < 0 {
		return node
	}
	return node[cut:]
}

// Sequence parses the server's sequence suffix of a node name: the digits
// after the last of names. It reports false when there is none.
func Sequence(node string, names ...string) (int64, bool) {
	key := SortKey(node, names...)
	if key == "" || key == node {
		return 0, false
	}
	n, err := strconv.ParseInt(key, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// Sort sorts node names in place by SortKey, keeping names with equal keys
// in their given order. Each key is computed once: with thousands of
// waiters, every woken waiter sorts the whole list.
func Sort(nodes []string, names ...string) {
	type keyed struct{ key, node string }
	ks := make([]keyed, len(nodes))
	for i, n := range nodes {
		ks[i] = keyed{SortKey(n, names...), n}
	}
	sort.SliceStable(ks, func(i, j int) bool { return ks[i].key < ks[j].key })
	for i := range ks {
		nodes[i] = ks[i].node
	}
}

// index returns the position of name in nodes, or -1.
func index(nodes []string, name string) int {
	for i, n := range nodes {
		if n == name {
			return i
		}
	}
	return -1
}
