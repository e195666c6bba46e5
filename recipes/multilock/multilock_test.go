package multilock

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"
)

// fake is a Locker that records its calls in a shared log.
type fake struct {
	name       string
	log        *[]string
	acquireErr error
	busy       bool // TryAcquire reports false
	releaseErr error
	waits      *[]time.Duration
	lost       chan struct{}
	token      int64
	tokenErr   error
}

// fakeHold is a fake's hold.
type fakeHold struct{ f *fake }

func (f *fake) Acquire(context.Context) (Member, error) {
	*f.log = append(*f.log, "acquire "+f.name)
	if f.acquireErr != nil {
		return nil, f.acquireErr
	}
	return fakeHold{f}, nil
}

func (f *fake) TryAcquire(_ context.Context, wait time.Duration) (Member, bool, error) {
	*f.log = append(*f.log, "try "+f.name)
	if f.waits != nil {
		*f.waits = append(*f.waits, wait)
	}
	if f.busy || f.acquireErr != nil {
		return nil, false, f.acquireErr
	}
	return fakeHold{f}, true, nil
}

func (h fakeHold) Release(context.Context) error {
	*h.f.log = append(*h.f.log, "release "+h.f.name)
	return h.f.releaseErr
}

func (h fakeHold) Lost() <-chan struct{} {
	if h.f.lost == nil {
		h.f.lost = make(chan struct{})
	}
	return h.f.lost
}

func (h fakeHold) FencingToken() (int64, error) { return h.f.token, h.f.tokenErr }
func (h fakeHold) Node() string                 { return "/" + h.f.name }

func fakes(log *[]string, names ...string) []*fake {
	fs := make([]*fake, len(names))
	for i, n := range names {
		fs[i] = &fake{name: n, log: log, token: int64(i + 1)}
	}
	return fs
}

func lockers(fs []*fake) []Locker {
	ls := make([]Locker, len(fs))
	for i, f := range fs {
		ls[i] = f
	}
	return ls
}

func TestMultiLock(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		setup   func(fs []*fake)
		run     func(ctx context.Context, m *MultiLock) error
		log     []string
		wantErr error
	}{
		{
			name: "acquire in order, release in reverse",
			run: func(ctx context.Context, m *MultiLock) error {
				h, err := m.Acquire(ctx)
				if err != nil {
					return err
				}
				return h.Release(ctx)
			},
			log: []string{"acquire a", "acquire b", "acquire c", "release c", "release b", "release a"},
		},
		{
			name:    "failed acquire releases the taken ones in reverse",
			setup:   func(fs []*fake) { fs[2].acquireErr = boom },
			run:     func(ctx context.Context, m *MultiLock) error { _, err := m.Acquire(ctx); return err },
			log:     []string{"acquire a", "acquire b", "acquire c", "release b", "release a"},
			wantErr: boom,
		},
		{
			name:  "timed-out try releases the taken ones, no error",
			setup: func(fs []*fake) { fs[1].busy = true },
			run: func(ctx context.Context, m *MultiLock) error {
				if _, ok, err := m.TryAcquire(ctx, time.Second); ok || err != nil {
					return errors.Join(errors.New("want false, nil"), err)
				}
				return nil
			},
			log: []string{"try a", "try b", "release a"},
		},
		{
			name: "failed try releases and returns the error",
			setup: func(fs []*fake) {
				fs[1].acquireErr = boom
			},
			run: func(ctx context.Context, m *MultiLock) error {
				_, _, err := m.TryAcquire(ctx, 0)
				return err
			},
			log:     []string{"try a", "try b", "release a"},
			wantErr: boom,
		},
		{
			name:  "release goes past a failure and returns it",
			setup: func(fs []*fake) { fs[1].releaseErr = boom },
			run: func(ctx context.Context, m *MultiLock) error {
				h, err := m.Acquire(ctx)
				if err != nil {
					return err
				}
				return h.Release(ctx)
			},
			log:     []string{"acquire a", "acquire b", "acquire c", "release c", "release b", "release a"},
			wantErr: boom,
		},
		{
			name: "a failing rollback is joined to the acquire error",
			setup: func(fs []*fake) {
				fs[0].releaseErr = errors.New("rollback")
				fs[2].acquireErr = boom
			},
			run:     func(ctx context.Context, m *MultiLock) error { _, err := m.Acquire(ctx); return err },
			log:     []string{"acquire a", "acquire b", "acquire c", "release b", "release a"},
			wantErr: boom,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log []string
			fs := fakes(&log, "a", "b", "c")
			if tt.setup != nil {
				tt.setup(fs)
			}
			m, err := New(lockers(fs)...)
			if err != nil {
				t.Fatal(err)
			}
			err = tt.run(t.Context(), m)
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(log, tt.log) {
				t.Fatalf("calls %v\nwant  %v", log, tt.log)
			}
		})
	}
}

