package semaphorev2

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
)

// unstarted returns a client that was built but never started: building
// does no I/O, so these tests need no server.
func unstarted(t *testing.T) *framework.Client {
	t.Helper()
	c, err := framework.NewBuilder().ConnectString("127.0.0.1:1").Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestNew_RejectsBadInput(t *testing.T) {
	c := unstarted(t)
	tests := []struct {
		name   string
		client *framework.Client
		path   string
		max    int
		opts   []Option
		want   error
	}{
		{"nil client", nil, "/s", 1, nil, framework.ErrNilClient},
		{"nil client, the package's sentinel", nil, "/s", 1, nil, ErrInvalidArgument},
		{"empty path, the package's sentinel", c, "", 1, nil, ErrInvalidArgument},
		{"empty path", c, "", 1, nil, framework.ErrInvalidPath},
		{"relative path", c, "s", 1, nil, framework.ErrInvalidPath},
		{"trailing slash", c, "/s/", 1, nil, framework.ErrInvalidPath},
		{"dot-dot segment", c, "/a/../s", 1, nil, framework.ErrInvalidPath},
		{"NUL", c, "/a\x00s", 1, nil, framework.ErrInvalidPath},
		{"zero leases", c, "/s", 0, nil, ErrInvalidArgument},
		{"negative leases", c, "/s", -3, nil, ErrInvalidArgument},
		{"nil option", c, "/s", 1, []Option{nil}, ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.client, tt.path, tt.max, tt.opts...)
			if !errors.Is(err, tt.want) || s != nil {
				t.Fatalf("New = %v, %v; want nil, %v", s, err, tt.want)
			}
		})
	}
	if _, err := NewWithCount(c, "/s", nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewWithCount(nil count) = %v, want ErrInvalidArgument", err)
	}
}

func TestNew_LayoutPaths(t *testing.T) {
	c := unstarted(t)
	for path, want := range map[string][2]string{
		"/s":   {"/s/locks", "/s/leases"},
		"/a/b": {"/a/b/locks", "/a/b/leases"},
		"/":    {"/locks", "/leases"},
	} {
		s, err := New(c, path, 2, WithData([]byte("x")))
		if err != nil {
			t.Fatal(err)
		}
		if s.locks != want[0] || s.leases != want[1] || string(s.data) != "x" || s.MaxLeases() != 2 {
			t.Errorf("New(%q): locks %q leases %q data %q max %d", path, s.locks, s.leases, s.data, s.MaxLeases())
		}
	}
}

func TestAcquire_BadInputBeforeIO(t *testing.T) {
	c := unstarted(t)
	s, err := New(c, "/s", 3)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.AcquireN(ctx, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("AcquireN(0) = %v, want ErrInvalidArgument", err)
	}
	if _, err := s.AcquireN(ctx, 4); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("AcquireN(4) with max 3 = %v, want ErrInvalidArgument", err)
	}
	if _, _, err := s.TryAcquire(ctx, -time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("TryAcquire(-1s) = %v, want ErrInvalidArgument", err)
	}
	if _, _, err := s.TryAcquireN(ctx, 1, -time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("TryAcquireN(-1s) = %v, want ErrInvalidArgument", err)
	}
	if _, err := s.Acquire(ctx); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Acquire on an unstarted client = %v, want ErrNotStarted", err)
	}
	var nilSem *Semaphore
	if _, err := nilSem.Acquire(ctx); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil Semaphore Acquire = %v, want ErrInvalidArgument", err)
	}
	if err := s.ReturnLease(ctx, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("ReturnLease(nil) = %v, want ErrInvalidArgument", err)
	}
	other, _ := New(c, "/other", 3)
	foreign := &Lease{client: c, sem: other.path, node: "/other/leases/x"}
	if err := s.ReturnLease(ctx, foreign); !errors.Is(err, ErrForeignLease) {
		t.Errorf("ReturnLease(foreign) = %v, want ErrForeignLease", err)
	}
	closed := &Lease{client: c, sem: s.path, node: "/s/leases/x"}
	closed.closed.Store(true)
	if err := s.ReturnLease(ctx, closed); !errors.Is(err, ErrNotOwner) {
		t.Errorf("ReturnLease(closed) = %v, want ErrNotOwner", err)
	}
	if err := closed.Close(ctx); err != nil {
		t.Errorf("closing a closed lease = %v, want nil", err)
	}
	if err := closed.Release(ctx); !errors.Is(err, ErrNotOwner) {
		t.Errorf("releasing a closed lease = %v, want ErrNotOwner", err)
	}
	if _, err := closed.FencingToken(); !errors.Is(err, ErrNotOwner) {
		t.Errorf("FencingToken of a closed lease = %v, want ErrNotOwner", err)
	}
	var nilLease *Lease
	if err := nilLease.Close(ctx); err != nil || nilLease.NodeName() != "" || nilLease.Node() != "" || nilLease.Session().Valid() {
		t.Error("a nil lease is not harmless")
	}
	if tok, err := nilLease.FencingToken(); tok != 0 || !errors.Is(err, ErrNotOwner) {
		t.Errorf("nil lease FencingToken = %d, %v; want 0, ErrNotOwner", tok, err)
	}
	select {
	case <-nilLease.Lost():
	default:
		t.Error("a nil lease's Lost() is not closed")
	}
}

func TestRank(t *testing.T) {
	const u = "_c_0c0d7614-f2c3-4dc7-81bb-0def2b4f685f-"
	kids := []string{u + "lease-0000000007", u + "lease-0000000003", u + "lease-0000000012", "stray"}
	tests := []struct {
		name  string
		ahead int
		found bool
	}{
		{u + "lease-0000000003", 1, true}, // only the stray node counts
		{u + "lease-0000000007", 2, true},
		{u + "lease-0000000012", 3, true},
		{u + "lease-0000000009", 3, false},
		{"stray", 3, true}, // a name without a sequence counts everything
	}
	for _, tt := range tests {
		ahead, found := rank(kids, tt.name)
		if ahead != tt.ahead || found != tt.found {
			t.Errorf("rank(%q) = %d, %v; want %d, %v", tt.name, ahead, found, tt.ahead, tt.found)
		}
	}
}
