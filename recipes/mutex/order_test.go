package mutex_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/go-curator/curator/recipes/mutex"
)

// A lock's queue, as a client's GetChildren returns it: in no order, each
// name a protected-create prefix, the lock name and the sequence.
func ExampleSortNodes() {
	children := []string{
		"_c_9a1c3e5f-lock-0000000012",
		"_c_0b2d4f6a-lock-0000000010",
		"_c_5e6f7a8b-lock-0000000011",
	}
	mutex.SortNodes(children, mutex.LockName)
	fmt.Println("holder:", children[0])
	fmt.Println("next:", children[1])
	// Output:
	// holder: _c_0b2d4f6a-lock-0000000010
	// next: _c_5e6f7a8b-lock-0000000011
}

func TestSortNodes_ReadersAndWritersShareOneQueue(t *testing.T) {
	nodes := []string{
		"_c_b-__WRIT__0000000003",
		"x-unrelated",
		"_c_a-__READ__0000000001",
		"_c_c-__READ__0000000002",
	}
	mutex.SortNodes(nodes, "__READ__", "__WRIT__")
	want := []string{
		"_c_a-__READ__0000000001",
		"_c_c-__READ__0000000002",
		"_c_b-__WRIT__0000000003",
		"x-unrelated",
	}
	if !slices.Equal(nodes, want) {
		t.Errorf("SortNodes = %q, want %q", nodes, want)
	}
	byName := []string{"b", "a", "c"}
	mutex.SortNodes(byName)
	if !slices.Equal(byName, []string{"a", "b", "c"}) {
		t.Errorf("SortNodes without lock names = %q, want by name", byName)
	}
}
