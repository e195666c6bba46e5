package barrier_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/barrier"
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
		want   error
	}{
		{"nil client", nil, "/b", framework.ErrNilClient},
		{"empty path", c, "", framework.ErrInvalidPath},
		{"relative path", c, "b", framework.ErrInvalidPath},
		{"trailing slash", c, "/b/", framework.ErrInvalidPath},
		{"double slash", c, "/a//b", framework.ErrInvalidPath},
		{"dot segment", c, "/a/./b", framework.ErrInvalidPath},
		{"dot-dot segment", c, "/a/../b", framework.ErrInvalidPath},
		{"NUL", c, "/a\x00b", framework.ErrInvalidPath},
		{"control character", c, "/a\nb", framework.ErrInvalidPath},
		{"root", c, "/", framework.ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := barrier.New(tt.client, tt.path)
			if b != nil || !errors.Is(err, barrier.ErrInvalidArgument) || !errors.Is(err, tt.want) {
				t.Fatalf("New(%q) = %v, %v; want nil and an error matching %v and %v",
					tt.path, b, err, barrier.ErrInvalidArgument, tt.want)
			}
		})
	}
}

func TestBarrier_UnusableClient(t *testing.T) {
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
			b, err := barrier.New(tt.client, "/b")
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for name, call := range map[string]func(context.Context) error{
				"Set": b.Set, "Remove": b.Remove, "Wait": b.Wait,
			} {
				if err := call(ctx); !errors.Is(err, tt.want) {
					t.Errorf("%s = %v; want %v", name, err, tt.want)
				}
			}
		})
	}
}