func TestMultiLock_TryAcquireSharesOneBound(t *testing.T) {
	var log []string
	var waits []time.Duration
	fs := fakes(&log, "a", "b")
	for _, f := range fs {
		f.waits = &waits
	}
	m, _ := New(lockers(fs)...)
	if _, ok, err := m.TryAcquire(t.Context(), time.Minute); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if len(waits) != 2 || waits[0] > time.Minute || waits[1] > waits[0] || waits[1] <= 0 {
		t.Fatalf("waits %v: each lock should get what is left of one minute", waits)
	}
	waits = nil
	if _, ok, err := m.TryAcquire(t.Context(), 0); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if !slices.Equal(waits, []time.Duration{0, 0}) {
		t.Fatalf("TryAcquire(0) waits %v, want each lock tried once", waits)
	}
}

func TestNew_BadInput(t *testing.T) {
	var log []string
	if _, err := New(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("New() = %v, want ErrInvalidArgument", err)
	}
	if _, err := New(&fake{name: "a", log: &log}, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("New(a, nil) = %v, want ErrInvalidArgument", err)
	}
	m, _ := New(&fake{name: "a", log: &log})
	if _, _, err := m.TryAcquire(t.Context(), -time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("TryAcquire(-1s) = %v, want ErrInvalidArgument", err)
	}
	var zero *MultiLock
	if _, err := zero.Acquire(t.Context()); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil Acquire = %v", err)
	}
	if _, _, err := (&MultiLock{}).TryAcquire(t.Context(), 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("zero TryAcquire = %v", err)
	}
	if len(log) != 0 {
		t.Errorf("bad input reached the locks: %v", log)
	}
}

func TestHold(t *testing.T) {
	var log []string
	fs := fakes(&log, "a", "b", "c")
	fs[1].tokenErr = errors.New("token refused")
	m, _ := New(lockers(fs)...)
	h, err := m.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := h.FencingToken(); tok != 1 || err != nil {
		t.Errorf("FencingToken = %d, %v; want the first lock's, 1", tok, err)
	}
	if toks, err := h.FencingTokens(); toks != nil || !errors.Is(err, fs[1].tokenErr) {
		t.Errorf("FencingTokens = %v, %v; want the second lock's error", toks, err)
	}
	fs[1].tokenErr = nil
	if toks, err := h.FencingTokens(); !slices.Equal(toks, []int64{1, 2, 3}) || err != nil {
		t.Errorf("FencingTokens = %v, %v; want [1 2 3]", toks, err)
	}
	if n, ns := h.Node(), h.Nodes(); n != "/a" || !slices.Equal(ns, []string{"/a", "/b", "/c"}) {
		t.Errorf("Node, Nodes = %q, %q", n, ns)
	}
	if s := h.Session(); s.Valid() || s.ID() != 0 {
		t.Errorf("Session = %#x, valid %v; want the zero Session: the members do not report one", s.ID(), s.Valid())
	}
	lost := h.Lost()
	if lost != h.Lost() {
		t.Error("Lost returns another channel on the second call")
	}
	select {
	case <-lost:
		t.Fatal("Lost closed before any lock was lost")
	default:
	}
	close(fs[2].lost) // the last lock is lost
	select {
	case <-lost:
	case <-time.After(10 * time.Second):
		t.Fatal("Lost did not close when one lock was lost")
	}
	if err := h.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(t.Context()); !errors.Is(err, ErrNotOwner) {
		t.Errorf("second Release = %v, want ErrNotOwner", err)
	}
	if _, err := h.FencingToken(); !errors.Is(err, ErrNotOwner) {
		t.Errorf("FencingToken after Release = %v, want ErrNotOwner", err)
	}
	if _, err := h.FencingTokens(); !errors.Is(err, ErrNotOwner) {
		t.Errorf("FencingTokens after Release = %v, want ErrNotOwner", err)
	}
}

func TestHold_ReleaseEndsTheWatch(t *testing.T) {
	var log []string
	fs := fakes(&log, "a", "b")
	m, _ := New(lockers(fs)...)
	h, err := m.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	_ = h.Lost()
	if err := h.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after the release, %d before the watch", n, before)
	}
}

func TestHold_Zero(t *testing.T) {
	for name, h := range map[string]*Hold{"nil": nil, "zero": {}} {
		select {
		case <-h.Lost():
		default:
			t.Errorf("%s Hold: Lost is not closed", name)
		}
		if _, err := h.FencingToken(); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%s Hold: FencingToken = %v", name, err)
		}
		if _, err := h.FencingTokens(); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%s Hold: FencingTokens = %v", name, err)
		}
		if err := h.Release(t.Context()); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%s Hold: Release = %v", name, err)
		}
		if h.Node() != "" || len(h.Nodes()) != 0 {
			t.Errorf("%s Hold: Node %q, Nodes %q", name, h.Node(), h.Nodes())
		}
		if h.Session().Valid() {
			t.Errorf("%s Hold: Session is valid", name)
		}
	}
}
