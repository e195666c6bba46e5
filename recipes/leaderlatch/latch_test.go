package leaderlatch

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

func TestNew_RejectsBadInput(t *testing.T) {
	c := unstarted(t)
	tests := []struct {
		name   string
		client *framework.Client
		path   string
		opts   []Option
		want   []error
	}{
		{"nil client", nil, "/e", nil, []error{ErrInvalidArgument, framework.ErrNilClient}},
		{"empty path", c, "", nil, []error{ErrInvalidArgument, framework.ErrInvalidPath}},
		{"relative path", c, "e", nil, []error{ErrInvalidArgument, framework.ErrInvalidPath}},
		{"trailing slash", c, "/e/", nil, []error{ErrInvalidArgument, framework.ErrInvalidPath}},
		{"double slash", c, "/a//e", nil, []error{ErrInvalidArgument, framework.ErrInvalidPath}},
		{"dot-dot segment", c, "/a/../e", nil, []error{ErrInvalidArgument, framework.ErrInvalidPath}},
		{"control character", c, "/a\x01e", nil, []error{ErrInvalidArgument, framework.ErrInvalidPath}},
		{"nil option", c, "/e", []Option{nil}, []error{ErrInvalidArgument}},
		{"ID over the node size limit", c, "/e", []Option{WithID(strings.Repeat("x", MaxIDSize+1))}, []error{ErrInvalidArgument}},
		{"unknown close mode", c, "/e", []Option{WithCloseMode(CloseMode(7))}, []error{ErrInvalidArgument}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := New(tt.client, tt.path, tt.opts...)
			if l != nil || err == nil {
				t.Fatalf("New = %v, %v; want an error", l, err)
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("New error %q does not match %v", err, w)
				}
			}
			if n := strings.Count(err.Error(), "leaderlatch:"); n != 1 {
				t.Errorf("New error %q carries the package prefix %d times, want once", err, n)
			}
		})
	}
	if _, err := New(c, "/e", WithID(strings.Repeat("x", MaxIDSize))); err != nil {
		t.Errorf("New with an ID of MaxIDSize bytes: %v", err)
	}
}

func TestCloseMode_String(t *testing.T) {
	for m, want := range map[CloseMode]string{Silent: "SILENT", NotifyLeader: "NOTIFY_LEADER", 9: "CloseMode(9)"} {
		if got := m.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(m), got, want)
		}
	}
}

func TestLatch_Lifecycle_NoServer(t *testing.T) {
	ctx := context.Background()
	c := unstarted(t)

	t.Run("await before start", func(t *testing.T) {
		l, _ := New(c, "/e")
		if _, err := l.Await(ctx); !errors.Is(err, ErrNotStarted) {
			t.Errorf("Await = %v, want ErrNotStarted", err)
		}
	})
	t.Run("start on a client that is not started closes the latch", func(t *testing.T) {
		l, _ := New(c, "/e")
		if err := l.Start(ctx); !errors.Is(err, framework.ErrNotStarted) {
			t.Fatalf("Start = %v, want framework.ErrNotStarted", err)
		}
		if err := l.Start(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Start after a failed Start = %v, want ErrClosed", err)
		}
	})
	t.Run("start with a done ctx", func(t *testing.T) {
		l, _ := New(c, "/e")
		done, cancel := context.WithCancel(ctx)
		cancel()
		if err := l.Start(done); !errors.Is(err, context.Canceled) {
			t.Errorf("Start = %v, want context.Canceled", err)
		}
	})
	t.Run("use after close", func(t *testing.T) {
		l, _ := New(c, "/e")
		if err := l.Close(ctx); err != nil {
			t.Fatalf("Close of a latch never started = %v", err)
		}
		if err := l.Close(ctx); err != nil {
			t.Errorf("second Close = %v, want nil", err)
		}
		if err := l.Start(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Start = %v, want ErrClosed", err)
		}
		if _, err := l.Await(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Await = %v, want ErrClosed", err)
		}
		if _, err := l.Participants(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Participants = %v, want ErrClosed", err)
		}
		if _, err := l.Leader(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("Leader = %v, want ErrClosed", err)
		}
		if l.HasLeadership() || l.Leadership() != nil || l.Node() != "" {
			t.Error("a closed latch reports a leadership or a node")
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		l, _ := New(c, "/e")
		var nilCtx context.Context // a variable, so that vet does not object to a literal nil
		if err := l.Start(nilCtx); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Start(nil) = %v, want ErrInvalidArgument", err)
		}
		if err := l.CloseWith(ctx, CloseMode(5)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("CloseWith(bad mode) = %v, want ErrInvalidArgument", err)
		}
		if _, err := l.Await(nilCtx); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Await(nil) = %v, want ErrInvalidArgument", err)
		}
	})
}

func TestZeroAndNil_NoPanic(t *testing.T) {
	ctx := context.Background()
	var nilLatch *Latch
	var zero Latch
	for name, l := range map[string]*Latch{"nil": nilLatch, "zero": &zero} {
		t.Run(name, func(t *testing.T) {
			if err := l.Start(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Start = %v", err)
			}
			if _, err := l.Await(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Await = %v", err)
			}
			if err := l.Close(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Close = %v", err)
			}
			if _, err := l.Participants(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Participants = %v", err)
			}
			if l.HasLeadership() {
				t.Error("HasLeadership = true")
			}
			l.AddListener(Listener{})()
		})
	}
	var ld *Leadership
	var zl Leadership
	for _, x := range []*Leadership{ld, &zl} {
		if !chans.IsClosed(x.Lost()) {
			t.Error("Lost() of a nil or zero Leadership is open")
		}
		if _, err := x.FencingToken(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("FencingToken = %v", err)
		}
		if err := x.Release(ctx); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Release = %v", err)
		}
	}
}

// TestListener_OrderAndDrain: events come in the order posted, a finish
// delivers what is queued before the queue ends, and a stop delivers
// nothing more.
func TestListener_OrderAndDrain(t *testing.T) {
	var got []string
	ld := &Leadership{}
	release := make(chan struct{})
	q := newListener(Listener{
		IsLeader:  func(l *Leadership) { <-release; got = append(got, "leader") },
		NotLeader: func() { got = append(got, "not") },
	})
	for range 3 {
		q.Post(event{leadership: ld})
		q.Post(event{})
	}
	q.Finish()
	q.Post(event{leadership: ld}) // after finish: not queued
	close(release)
	<-q.Done()
	want := "leader not leader not leader not"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("delivered %q, want %q", s, want)
	}

	got = nil
	started := make(chan struct{})
	hold := make(chan struct{})
	q = newListener(Listener{
		IsLeader:  func(*Leadership) { close(started); <-hold },
		NotLeader: func() { got = append(got, "not") },
	})
	q.Post(event{leadership: ld})
	<-started
	q.Post(event{})
	q.Stop()
	close(hold)
	<-q.Done()
	if len(got) != 0 {
		t.Errorf("delivered %v after stop", got)
	}
}
