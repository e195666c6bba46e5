package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/leaderselector"
)

// TestLeaderSelector_LeaderContextSaysWhy: the leader function's ctx ends
// with a cause that says why (issue 26: it ended with context.Canceled
// whatever the reason): interrupted, closed, or the leadership lost with
// a Suspended connection; and a deleted leader node.
func TestLeaderSelector_LeaderContextSaysWhy(t *testing.T) {
	type run struct {
		name string
		end  func(t *testing.T, s *leaderselector.Selector, proxy interface{ Reset() }, l *leaderselector.Leadership, c *framework.Client)
		want error
	}
	for _, r := range []run{
		{"interrupt", func(t *testing.T, s *leaderselector.Selector, _ interface{ Reset() }, _ *leaderselector.Leadership, _ *framework.Client) {
			s.InterruptLeadership()
		}, leaderselector.ErrInterrupted},
		{"close", func(t *testing.T, s *leaderselector.Selector, _ interface{ Reset() }, _ *leaderselector.Leadership, _ *framework.Client) {
			go s.Close(context.Background())
		}, leaderselector.ErrClosed},
		{"suspended", func(t *testing.T, _ *leaderselector.Selector, proxy interface{ Reset() }, _ *leaderselector.Leadership, _ *framework.Client) {
			proxy.Reset()
		}, leaderselector.ErrSessionLost},
		{"node deleted", func(t *testing.T, _ *leaderselector.Selector, _ interface{ Reset() }, l *leaderselector.Leadership, other *framework.Client) {
			if err := other.Delete().ForPath(t.Context(), l.Node()); err != nil {
				t.Fatal(err)
			}
		}, leaderselector.ErrLeaderNodeDeleted},
	} {
		t.Run(r.name, func(t *testing.T) {
			path := testPath(t)
			// A Suspended ends a leadership under the standard policy only.
			c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder {
				return b.ConnectionStateErrorPolicy(framework.StandardErrorPolicy)
			})
			other := newClient(t)
			leading, causes := make(chan *leaderselector.Leadership, 1), make(chan error, 1)
			s := newSelector(t, c, path, func(ctx context.Context, l *leaderselector.Leadership) error {
				leading <- l
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return nil
			})
			startSelector(t, s)
			l := recv(t, leading, 10*time.Second, "leads")
			r.end(t, s, proxy, l, other)
			if got := recv(t, causes, 15*time.Second, "the function's ctx ends"); !errors.Is(got, r.want) {
				t.Fatalf("context.Cause = %v, want %v", got, r.want)
			}
			eventually(t, 15*time.Second, func() bool { return isClosed(l.Lost()) }, "the leadership ends")
			if got := l.Cause(); !errors.Is(got, r.want) && r.name != "interrupt" {
				t.Errorf("Leadership.Cause = %v, want %v", got, r.want)
			}
		})
	}
}
