package integration

import (
	"context"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/leaderlatch"
	"github.com/go-curator/curator/recipes/leaderselector"
	"github.com/go-curator/curator/zktest"
)

// Issue 24, item 3: a leader publishes its leadership, then sets a watch
// on its own node with a GetData. If the connection drops during that
// GetData, the leadership's Lost() must still follow the client's state
// (Suspended under the standard policy) and session (Lost under the
// session policy), not wait for the retry loop to give up on the read.
//
// The proxy loses the reply to the first GetData after the candidate
// starts (the leader's own watch: a lone candidate leads on its first
// children read and reads no other node) and refuses every new
// connection, so the client stays disconnected and the read sits in the
// retry loop for its connection timeout times the policy's retries.

// holdsLeader is one leader recipe under test: start begins a lone
// candidate and returns a channel that receives each published
// leadership's view.
type holdsLeader struct {
	name  string
	start func(t *testing.T, c *framework.Client, path string) <-chan holdsTerm
}

// holdsTerm is what the test watches of a published leadership.
type holdsTerm struct {
	lost  <-chan struct{}
	leads func() bool     // the recipe's own report, e.g. HasLeadership
	fnCtx <-chan struct{} // the selector's leader function ctx, or nil
}

var holdsLeaders = []holdsLeader{
	{"Latch", func(t *testing.T, c *framework.Client, path string) <-chan holdsTerm {
		terms := make(chan holdsTerm, 8)
		l := newLatch(t, c, path)
		l.AddListener(leaderlatch.Listener{IsLeader: func(ld *leaderlatch.Leadership) {
			terms <- holdsTerm{lost: ld.Lost(), leads: l.HasLeadership}
		}})
		if err := l.Start(t.Context()); err != nil {
			t.Fatalf("latch Start: %v", err)
		}
		return terms
	}},
	{"Election", func(t *testing.T, c *framework.Client, path string) <-chan holdsTerm {
		terms := make(chan holdsTerm, 1)
		e := newElection(t, c, path)
		ld, err := e.Campaign(t.Context())
		if err != nil {
			t.Fatalf("Campaign: %v", err)
		}
		terms <- holdsTerm{lost: ld.Lost(), leads: func() bool { return !isClosed(ld.Lost()) }}
		return terms
	}},
	{"Selector", func(t *testing.T, c *framework.Client, path string) <-chan holdsTerm {
		terms := make(chan holdsTerm, 8)
		var s *leaderselector.Selector
		s = newSelector(t, c, path, func(ctx context.Context, ld *leaderselector.Leadership) error {
			terms <- holdsTerm{lost: ld.Lost(), leads: s.HasLeadership, fnCtx: ctx.Done()}
			<-ctx.Done()
			return nil
		})
		if err := s.Start(t.Context()); err != nil {
			t.Fatalf("selector Start: %v", err)
		}
		return terms
	}},
}

// TestHoldsLoss_LeadershipLostWhileOwnWatchIsSet: under the standard
// policy the published leadership's Lost() closes while the client is
// Suspended, before it can report Lost; under the session policy it closes
// when the client reports Lost, while the read would still be retried.
func TestHoldsLoss_LeadershipLostWhileOwnWatchIsSet(t *testing.T) {
	policies := []struct {
		name    string
		policy  framework.ErrorPolicy
		session time.Duration // requested session timeout
		want    framework.ConnectionState
	}{
		// 10 s (the harness's maximum) keeps the client Suspended for 9 s
		// before its simulated expiry: Lost() must close well before.
		{"Standard", framework.StandardErrorPolicy, 10 * time.Second, framework.Suspended},
		{"Session", framework.SessionErrorPolicy, testSessionTimeout, framework.Lost},
	}
	for _, pol := range policies {
		for _, kind := range holdsLeaders {
			t.Run(pol.name+"/"+kind.name, func(t *testing.T) {
				faultsNoLeaks(t)
				path := testPath(t) + "/election"
				obs := newClient(t)
				c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder {
					return b.ConnectionStateErrorPolicy(pol.policy).SessionTimeout(pol.session)
				})
				t.Cleanup(func() { deleteTree(t, obs, testPath(t)) })
				proxy.LoseNextReply(zktest.OpGetData)
				proxy.Refuse(true)
				terms := kind.start(t, c, path)
				t.Cleanup(func() { proxy.Refuse(false) }) // before the candidate closes

				var term holdsTerm
				select {
				case term = <-terms:
				case <-time.After(15 * time.Second):
					t.Fatal("no leadership published")
				}
				eventually(t, 10*time.Second, func() bool { return proxy.LostReplies() == 1 },
					"the reply to the leader's own GetData is lost")
				// The bound is short of the client's Lost under the standard
				// policy (9 s after the cut) and far short of the read's
				// retries under both (11 tries of 3 s).
				bound := 6 * time.Second
				if pol.policy == framework.SessionErrorPolicy {
					bound = 15 * time.Second
				}
				select {
				case <-term.lost:
				case <-time.After(bound):
					t.Fatalf("the leadership's Lost() is still open %v after the cut; client %v", bound, c.State())
				}
				if st := c.State(); st != pol.want {
					t.Fatalf("Lost() closed while the client is %v, want %v", st, pol.want)
				}
				eventually(t, 5*time.Second, func() bool { return !term.leads() }, "the recipe reports no leadership")
				if term.fnCtx != nil {
					eventually(t, 5*time.Second, func() bool { return isClosed(term.fnCtx) }, "the leader function's ctx is done")
				}

				// Let the client back in: the candidate's nodes go with its
				// Close, whichever session made them.
				proxy.Refuse(false)
				if err := c.BlockUntilConnected(t.Context()); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
