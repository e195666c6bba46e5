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
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	for _, wait := range []time.Duration{300 * time.Millisecond, 0} {
		if ok, err := m.TryAcquire(ctx, wait); ok || err != nil {
			t.Fatalf("a second TryAcquire(%v) on the holding goroutine = %v, %v; want false, nil", wait, ok, err)
		}
	}
	if kids := children(t, c, path+"/leases"); len(kids) != 1 {
		t.Fatalf("leases = %v; want the one hold", kids)
	}
	if !m.IsAcquiredInThisProcess() {
		t.Fatal("the failed second acquire dropped the hold")
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.TryAcquire(ctx, 5*time.Second); !ok || err != nil {
		t.Fatalf("TryAcquire after the release = %v, %v", ok, err)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Release(ctx); !errors.Is(err, semaphoremutex.ErrNotHeld) {
		t.Fatalf("a second Release = %v, want ErrNotHeld", err)
	}
}

func TestSemaphoreMutex_ReleasedFromAnotherGoroutine(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	m := newSemMutex(t, c, path)
	other := newSemMutex(t, newClient(t), path)
	ctx := t.Context()
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.FencingToken(); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error)
	go func() { errc <- m.Release(ctx) }()
	if err := <-errc; err != nil {
		t.Fatalf("Release from another goroutine = %v", err)
	}
	if m.IsAcquiredInThisProcess() {
		t.Fatal("still held after the release")
	}
	if kids := children(t, c, path+"/leases"); len(kids) != 0 {
		t.Fatalf("leases after the release = %v", kids)
	}
	if ok, err := other.TryAcquire(ctx, 5*time.Second); !ok || err != nil {
		t.Fatalf("another client after the release = %v, %v", ok, err)
	}
	other.Release(ctx)
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
					if err := m.Acquire(ctx); err != nil {
						t.Error(err)
						return
					}
					if !inside.CompareAndSwap(false, true) {
						overlaps.Add(1)
					}
					tok, err := m.FencingToken()
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					tokens = append(tokens, tok)
					mu.Unlock()
					total.Add(1)
					time.Sleep(time.Millisecond)
					inside.Store(false)
					if err := m.Release(ctx); err != nil {
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
	if _, err := semaphoremutex.New(nil, "/x"); !errors.Is(err, framework.ErrNilClient) {
		t.Errorf("New(nil client) = %v, want ErrNilClient", err)
	}
	if _, err := semaphoremutex.New(c, "/x/"); !errors.Is(err, framework.ErrInvalidPath) {
		t.Errorf("New(bad path) = %v, want ErrInvalidPath", err)
	}
	m := newSemMutex(t, c, testPath(t))
	if err := m.Release(ctx); !errors.Is(err, semaphoremutex.ErrNotHeld) {
		t.Errorf("Release without hold = %v, want ErrNotHeld", err)
	}
	if _, err := m.TryAcquire(ctx, -time.Second); !errors.Is(err, semaphoremutex.ErrInvalidArgument) {
		t.Errorf("TryAcquire(-1s) = %v, want ErrInvalidArgument", err)
	}
	if _, err := m.FencingToken(); !errors.Is(err, semaphoremutex.ErrNotHeld) {
		t.Errorf("FencingToken without hold = %v, want ErrNotHeld", err)
	}
	if kids := children(t, c, testPath(t)); len(kids) != 0 {
		t.Errorf("bad input left nodes: %v", kids)
	}
}
