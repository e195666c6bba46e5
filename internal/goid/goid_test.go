package goid

import (
	"sync"
	"testing"
)

func TestGet_DiffersAcrossGoroutinesAndIsStable(t *testing.T) {
	main := Get()
	if main <= 0 || Get() != main {
		t.Fatalf("Get() = %d, then %d: want a stable positive ID", main, Get())
	}
	ids := make([]int64, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() { defer wg.Done(); ids[i] = Get() }()
	}
	wg.Wait()
	seen := map[int64]bool{main: true}
	for _, id := range ids {
		if id <= 0 || seen[id] {
			t.Fatalf("goroutine IDs %v (main %d): want distinct positive IDs", ids, main)
		}
		seen[id] = true
	}
}

func BenchmarkGet(b *testing.B) {
	for b.Loop() {
		Get()
	}
}
