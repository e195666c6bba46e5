package multilock

import (
	"context"
	"errors"
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
}

func (f *fake) Acquire(context.Context) error {
	*f.log = append(*f.log, "acquire "+f.name)
	return f.acquireErr
}

func (f *fake) TryAcquire(_ context.Context, wait time.Duration) (bool, error) {
	*f.log = append(*f.log, "try "+f.name)
	if f.waits != nil {
		*f.waits = append(*f.waits, wait)
	}
	return !f.busy && f.acquireErr == nil, f.acquireErr
}

func (f *fake) Release(context.Context) error {
	*f.log = append(*f.log, "release "+f.name)
	return f.releaseErr
}

func fakes(log *[]string, names ...string) []*fake {
	fs := make([]*fake, len(names))
	for i, n := range names {
		fs[i] = &fake{name: n, log: log}
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
				if err := m.Acquire(ctx); err != nil {
					return err
				}
				return m.Release(ctx)
			},
			log: []string{"acquire a", "acquire b", "acquire c", "release c", "release b", "release a"},
		},
		{
			name:    "failed acquire releases the taken ones in reverse",
			setup:   func(fs []*fake) { fs[2].acquireErr = boom },
			run:     func(ctx context.Context, m *MultiLock) error { return m.Acquire(ctx) },
			log:     []string{"acquire a", "acquire b", "acquire c", "release b", "release a"},
			wantErr: boom,
		},
		{
			name:  "timed-out try releases the taken ones, no error",
			setup: func(fs []*fake) { fs[1].busy = true },
			run: func(ctx context.Context, m *MultiLock) error {
				if ok, err := m.TryAcquire(ctx, time.Second); ok || err != nil {
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
				_, err := m.TryAcquire(ctx, 0)
				return err
			},
			log:     []string{"try a", "try b", "release a"},
			wantErr: boom,
		},
		{
			name:  "release goes past a failure and returns it",
			setup: func(fs []*fake) { fs[1].releaseErr = boom },
			run: func(ctx context.Context, m *MultiLock) error {
				if err := m.Acquire(ctx); err != nil {
					return err
				}
				return m.Release(ctx)
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
			run:     func(ctx context.Context, m *MultiLock) error { return m.Acquire(ctx) },
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
	if ok, err := m.TryAcquire(t.Context(), time.Minute); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if len(waits) != 2 || waits[0] > time.Minute || waits[1] > waits[0] || waits[1] <= 0 {
		t.Fatalf("waits %v: each lock should get what is left of one minute", waits)
	}
	waits = nil
	if ok, err := m.TryAcquire(t.Context(), 0); !ok || err != nil {
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
	if _, err := m.TryAcquire(t.Context(), -time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("TryAcquire(-1s) = %v, want ErrInvalidArgument", err)
	}
	var zero *MultiLock
	if err := zero.Acquire(t.Context()); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil Acquire = %v", err)
	}
	if err := (&MultiLock{}).Release(t.Context()); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("zero Release = %v", err)
	}
	if len(log) != 0 {
		t.Errorf("bad input reached the locks: %v", log)
	}
}
