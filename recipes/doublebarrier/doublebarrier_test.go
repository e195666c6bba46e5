package doublebarrier

import (
	"context"
	"errors"
	"slices"
	"testing"

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
		qty    int
		also   error // a second sentinel the error must match, if any
	}{
		{"nil client", nil, "/b", 2, framework.ErrNilClient},
		{"empty path", c, "", 2, framework.ErrInvalidPath},
		{"relative path", c, "b", 2, framework.ErrInvalidPath},
		{"trailing slash", c, "/b/", 2, framework.ErrInvalidPath},
		{"double slash", c, "/a//b", 2, framework.ErrInvalidPath},
		{"dot-dot segment", c, "/a/../b", 2, framework.ErrInvalidPath},
		{"NUL", c, "/a\x00b", 2, framework.ErrInvalidPath},
		{"root", c, "/", 2, framework.ErrInvalidPath},
		{"zero members", c, "/b", 0, nil},
		{"negative members", c, "/b", -3, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := New(tt.client, tt.path, tt.qty)
			if b != nil || !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("New(%q, %d) = %v, %v; want nil, %v", tt.path, tt.qty, b, err, ErrInvalidArgument)
			}
			if tt.also != nil && !errors.Is(err, tt.also) {
				t.Fatalf("New(%q, %d) error %v does not match %v", tt.path, tt.qty, err, tt.also)
			}
		})
	}
}

func TestNew_Accepts(t *testing.T) {
	b, err := New(unstarted(t), "/jobs/batch", 1)
	if err != nil {
		t.Fatal(err)
	}
	if b.Path() != "/jobs/batch" || b.MemberQty() != 1 || b.readyPath != "/jobs/batch/ready" {
		t.Fatalf("New = path %q, qty %d, ready %q", b.Path(), b.MemberQty(), b.readyPath)
	}
}

func TestDoubleBarrier_UnusableClient(t *testing.T) {
	closed := unstarted(t)
	closed.Close()
	for _, tt := range []struct {
		name   string
		client *framework.Client
		want   error
	}{
		{"unstarted", unstarted(t), framework.ErrNotStarted},
		{"closed", closed, framework.ErrClosed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := New(tt.client, "/b", 2)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Enter(context.Background()); !errors.Is(err, tt.want) {
				t.Errorf("Enter = %v; want %v", err, tt.want)
			}
			if err := b.Leave(context.Background()); !errors.Is(err, tt.want) {
				t.Errorf("Leave = %v; want %v", err, tt.want)
			}
			if b.phase != idle || b.node != "" {
				t.Errorf("after failed calls: phase %d, node %q; want idle and no node", b.phase, b.node)
			}
		})
	}
}

func TestMembersOf(t *testing.T) {
	tests := []struct {
		kids, want []string
	}{
		{nil, []string{}},
		{[]string{"ready"}, []string{}},
		{[]string{"c", "ready", "a", "b"}, []string{"a", "b", "c"}},
		{[]string{"b", "a"}, []string{"a", "b"}},
	}
	for _, tt := range tests {
		if got := membersOf(tt.kids); !slices.Equal(got, tt.want) {
			t.Errorf("membersOf(%q) = %q; want %q", tt.kids, got, tt.want)
		}
	}
}
