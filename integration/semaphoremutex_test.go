package integration

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/semaphoremutex"
)

func newSemMutex(t testing.TB, c *framework.Client, path string) *semaphoremutex.Mutex {
	t.Helper()
	m, err := semaphoremutex.New(c, path)
	if err != nil {
		t.Fatalf("semaphoremutex.New: %v", err)
	}
	return m
}

func TestSemaphoreMutex_NotReentrantOnOneGoroutine(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	m := newSemMutex(t, c, path)
	ctx := t.Context()
	h, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, wait := range []time.Duration{300 * time.Millisecond, 0} {
		if h2, ok, err := m.TryAcquire(ctx, wait); ok || err != nil || h2 != nil {
			t.Fatalf("a second TryAcquire(%v) on the holding goroutine = %v, %v, %v; want nil, false, nil", wait, h2, ok, err)
		}
	}
	if kids := children(t, c, path+"/leases"); len(kids) != 1 {
		t.Fatalf("leases = %v; want the one hold", kids)
	}
	if !m.IsAcquiredInThisProcess() {
		t.Fatal("the failed second acquire dropped the hold")
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); !errors.Is(err, semaphoremutex.ErrNotOwner) {
		t.Fatalf("a second Release of the hold = %v, want ErrNotOwner", err)
	}
	if _, ok, err := m.TryAcquire(ctx, 5*time.Second); !ok || err != nil {
		t.Fatalf("TryAcquire after the release = %v, %v", ok, err)
	}
	if err := m.Release(ctx); err != nil { // Curator's release(), without the hold
		t.Fatal(err)
	}
	if err := m.Release(ctx); !errors.Is(err, semaphoremutex.ErrNotOwner) {
		t.Fatalf("a second Release = %v, want ErrNotOwner", err)
	}
}

func TestSemaphoreMutex_ReleasedFromAnotherGoroutine(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	m := newSemMutex(t, c, path)
	other := newSemMutex(t, newClient(t), path)
	ctx := t.Context()
	h, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.FencingToken(); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error)
	go func() { errc <- m.Release(ctx) }() // Curator's release(), from any thread
	if err := <-errc; err != nil {
		t.Fatalf("Release from another goroutine = %v", err)
	}
	if m.IsAcquiredInThisProcess() {
		t.Fatal("still held after the release")
	}
	if kids := children(t, c, path+"/leases"); len(kids) != 0 {
		t.Fatalf("leases after the release = %v", kids)
	}
	if _, err := h.FencingToken(); !errors.Is(err, semaphoremutex.ErrNotOwner) {
		t.Fatalf("FencingToken of the released hold = %v, want ErrNotOwner", err)
	}
	oh, ok, err := other.TryAcquire(ctx, 5*time.Second)
	if !ok || err != nil {
		t.Fatalf("another client after the release = %v, %v", ok, err)
	}
	oh.Release(ctx)
}

func TestSemaphoreMutex_TwoClientsExclude(t *testing.T) {
	path := testPath(t)
	ctx := t.Context()
	var inside atomic.Bool
	var overlaps, total atomic.Int32
	var mu sync.Mutex
	var tokens []int64
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		m := newSemMutex(t, newClient(t), path)
		for g := 0; g < 3; g++ { // goroutines sharing one Mutex exclude each other too
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 10; j++ {
					h, err := m.Acquire(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					if !inside.CompareAndSwap(false, true) {
						overlaps.Add(1)
					}
					tok, err := h.FencingToken()
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					tokens = append(tokens, tok)
					mu.Unlock()
					total.Add(1)
					time.Sleep(time.Millisecond)
					inside.Store(false)
					if err := h.Release(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if overlaps.Load() != 0 || total.Load() != 60 {
		t.Fatalf("overlaps %d, holds %d; want 0 and 60", overlaps.Load(), total.Load())
	}
	if !slices.IsSorted(tokens) || len(slices.Compact(slices.Clone(tokens))) != len(tokens) {
		t.Fatalf("fencing tokens in hold order are not strictly increasing: %v", tokens)
	}
}

func TestSemaphoreMutex_BadInput(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	if _, err := semaphoremutex.New(nil, "/x"); !errors.Is(err, framework.ErrNilClient) || !errors.Is(err, semaphoremutex.ErrInvalidArgument) {
		t.Errorf("New(nil client) = %v, want ErrNilClient and ErrInvalidArgument", err)
	}
	if _, err := semaphoremutex.New(c, "/x/"); !errors.Is(err, framework.ErrInvalidPath) || !errors.Is(err, semaphoremutex.ErrInvalidArgument) {
		t.Errorf("New(bad path) = %v, want ErrInvalidPath and ErrInvalidArgument", err)
	}
	m := newSemMutex(t, c, testPath(t))
	if err := m.Release(ctx); !errors.Is(err, semaphoremutex.ErrNotOwner) {
		t.Errorf("Release without hold = %v, want ErrNotOwner", err)
	}
	if _, _, err := m.TryAcquire(ctx, -time.Second); !errors.Is(err, semaphoremutex.ErrInvalidArgument) {
		t.Errorf("TryAcquire(-1s) = %v, want ErrInvalidArgument", err)
	}
	if _, err := (*semaphoremutex.Hold)(nil).FencingToken(); !errors.Is(err, semaphoremutex.ErrNotOwner) {
		t.Errorf("FencingToken without hold = %v, want ErrNotOwner", err)
	}
	if kids := children(t, c, testPath(t)); len(kids) != 0 {
		t.Errorf("bad input left nodes: %v", kids)
	}
}
