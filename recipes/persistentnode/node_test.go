package persistentnode_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/persistentnode"
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
		data   []byte
		opts   []persistentnode.Option
		want   error
	}{
		{"nil client", nil, "/n", nil, nil, framework.ErrNilClient},
		{"empty path", c, "", nil, nil, framework.ErrInvalidPath},
		{"relative path", c, "n", nil, nil, framework.ErrInvalidPath},
		{"trailing slash", c, "/n/", nil, nil, framework.ErrInvalidPath},
		{"double slash", c, "/a//n", nil, nil, framework.ErrInvalidPath},
		{"dot-dot segment", c, "/a/../n", nil, nil, framework.ErrInvalidPath},
		{"NUL", c, "/a\x00n", nil, nil, framework.ErrInvalidPath},
		{"root", c, "/", nil, nil, framework.ErrInvalidPath},
		{"oversized data", c, "/n", make([]byte, persistentnode.MaxDataSize+1), nil, framework.ErrInvalidArgument},
		{"TTL mode", c, "/n", nil, []persistentnode.Option{persistentnode.WithMode(framework.PersistentWithTTL)}, framework.ErrInvalidArgument},
		{"unknown mode", c, "/n", nil, []persistentnode.Option{persistentnode.WithMode(42)}, framework.ErrInvalidArgument},
		{"nil option", c, "/n", nil, []persistentnode.Option{nil}, framework.ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := persistentnode.New(tt.client, tt.path, tt.data, tt.opts...)
			if n != nil || !errors.Is(err, persistentnode.ErrInvalidArgument) || !errors.Is(err, tt.want) {
				t.Fatalf("New(%q) = %v, %v; want nil and an error matching %v and %v",
					tt.path, n, err, persistentnode.ErrInvalidArgument, tt.want)
			}
		})
	}
}

func TestNewTTL_RejectsBadInput(t *testing.T) {
	c := unstarted(t)
	tests := []struct {
		name string
		ttl  time.Duration
		opts []persistentnode.TTLOption
		want error
	}{
		{"zero TTL", 0, nil, framework.ErrInvalidArgument},
		{"negative TTL", -time.Second, nil, framework.ErrInvalidArgument},
		{"TTL too long", framework.MaxTTL + time.Millisecond, nil, framework.ErrInvalidArgument},
		{"touch factor 0", time.Second, []persistentnode.TTLOption{persistentnode.WithTouchFactor(0)}, framework.ErrInvalidArgument},
		{"empty touch name", time.Second, []persistentnode.TTLOption{persistentnode.WithTouchName("")}, framework.ErrInvalidPath},
		{"touch name with a slash", time.Second, []persistentnode.TTLOption{persistentnode.WithTouchName("a/b")}, framework.ErrInvalidPath},
		{"touch name ..", time.Second, []persistentnode.TTLOption{persistentnode.WithTouchName("..")}, framework.ErrInvalidPath},
		{"nil option", time.Second, []persistentnode.TTLOption{nil}, framework.ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := persistentnode.NewTTL(c, "/n", tt.ttl, nil, tt.opts...)
			if n != nil || !errors.Is(err, persistentnode.ErrInvalidArgument) || !errors.Is(err, tt.want) {
				t.Fatalf("NewTTL = %v, %v; want nil and an error matching %v and %v",
					n, err, persistentnode.ErrInvalidArgument, tt.want)
			}
		})
	}
	if _, err := persistentnode.NewTTL(nil, "/n", time.Second, nil); !errors.Is(err, framework.ErrNilClient) {
		t.Errorf("NewTTL(nil client) = %v; want ErrNilClient", err)
	}
}

func TestNode_ZeroAndNilNeverPanic(t *testing.T) {
	ctx := t.Context()
	for _, n := range []*persistentnode.Node{nil, {}} {
		if err := n.Start(ctx); !errors.Is(err, persistentnode.ErrInvalidArgument) {
			t.Errorf("Start = %v", err)
		}
		if err := n.WaitForInitialCreate(ctx); !errors.Is(err, persistentnode.ErrInvalidArgument) {
			t.Errorf("WaitForInitialCreate = %v", err)
		}
		if p, ok := n.Path(); p != "" || ok {
			t.Errorf("Path = %q, %v", p, ok)
		}
		if d := n.Data(); d != nil {
			t.Errorf("Data = %q", d)
		}
		if err := n.SetData(ctx, nil); !errors.Is(err, persistentnode.ErrInvalidArgument) {
			t.Errorf("SetData = %v", err)
		}
		n.AddListener(func(persistentnode.Event) {})()
		if err := n.Close(ctx); !errors.Is(err, persistentnode.ErrInvalidArgument) {
			t.Errorf("Close = %v", err)
		}
	}
	for _, n := range []*persistentnode.TTLNode{nil, {}} {
		if err := n.Start(ctx); !errors.Is(err, persistentnode.ErrInvalidArgument) {
			t.Errorf("TTL Start = %v", err)
		}
		if err := n.WaitForInitialCreate(ctx); !errors.Is(err, persistentnode.ErrInvalidArgument) {
			t.Errorf("TTL WaitForInitialCreate = %v", err)
		}
		if p, ok := n.Path(); p != "" || ok {
			t.Errorf("TTL Path = %q, %v", p, ok)
		}
		if err := n.SetData(ctx, nil); !errors.Is(err, persistentnode.ErrInvalidArgument) {
			t.Errorf("TTL SetData = %v", err)
		}
		if err := n.Close(ctx); !errors.Is(err, persistentnode.ErrInvalidArgument) {
			t.Errorf("TTL Close = %v", err)
		}
	}
}

func TestNode_Lifecycle(t *testing.T) {
	c := unstarted(t)
	ctx := t.Context()
	n, err := persistentnode.New(c, "/n", []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(nil); !errors.Is(err, persistentnode.ErrInvalidArgument) { //nolint:staticcheck // nil ctx on purpose
		t.Errorf("Start(nil) = %v", err)
	}
	if err := n.Start(ctx); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Start on an unstarted client = %v; want framework.ErrNotStarted", err)
	}
	if err := n.WaitForInitialCreate(ctx); !errors.Is(err, persistentnode.ErrNotStarted) {
		t.Errorf("WaitForInitialCreate before Start = %v", err)
	}
	if err := n.SetData(ctx, []byte("b")); !errors.Is(err, persistentnode.ErrNotStarted) {
		t.Errorf("SetData before Start = %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := n.Start(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Start(done ctx) = %v", err)
	}
	if err := n.SetData(ctx, make([]byte, persistentnode.MaxDataSize+1)); !errors.Is(err, persistentnode.ErrInvalidArgument) {
		t.Errorf("SetData(oversized) = %v", err)
	}
	if got := string(n.Data()); got != "a" {
		t.Errorf("Data = %q", got)
	}
	if err := n.Close(ctx); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := n.Close(ctx); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := n.Start(ctx); !errors.Is(err, persistentnode.ErrClosed) {
		t.Errorf("Start after Close = %v", err)
	}
	if err := n.SetData(ctx, nil); !errors.Is(err, persistentnode.ErrClosed) {
		t.Errorf("SetData after Close = %v", err)
	}
	if err := n.WaitForInitialCreate(ctx); !errors.Is(err, persistentnode.ErrClosed) {
		t.Errorf("WaitForInitialCreate after Close = %v", err)
	}
}

func TestEventType_String(t *testing.T) {
	for typ, want := range map[persistentnode.EventType]string{
		persistentnode.Created: "CREATED", persistentnode.Gone: "GONE", 0: "UNKNOWN",
	} {
		if got := typ.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", typ, got, want)
		}
	}
}
