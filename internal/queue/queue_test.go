package queue

import (
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/internal/goid"
)

func TestQueue_OrderAndNeverBlocks(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var got []int
	q := New(func(v int) {
		<-release
		mu.Lock()
		got = append(got, v)
		mu.Unlock()
	})
	// The function blocks, yet posting returns at once.
	for i := range 1000 {
		q.Post(i)
	}
	close(release)
	q.Finish()
	<-q.Done()
	if len(got) != 1000 {
		t.Fatalf("delivered %d items, want 1000", len(got))
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("item %d = %d: out of order", i, v)
		}
	}
	q.Post(1) // after Finish: dropped, no panic
}

func TestQueue_StopDropsQueuedAndLetsRunningCallFinish(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	var mu sync.Mutex
	var got []int
	q := New(func(v int) {
		if v == 0 {
			close(started)
			<-release
		}
		mu.Lock()
		got = append(got, v)
		mu.Unlock()
	})
	q.Post(0)
	<-started
	q.Post(1)
	q.Post(2)
	q.Stop()
	q.Stop() // idempotent
	select {
	case <-q.Done():
		t.Fatal("Done closed while a call is still running")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-q.Done()
	q.Post(3)
	if len(got) != 1 || got[0] != 0 {
		t.Fatalf("delivered %v, want [0]: nothing after Stop", got)
	}
}

func TestQueue_StopFromTheFunction(t *testing.T) {
	var q *Queue[int]
	ids := make(chan [2]int64, 1)
	ready := make(chan struct{})
	q = New(func(int) {
		<-ready
		ids <- [2]int64{goid.Get(), q.GoroutineID()}
		q.Stop()
	})
	close(ready)
	q.Post(1)
	q.Post(2)
	<-q.Done()
	id := <-ids
	if id[0] != id[1] || id[0] == 0 {
		t.Fatalf("GoroutineID = %d inside the function, running on %d", id[1], id[0])
	}
	if q.GoroutineID() == goid.Get() {
		t.Fatal("GoroutineID matches the test goroutine")
	}
}
