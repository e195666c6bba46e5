package leaderselector

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
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

func noop(ctx context.Context, _ *Leadership) error { <-ctx.Done(); return nil }

func TestNew_RejectsBadInput(t *testing.T) {
	c := unstarted(t)
	big := strings.Repeat("x", MaxIDSize+1)
	tests := []struct {
		name   string
		client *framework.Client
		path   string
		fn     func(context.Context, *Leadership) error
		opts   []Option
		want   []error
	}{
		{"nil client", nil, "/e", noop, nil, []error{ErrInvalidArgument, framework.ErrNilClient}},
		{"empty path", c, "", noop, nil, []error{ErrInvalidArgument, framework.ErrInvalidPath}},
		{"relative path", c, "e", noop, nil, []error{ErrInvalidArgument, framework.ErrInvalidPath}},
		{"trailing slash", c, "/e/", noop, nil, []error{ErrInvalidArgument, framework.ErrInvalidPath}},
		{"dot segment", c, "/a/./e", noop, nil, []error{ErrInvalidArgument, framework.ErrInvalidPath}},
		{"NUL", c, "/a\x00e", noop, nil, []error{ErrInvalidArgument, framework.ErrInvalidPath}},
		{"nil function", c, "/e", nil, nil, []error{ErrInvalidArgument}},
		{"nil option", c, "/e", noop, []Option{nil}, []error{ErrInvalidArgument}},
		{"ID over the node size limit", c, "/e", noop, []Option{WithID(big)}, []error{ErrInvalidArgument}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(tt.client, tt.path, tt.fn, tt.opts...)
			if s != nil || err == nil {
				t.Fatalf("New = %v, %v; want an error", s, err)
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("New error %q does not match %v", err, w)
				}
			}
			if n := strings.Count(err.Error(), "leaderselector:"); n != 1 {
				t.Errorf("New error %q carries the package prefix %d times, want once", err, n)
			}
			if tt.fn == nil {
				return
			}
			e, err := NewElection(tt.client, tt.path, tt.opts...)
			if e != nil || err == nil {
				t.Fatalf("NewElection = %v, %v; want an error", e, err)
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("NewElection error %q does not match %v", err, w)
				}
			}
		})
	}
	if _, err := NewElection(c, "/e", WithAutoRequeue()); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewElection(WithAutoRequeue) = %v, want ErrInvalidArgument", err)
	}
	if _, err := New(c, "/e", noop, WithID(strings.Repeat("x", MaxIDSize))); err != nil {
		t.Errorf("New with an ID of MaxIDSize bytes: %v", err)
	}
}

func TestDefaultData_WithoutID(t *testing.T) {
	c := unstarted(t)
	e, err := NewElection(c, "/e")
	if err != nil {
		t.Fatal(err)
	}
	if string(e.data) != string(c.DefaultData()) {
		t.Errorf("node data without an ID = %q, want the client's default data %q", e.data, c.DefaultData())
	}
	e, _ = NewElection(c, "/e", WithID("host-a"))
	if string(e.data) != "host-a" {
		t.Errorf("node data = %q, want the ID", e.data)
	}
}

func TestLifecycle_NoServer(t *testing.T) {
	ctx := context.Background()
	c := unstarted(t)
	t.Run("selector on a client that is not started", func(t *testing.T) {
		s, _ := New(c, "/e", noop)
		if ok, err := s.Requeue(); ok || !errors.Is(err, ErrNotStarted) {
			t.Errorf("Requeue before Start = %v, %v; want ErrNotStarted", ok, err)
		}
		if err := s.Start(ctx); !errors.Is(err, framework.ErrNotStarted) {
			t.Fatalf("Start = %v, want framework.ErrNotStarted", err)
		}
		if err := s.Start(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Start after a failed Start = %v, want ErrClosed", err)
		}
	})
	t.Run("use after close", func(t *testing.T) {
		s, _ := New(c, "/e", noop)
		if err := s.Close(ctx); err != nil {
			t.Fatalf("Close = %v", err)
		}
		if err := s.Close(ctx); err != nil {
			t.Errorf("second Close = %v", err)
		}
		if err := s.Start(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Start = %v, want ErrClosed", err)
		}
		if _, err := s.Requeue(); !errors.Is(err, ErrClosed) {
			t.Errorf("Requeue = %v, want ErrClosed", err)
		}
		if _, err := s.Participants(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Participants = %v, want ErrClosed", err)
		}
		if _, ok := <-s.Observe(ctx); ok {
			t.Error("Observe after Close sent a value")
		}
		e, _ := NewElection(c, "/e")
		e.Close(ctx)
		if _, err := e.Campaign(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Campaign = %v, want ErrClosed", err)
		}
		if err := e.Resign(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Resign = %v, want ErrClosed", err)
		}
		if _, err := e.Leader(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Leader = %v, want ErrClosed", err)
		}
	})
	t.Run("resign without leading", func(t *testing.T) {
		e, _ := NewElection(c, "/e")
		defer e.Close(ctx)
		if err := e.Resign(ctx); !errors.Is(err, ErrNotLeader) {
			t.Errorf("Resign = %v, want ErrNotLeader", err)
		}
	})
	t.Run("nil and done contexts", func(t *testing.T) {
		e, _ := NewElection(c, "/e")
		defer e.Close(ctx)
		var nilCtx context.Context // a variable, so that vet does not object to a literal nil
		if _, err := e.Campaign(nilCtx); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Campaign(nil) = %v, want ErrInvalidArgument", err)
		}
		done, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := e.Campaign(done); !errors.Is(err, context.Canceled) {
			t.Errorf("Campaign(done) = %v, want context.Canceled", err)
		}
		if _, ok := <-e.Observe(nilCtx); ok {
			t.Error("Observe(nil) sent a value")
		}
	})
}

func TestZeroAndNil_NoPanic(t *testing.T) {
	ctx := context.Background()
	var nilSel *Selector
	for name, s := range map[string]*Selector{"nil": nilSel, "zero": {}} {
		t.Run("selector "+name, func(t *testing.T) {
			if err := s.Start(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Start = %v", err)
			}
			if _, err := s.Requeue(); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Requeue = %v", err)
			}
			if err := s.Close(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Close = %v", err)
			}
			if s.HasLeadership() {
				t.Error("HasLeadership = true")
			}
			s.InterruptLeadership()
			if _, ok := <-s.Observe(ctx); ok {
				t.Error("Observe sent a value")
			}
		})
	}
	var nilEl *Election
	for name, e := range map[string]*Election{"nil": nilEl, "zero": {}} {
		t.Run("election "+name, func(t *testing.T) {
			if _, err := e.Campaign(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Campaign = %v", err)
			}
			if err := e.Resign(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Resign = %v", err)
			}
			if err := e.Close(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Close = %v", err)
			}
			if _, ok := <-e.Observe(ctx); ok {
				t.Error("Observe sent a value")
			}
		})
	}
	var nilLd *Leadership
	for _, ld := range []*Leadership{nilLd, {}} {
		if !chans.IsClosed(ld.Lost()) {
			t.Error("Lost() of a nil or zero Leadership is open")
		}
		if _, err := ld.FencingToken(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("FencingToken = %v", err)
		}
		if err := ld.Release(ctx); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Release = %v", err)
		}
	}
}
