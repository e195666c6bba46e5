package rwlock

import (
	"testing"

	"github.com/go-curator/curator/internal/lockcore"
)

func TestPolicies(t *testing.T) {
	const u = "_c_0c0d7614-f2c3-4dc7-81bb-0def2b4f685f-"
	r := func(seq string) string { return u + readName + seq }
	w := func(seq string) string { return u + writeName + seq }
	tests := []struct {
		name   string
		kids   []string
		i      int
		policy lockcore.Policy
		held   bool
		watch  string
	}{
		{"lone reader", []string{r("0000000001")}, 0, readPolicy, true, ""},
		{"readers share", []string{r("0000000001"), r("0000000002"), r("0000000003")}, 2, readPolicy, true, ""},
		{"reader behind writer", []string{w("0000000001"), r("0000000002")}, 1, readPolicy, false, w("0000000001")},
		{"reader watches first writer ahead",
			[]string{r("0000000001"), w("0000000002"), r("0000000003"), w("0000000004"), r("0000000005")}, 4,
			readPolicy, false, w("0000000002")},
		{"reader ahead of a queued writer", []string{r("0000000001"), w("0000000002")}, 0, readPolicy, true, ""},
		{"lone writer", []string{w("0000000001")}, 0, writePolicy, true, ""},
		{"writer behind readers watches its predecessor",
			[]string{r("0000000001"), r("0000000002"), w("0000000003")}, 2, writePolicy, false, r("0000000002")},
		{"writer behind writer", []string{w("0000000001"), w("0000000002")}, 1, writePolicy, false, w("0000000001")},
		{"writer behind a reader",
			[]string{r("0000000001"), w("0000000002")}, 1, writePolicy, false, r("0000000001")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lockcore.Sort(tt.kids, readName, writeName)
			held, watch := tt.policy(tt.kids, tt.i)
			if held != tt.held || watch != tt.watch {
				t.Fatalf("policy(%v, %d) = %v, %q; want %v, %q", tt.kids, tt.i, held, watch, tt.held, tt.watch)
			}
		})
	}
}

func TestSort_ReadAndWriteShareTheCounter(t *testing.T) {
	kids := []string{
		"_c_b-" + readName + "0000000003",
		"_c_a-" + writeName + "0000000002",
		"_c_c-" + readName + "0000000001",
	}
	lockcore.Sort(kids, readName, writeName)
	if kids[0] != "_c_c-"+readName+"0000000001" || kids[1] != "_c_a-"+writeName+"0000000002" {
		t.Fatalf("sorted = %v", kids)
	}
	if len(readName) != len(writeName) {
		t.Fatal("Curator's read and write names must have the same length")
	}
}
