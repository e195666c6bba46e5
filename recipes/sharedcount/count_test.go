package sharedcount

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

// unstarted returns a client that was built but never started.
func unstarted(t *testing.T) *framework.Client {
	t.Helper()
	p, err := retry.NewNTimes(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := framework.NewClient("127.0.0.1:1", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestNew_BadInput(t *testing.T) {
	c := unstarted(t)
	for _, tc := range []struct {
		name   string
		client *framework.Client
		path   string
		want   error
	}{
		{"nil client", nil, "/c", framework.ErrNilClient},
		{"empty path", c, "", framework.ErrInvalidPath},
		{"relative path", c, "c", framework.ErrInvalidPath},
		{"trailing slash", c, "/c/", framework.ErrInvalidPath},
		{"double slash", c, "/a//c", framework.ErrInvalidPath},
		{"dot segment", c, "/a/../c", framework.ErrInvalidPath},
		{"NUL", c, "/a\x00c", framework.ErrInvalidPath},
		{"root", c, "/", framework.ErrInvalidPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.client, tc.path, 1); !errors.Is(err, tc.want) {
				t.Errorf("New: err = %v, want %v", err, tc.want)
			}
			if _, err := NewValue(tc.client, tc.path, nil); !errors.Is(err, tc.want) {
				t.Errorf("NewValue: err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestCount_Lifecycle(t *testing.T) {
	defer noLeftGoroutines(t)()
	ctx := context.Background()
	cnt, err := New(unstarted(t), "/c", 7)
	if err != nil {
		t.Fatal(err)
	}
	if got := cnt.Count(); got != 7 {
		t.Errorf("Count before Start = %d, want the seed 7", got)
	}
	if err := cnt.SetCount(ctx, 1); !errors.Is(err, ErrNotStarted) {
		t.Errorf("SetCount before Start: err = %v, want ErrNotStarted", err)
	}
	if _, err := cnt.TrySetCount(ctx, cnt.VersionedValue(), 1); !errors.Is(err, ErrNotStarted) {
		t.Errorf("TrySetCount before Start: err = %v, want ErrNotStarted", err)
	}
	// The client is not started: Start says so, and closes the Count.
	if err := cnt.Start(ctx); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Start on an unstarted client: err = %v, want framework.ErrNotStarted", err)
	}
	if err := cnt.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := cnt.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := cnt.Start(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close: err = %v, want ErrClosed", err)
	}
	if err := cnt.SetCount(ctx, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("SetCount after Close: err = %v, want ErrClosed", err)
	}
	remove := cnt.AddListener(Listener[int32]{})
	remove()
}

func TestCount_NilReceiver(t *testing.T) {
	var c *Count
	if err := c.Start(context.Background()); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Start: %v", err)
	}
	if err := c.SetCount(context.Background(), 1); !errors.Is(err, ErrNotStarted) {
		t.Errorf("SetCount: %v", err)
	}
	if c.Count() != 0 || c.Close() != nil {
		t.Error("nil Count: Count or Close misbehaves")
	}
	c.AddListener(Listener[int32]{})()
	var v *Value
	if err := v.SetValue(context.Background(), nil); !errors.Is(err, ErrNotStarted) {
		t.Errorf("SetValue: %v", err)
	}
}

func TestTrySet_OverflowedVersion(t *testing.T) {
	s, err := newShared(unstarted(t), "/c", 0, countCodec)
	if err != nil {
		t.Fatal(err)
	}
	s.state = started // no I/O happens before the version check
	_, err = s.trySet(context.Background(), VersionedValue[int32]{Version: -1, Mzxid: 5}, 1)
	if !errors.Is(err, ErrVersionOverflow) {
		t.Errorf("err = %v, want ErrVersionOverflow", err)
	}
	s.state = latent
	s.Close()
}

func TestListener_InOrderAndRemovable(t *testing.T) {
	defer noLeftGoroutines(t)()
	s, err := newShared(unstarted(t), "/c", 0, countCodec)
	if err != nil {
		t.Fatal(err)
	}
	s.state = started
	got := make(chan int32, 100)
	block := make(chan struct{})
	slow := s.addListener(Listener[int32]{Changed: func(VersionedValue[int32]) { <-block }})
	remove := s.addListener(Listener[int32]{Changed: func(v VersionedValue[int32]) { got <- v.Value }})
	for i := int32(1); i <= 50; i++ {
		s.update(i, &zk.Stat{Mzxid: int64(i), Version: i})
	}
	s.update(99, &zk.Stat{Mzxid: 10}) // stale: not cached, not delivered
	for i := int32(1); i <= 50; i++ {
		if v := <-got; v != i {
			t.Fatalf("got %d, want %d", v, i)
		}
	}
	if v := s.versioned(); v.Value != 50 || v.Mzxid != 50 {
		t.Errorf("cache = %+v, want value 50 at zxid 50", v)
	}
	remove()
	s.update(51, &zk.Stat{Mzxid: 51})
	close(block) // the slow listener was never in the way
	slow()
	s.state = latent
	s.Close()
	select {
	case v := <-got:
		t.Errorf("removed listener got %d", v)
	default:
	}
}

func TestWaitNewer(t *testing.T) {
	s, err := newShared(unstarted(t), "/c", 0, countCodec)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	s.update(1, &zk.Stat{Mzxid: 10})
	if !s.waitNewer(ctx, 9, 0) {
		t.Error("a newer cache was not seen at once")
	}
	if s.waitNewer(ctx, 10, time.Millisecond) {
		t.Error("waitNewer reported a change that did not happen")
	}
	go func() {
		time.Sleep(5 * time.Millisecond)
		s.update(2, &zk.Stat{Mzxid: 11})
	}()
	if !s.waitNewer(ctx, 10, time.Minute) {
		t.Error("the change did not wake waitNewer")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if s.waitNewer(cctx, 11, time.Minute) {
		t.Error("waitNewer on a cancelled ctx reported a change")
	}
}

// noLeftGoroutines returns a check that the test left no more goroutines
// than it started with, waiting a little for those that are ending. (The
// library module has no test-only dependencies; integration/ runs goleak.)
func noLeftGoroutines(t *testing.T) func() {
	before := runtime.NumGoroutine()
	return func() {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			t.Errorf("%d goroutines left behind", n-before)
		}
	}
}
