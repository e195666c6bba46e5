package lockcore

import (
	"slices"
	"testing"
)

func TestSortKeyAndSequence(t *testing.T) {
	const uuid = "_c_0c0d7614-f2c3-4dc7-81bb-0def2b4f685f-"
	tests := []struct {
		node  string
		names []string
		key   string
		seq   int64
		ok    bool
	}{
		{uuid + "lock-0000000007", []string{"lock-"}, "0000000007", 7, true},
		{"lock-0000000012", []string{"lock-"}, "0000000012", 12, true},
		{uuid + "__READ__0000000003", []string{"__READ__", "__WRIT__"}, "0000000003", 3, true},
		{uuid + "__WRIT__0000000004", []string{"__READ__", "__WRIT__"}, "0000000004", 4, true},
		// a uuid that happens to contain the name: the last occurrence wins
		{"_c_lock-abc-lock-0000000001", []string{"lock-"}, "0000000001", 1, true},
		{"foreign", []string{"lock-"}, "foreign", 0, false},
		{"lock-", []string{"lock-"}, "", 0, false},
		{"lock-12x", []string{"lock-"}, "12x", 0, false},
		{"lock--5", []string{"lock-"}, "-5", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.node, func(t *testing.T) {
			if got := SortKey(tt.node, tt.names...); got != tt.key {
				t.Errorf("SortKey = %q, want %q", got, tt.key)
			}
			seq, ok := Sequence(tt.node, tt.names...)
			if seq != tt.seq || ok != tt.ok {
				t.Errorf("Sequence = %d, %v; want %d, %v", seq, ok, tt.seq, tt.ok)
			}
		})
	}
}

func TestSort_MixedNamesByTheirSharedCounter(t *testing.T) {
	nodes := []string{
		"_c_b-__WRIT__0000000002",
		"_c_z-__READ__0000000000",
		"_c_a-__READ__0000000003",
		"_c_y-__WRIT__0000000001",
	}
	Sort(nodes, "__READ__", "__WRIT__")
	want := []string{
		"_c_z-__READ__0000000000",
		"_c_y-__WRIT__0000000001",
		"_c_b-__WRIT__0000000002",
		"_c_a-__READ__0000000003",
	}
	if !slices.Equal(nodes, want) {
		t.Fatalf("Sort = %v, want %v", nodes, want)
	}
}

func TestMaxLeases(t *testing.T) {
	kids := []string{"a", "b", "c", "d", "e"}
	tests := []struct {
		n, i  int
		held  bool
		watch string
	}{
		{1, 0, true, ""},
		{1, 1, false, "a"},
		{1, 4, false, "d"},
		{3, 2, true, ""},
		{3, 3, false, "a"},
		{3, 4, false, "b"},
	}
	for _, tt := range tests {
		held, watch := MaxLeases(tt.n)(kids, tt.i)
		if held != tt.held || watch != tt.watch {
			t.Errorf("MaxLeases(%d)(%d) = %v, %q; want %v, %q", tt.n, tt.i, held, watch, tt.held, tt.watch)
		}
	}
}

func FuzzSequence(f *testing.F) {
	for _, s := range []string{"lock-0000000001", "_c_x-lock-9999999999", "lock-", "", "lock-lock-1", "__READ__0000000003"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, node string) {
		seq, ok := Sequence(node, "lock-", "__READ__")
		if ok && seq < 0 {
			t.Fatalf("Sequence(%q) = %d: negative", node, seq)
		}
		nodes := []string{node, "lock-0000000001", node + "x"}
		Sort(nodes, "lock-", "__READ__")
		for i := 1; i < len(nodes); i++ {
			if SortKey(nodes[i-1], "lock-", "__READ__") > SortKey(nodes[i], "lock-", "__READ__") {
				t.Fatalf("Sort left %v out of order", nodes)
			}
		}
	})
}
