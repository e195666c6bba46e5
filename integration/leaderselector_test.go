package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/leaderselector"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// newSelector makes a selector; the cleanup closes it.
func newSelector(t testing.TB, c *framework.Client, path string, fn func(context.Context, *leaderselector.Leadership) error, opts ...leaderselector.Option) *leaderselector.Selector {
	t.Helper()
	s, err := leaderselector.New(c, path, fn, opts...)
	if err != nil {
		t.Fatalf("leaderselector.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Close(ctx)
	})
	return s
}

// newElection makes an election; the cleanup closes it.
func newElection(t testing.TB, c *framework.Client, path string, opts ...leaderselector.Option) *leaderselector.Election {
	t.Helper()
	e, err := leaderselector.NewElection(c, path, opts...)
	if err != nil {
		t.Fatalf("leaderselector.NewElection: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.Close(ctx)
	})
	return e
}

func startSelector(t testing.TB, s *leaderselector.Selector) {
	t.Helper()
	if err := s.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
}

// recv waits for a value on ch, failing the test after d.
func recv[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("not within %v: %s", d, what)
		var zero T
		return zero
	}
}

// TestLeaderSelector_RotatingLeadership ports Curator's
// testRotatingLeadership: five selectors lead one after the other, each
// once per round, over three rounds of Requeue.
func TestLeaderSelector_RotatingLeadership(t *testing.T) {
	const n, rounds = 5, 3
	path := testPath(t)
	c := newClient(t)
	led := make(chan int, n*rounds)
	var sels []*leaderselector.Selector
	for i := range n {
		sels = append(sels, newSelector(t, c, path, func(ctx context.Context, _ *leaderselector.Leadership) error {
			time.Sleep(20 * time.Millisecond)
			led <- i
			return nil
		}))
	}
	for r := range rounds {
		for _, s := range sels {
			if r == 0 {
				startSelector(t, s)
			} else if ok, err := s.Requeue(); !ok || err != nil {
				t.Fatalf("round %d: Requeue = %v, %v", r+1, ok, err)
			}
		}
		seen := map[int]bool{}
		for range n {
			i := recv(t, led, 10*time.Second, fmt.Sprintf("round %d: a leader", r+1))
			if seen[i] {
				t.Errorf("round %d: selector %d led twice", r+1, i)
			}
			seen[i] = true
		}
		eventually(t, 5*time.Second, func() bool { return len(children(t, c, path)) == 0 }, "the round's nodes are gone")
	}
}

// TestLeaderSelector_AutoRequeue ports Curator's testAutoRequeue: with
// WithAutoRequeue the function runs again after it returns.
func TestLeaderSelector_AutoRequeue(t *testing.T) {
	c := newClient(t)
	runs := make(chan struct{}, 10)
	s := newSelector(t, c, testPath(t), func(ctx context.Context, _ *leaderselector.Leadership) error {
		time.Sleep(10 * time.Millisecond)
		select {
		case runs <- struct{}{}:
		default:
		}
		return nil
	}, leaderselector.WithAutoRequeue())
	startSelector(t, s)
	recv(t, runs, 10*time.Second, "first run")
	recv(t, runs, 10*time.Second, "second run")
	if ok, err := s.Requeue(); ok || err != nil {
		t.Errorf("Requeue of an auto-requeued selector = %v, %v; want false (already queued)", ok, err)
	}
}

// TestLeaderSelector_InterruptLeadership ports Curator's
// testInterruptLeadership and testInterruptLeadershipWithRequeue: the
// function's ctx is cancelled; without AutoRequeue the selector leaves the
// line, with it the selector leads again.
func TestLeaderSelector_InterruptLeadership(t *testing.T) {
	for _, requeue := range []bool{false, true} {
		t.Run(fmt.Sprintf("requeue=%v", requeue), func(t *testing.T) {
			path := testPath(t)
			c := newClient(t)
			leading, ended := make(chan struct{}, 2), make(chan error, 2)
			var opts []leaderselector.Option
			if requeue {
				opts = append(opts, leaderselector.WithAutoRequeue())
			}
			s := newSelector(t, c, path, func(ctx context.Context, _ *leaderselector.Leadership) error {
				leading <- struct{}{}
				<-ctx.Done()
				ended <- ctx.Err()
				return ctx.Err()
			}, opts...)
			startSelector(t, s)
			recv(t, leading, 10*time.Second, "leads")
			if !s.HasLeadership() {
				t.Error("HasLeadership = false while the function runs")
			}
			s.InterruptLeadership()
			if err := recv(t, ended, 10*time.Second, "the function ends"); !errors.Is(err, context.Canceled) {
				t.Errorf("function's ctx error = %v, want Canceled", err)
			}
			if requeue {
				recv(t, leading, 10*time.Second, "leads again")
				return
			}
			eventually(t, 5*time.Second, func() bool { return !s.HasLeadership() && len(children(t, c, path)) == 0 }, "out of line")
		})
	}
}

// TestLeaderSelector_ClosingHandsOver ports Curator's testClosing: closing
// the waiting selector leaves the leader leading; closing the leader ends
// its leadership and leaves no node.
func TestLeaderSelector_ClosingHandsOver(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	fn := func(ctx context.Context, _ *leaderselector.Leadership) error { <-ctx.Done(); return nil }
	s1, s2 := newSelector(t, c, path, fn), newSelector(t, c, path, fn)
	startSelector(t, s1)
	startSelector(t, s2)
	eventually(t, 10*time.Second, func() bool { return s1.HasLeadership() != s2.HasLeadership() }, "exactly one leads")
	leader, other := s1, s2
	if s2.HasLeadership() {
		leader, other = s2, s1
	}
	if err := other.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if !leader.HasLeadership() || other.HasLeadership() {
		t.Error("closing the waiting selector moved the leadership")
	}
	if err := leader.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if leader.HasLeadership() {
		t.Error("the closed leader reports leading")
	}
	if kids := children(t, c, path); len(kids) != 0 {
		t.Errorf("nodes left: %v", kids)
	}
}

// TestLeaderSelector_Participants ports Curator's
// TestLeaderSelectorParticipants: every candidate sees the others' IDs in
// line order with the leader first; a selector without an ID shows the
// client's default data, as Curator's does.
func TestLeaderSelector_Participants(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	fn := func(ctx context.Context, _ *leaderselector.Leadership) error {
		select {
		case <-hold:
		case <-ctx.Done():
		}
		return nil
	}
	var sels []*leaderselector.Selector
	for i, id := range []string{"s0", "s1", ""} {
		var opts []leaderselector.Option
		if id != "" {
			opts = append(opts, leaderselector.WithID(id))
		}
		s := newSelector(t, newClient(t), path, fn, opts...)
		startSelector(t, s)
		eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == i+1 }, "queued")
		sels = append(sels, s)
	}
	want := fmt.Sprintf("s0=true s1=false %s=false", c.DefaultData())
	for _, s := range sels {
		ps, err := s.Participants(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, fmt.Sprintf("%s=%v", p.ID, p.IsLeader))
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("Participants = %q, want %q", g, want)
		}
		if p, err := s.Leader(t.Context()); err != nil || p.ID != "s0" || !p.IsLeader {
			t.Errorf("Leader = %+v, %v; want s0", p, err)
		}
	}
	e := newElection(t, c, path+"-none")
	if _, err := e.Leader(t.Context()); !errors.Is(err, leaderselector.ErrNoLeader) {
		t.Errorf("Leader of an uncreated election = %v, want ErrNoLeader", err)
	}
}

// TestLeaderSelector_ErrorPolicies ports Curator's testErrorPolicies and
// testLeaderNodeDeleteOnInterrupt: under the standard policy a dropped
// connection cancels the function's ctx, and once the connection is back
// the leader's node is gone (no AutoRequeue: out of line); under the
// session policy a dropped connection that comes back in time changes
// nothing.
func TestLeaderSelector_ErrorPolicies(t *testing.T) {
	for _, policy := range []framework.ErrorPolicy{framework.StandardErrorPolicy, framework.SessionErrorPolicy} {
		name := map[framework.ErrorPolicy]string{framework.StandardErrorPolicy: "standard", framework.SessionErrorPolicy: "session"}[policy]
		t.Run(name, func(t *testing.T) {
			path := testPath(t)
			var log stateLog
			c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder {
				return b.ConnectionStateErrorPolicy(policy).Listener(log.listen)
			})
			obs := newClient(t)
			leading, released := make(chan *leaderselector.Leadership, 1), make(chan struct{}, 1)
			s := newSelector(t, c, path, func(ctx context.Context, l *leaderselector.Leadership) error {
				leading <- l
				<-ctx.Done()
				released <- struct{}{}
				return nil
			})
			startSelector(t, s)
			l := recv(t, leading, 10*time.Second, "leads")
			cutAndRestore(t, proxy, &log)
			if policy == framework.SessionErrorPolicy {
				time.Sleep(200 * time.Millisecond)
				if isClosed(l.Lost()) || !s.HasLeadership() || len(released) != 0 {
					t.Error("session policy, connection back in time: the leadership ended")
				}
				return
			}
			recv(t, released, 10*time.Second, "the function's ctx is cancelled")
			if !isClosed(l.Lost()) {
				t.Error("standard policy: the leadership's Lost() is open after Suspended")
			}
			eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path)) == 0 }, "the leader's node is deleted")
		})
	}
}

// TestLeaderSelector_KillSessionThenCloseElectsNewLeader ports Curator's
// test of the same name: two selectors on one client, whose session
// expires; both functions end, both requeue, one leads, and when it
// closes the other leads.
func TestLeaderSelector_KillSessionThenCloseElectsNewLeader(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	var leaders atomic.Int32
	leading, interrupted := make(chan struct{}, 4), make(chan struct{}, 4)
	fn := func(ctx context.Context, _ *leaderselector.Leadership) error {
		if leaders.Add(1) != 1 {
			t.Error("two selectors lead at once")
		}
		defer leaders.Add(-1)
		leading <- struct{}{}
		<-ctx.Done()
		interrupted <- struct{}{}
		return nil
	}
	s1, s2 := newSelector(t, c, path, fn), newSelector(t, c, path, fn)
	startSelector(t, s1)
	startSelector(t, s2)
	recv(t, leading, 10*time.Second, "one leads")
	if err := zktest.ExpireSession(t.Context(), zktest.Shared(t).ConnectString(), c.ZooKeeper()); err != nil && !errors.Is(err, zk.ErrSessionExpired) {
		t.Fatal(err)
	}
	recv(t, interrupted, 10*time.Second, "the leader's function ends")
	// The leader's turn ends with its function, so its Requeue queues it
	// (true) and later ones find it queued (false); the waiter never left
	// the line (its campaign starts again on the new session), so its
	// Requeue reports false throughout.
	eventually(t, 15*time.Second, func() bool {
		ok1, err1 := s1.Requeue()
		ok2, err2 := s2.Requeue()
		return err1 == nil && err2 == nil && !ok1 && !ok2 && c.State().IsConnected() && len(children(t, c, path)) == 2
	}, "both selectors requeued on the new session")
	recv(t, leading, 15*time.Second, "one leads again")
	first, second := s1, s2
	if s2.HasLeadership() {
		first, second = s2, s1
	}
	if err := first.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	recv(t, leading, 10*time.Second, "the other leads")
	if !second.HasLeadership() {
		t.Error("the remaining selector does not report leading")
	}
}

// TestLeaderSelector_LostCreateReply ports the idea of Curator's
// flappingTest (CURATOR-45): the reply to the lock node's create is lost
// with the connection. The selector still leads with exactly one node,
// leaves none when closed, and another selector can lead after it.
func TestLeaderSelector_LostCreateReply(t *testing.T) {
	path := testPath(t)
	c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b })
	obs := newClient(t)
	t.Cleanup(func() { deleteTree(t, obs, path) })
	if _, err := obs.Create().CreatingParentsIfNeeded().ForPath(t.Context(), path, nil); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	leading := make(chan struct{}, 2)
	fn := func(ctx context.Context, _ *leaderselector.Leadership) error {
		leading <- struct{}{}
		<-ctx.Done()
		return nil
	}
	s1 := newSelector(t, c, path, fn)
	proxy.LoseNextReply(zktest.OpCreate)
	startSelector(t, s1)
	recv(t, leading, 20*time.Second, "leads despite the lost reply")
	if proxy.LostReplies() != 1 {
		t.Errorf("%d replies lost, want 1", proxy.LostReplies())
	}
	if kids := children(t, obs, path); len(kids) != 1 {
		t.Errorf("nodes while leading: %v, want one", kids)
	}
	if err := s1.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	s2 := newSelector(t, obs, path, fn)
	startSelector(t, s2)
	recv(t, leading, 10*time.Second, "a new selector leads")
	if kids := children(t, obs, path); len(kids) != 1 {
		t.Errorf("nodes while the second leads: %v, want one", kids)
	}
}

// TestLeaderSelector_CloseAndTheLeaderFunction: Close from the leader
// function returns at once and the node goes when the function returns; a
// function that ignores its ctx keeps the leadership, and its node, until
// it returns, and Close says so when its ctx ends first.
func TestLeaderSelector_CloseAndTheLeaderFunction(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	var self *leaderselector.Selector
	closed := make(chan error, 1)
	self = newSelector(t, c, path+"/self", func(ctx context.Context, _ *leaderselector.Leadership) error {
		closed <- self.Close(ctx)
		return nil
	})
	startSelector(t, self)
	if err := recv(t, closed, 10*time.Second, "Close from the leader function returns"); err != nil {
		t.Errorf("Close from the leader function = %v", err)
	}
	eventually(t, 5*time.Second, func() bool { return len(children(t, c, path+"/self")) == 0 }, "its node goes")

	gate := make(chan struct{})
	leading := make(chan struct{}, 1)
	stubborn := newSelector(t, c, path+"/stubborn", func(ctx context.Context, _ *leaderselector.Leadership) error {
		leading <- struct{}{}
		<-gate // ignores ctx
		return nil
	})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	t.Cleanup(open) // before the selector's Close, should the test end early
	startSelector(t, stubborn)
	recv(t, leading, 10*time.Second, "leads")
	next := newSelector(t, newClient(t), path+"/stubborn", func(ctx context.Context, _ *leaderselector.Leadership) error {
		leading <- struct{}{}
		<-ctx.Done()
		return nil
	})
	startSelector(t, next)
	cctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	err := stubborn.Close(cctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close while the function ignores its ctx = %v, want DeadlineExceeded", err)
	}
	time.Sleep(100 * time.Millisecond)
	if len(leading) != 0 || len(children(t, c, path+"/stubborn")) != 2 {
		t.Fatal("the next selector was elected while the old function still ran")
	}
	open()
	recv(t, leading, 10*time.Second, "the next selector leads once the function returns")
	noStubborn := func() bool { return len(children(t, c, path+"/stubborn")) == 1 }
	eventually(t, 5*time.Second, noStubborn, "the old leader's node is gone")
}

// TestLeaderSelector_Campaign drives the etcd-shaped API: Campaign, a
// cancelled Campaign that leaves no node, Observe following the leader,
// Leader, Resign, and the misuses.
func TestLeaderSelector_Campaign(t *testing.T) {
	path := testPath(t)
	obs := newClient(t)
	ctx := t.Context()
	e1 := newElection(t, newClient(t), path, leaderselector.WithID("e1"))
	e2 := newElection(t, newClient(t), path, leaderselector.WithID("e2"))
	watcher := newElection(t, obs, path)
	octx, stopObserving := context.WithCancel(ctx)
	observed := watcher.Observe(octx)

	l1, err := e1.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := e1.Campaign(ctx); again != l1 || err != nil {
		t.Errorf("Campaign while leading = %v, %v; want the same leadership", again, err)
	}
	if info := recv(t, observed, 10*time.Second, "Observe reports e1"); info.ID != "e1" || info.Node != l1.Node() {
		t.Errorf("Observe = %+v, want e1 at %s", info, l1.Node())
	}
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	if _, err := e2.Campaign(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Campaign behind a leader = %v, want DeadlineExceeded", err)
	}
	cancel()
	if kids := children(t, obs, path); len(kids) != 1 {
		t.Errorf("nodes after the cancelled Campaign: %v, want only e1's", kids)
	}
	if err := e2.Resign(ctx); !errors.Is(err, leaderselector.ErrNotLeader) {
		t.Errorf("Resign without leading = %v, want ErrNotLeader", err)
	}

	won := make(chan *leaderselector.Leadership, 1)
	go func() {
		l, err := e2.Campaign(ctx)
		if err != nil {
			t.Errorf("e2 Campaign: %v", err)
		}
		won <- l
	}()
	eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path)) == 2 }, "e2 queued")
	if _, err := e2.Campaign(ctx); !errors.Is(err, leaderselector.ErrCampaigning) {
		t.Errorf("second Campaign while one waits = %v, want ErrCampaigning", err)
	}
	tok1, err := l1.FencingToken()
	if err != nil {
		t.Fatal(err)
	}
	if err := e1.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if !isClosed(l1.Lost()) {
		t.Error("Lost() is open after Resign")
	}
	l2 := recv(t, won, 10*time.Second, "e2 wins")
	tok2, err := l2.FencingToken()
	if err != nil || tok2 <= tok1 {
		t.Errorf("e2's token = %d, %v; want more than e1's %d", tok2, err, tok1)
	}
	if info := recv(t, observed, 10*time.Second, "Observe reports e2"); info.ID != "e2" {
		t.Errorf("Observe = %+v, want e2", info)
	}
	if p, err := e1.Leader(ctx); err != nil || p.ID != "e2" {
		t.Errorf("Leader = %+v, %v; want e2", p, err)
	}
	if err := l2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l2.Release(ctx); err != nil {
		t.Errorf("second Release = %v, want nil", err)
	}
	stopObserving()
	for range observed { // closed once ctx ends
	}
	if kids := children(t, obs, path); len(kids) != 0 {
		t.Errorf("nodes left: %v", kids)
	}
}

// TestLeaderSelector_BadInput: each misuse gets an error that says what is
// wrong, and leaves no node; after Close nothing of the recipe runs.
func TestLeaderSelector_BadInput(t *testing.T) {
	faultsNoLeaks(t)
	path := testPath(t)
	c := newClient(t)
	ctx := t.Context()
	fn := func(ctx context.Context, _ *leaderselector.Leadership) error { <-ctx.Done(); return nil }
	for _, tc := range []struct {
		name   string
		client *framework.Client
		path   string
		opts   []leaderselector.Option
		want   error
	}{
		{"empty path", c, "", nil, framework.ErrInvalidPath},
		{"relative path", c, "it/sel", nil, framework.ErrInvalidPath},
		{"nil client", nil, path, nil, framework.ErrNilClient},
		{"participant ID over the node size limit", c, path, []leaderselector.Option{leaderselector.WithID(strings.Repeat("x", leaderselector.MaxIDSize+1))}, leaderselector.ErrInvalidArgument},
	} {
		if s, err := leaderselector.New(tc.client, tc.path, fn, tc.opts...); s != nil || !errors.Is(err, tc.want) || !errors.Is(err, leaderselector.ErrInvalidArgument) {
			t.Errorf("%s: New = %v, %v; want %v", tc.name, s, err, tc.want)
		}
		if e, err := leaderselector.NewElection(tc.client, tc.path, tc.opts...); e != nil || !errors.Is(err, tc.want) {
			t.Errorf("%s: NewElection = %v, %v; want %v", tc.name, e, err, tc.want)
		}
	}

	var runs sync.WaitGroup
	runs.Add(1)
	s := newSelector(t, c, path, func(ctx context.Context, _ *leaderselector.Leadership) error {
		runs.Done()
		<-ctx.Done()
		return nil
	}, leaderselector.WithID(strings.Repeat("i", leaderselector.MaxIDSize)))
	startSelector(t, s)
	if err := s.Start(ctx); !errors.Is(err, leaderselector.ErrAlreadyStarted) {
		t.Errorf("second Start = %v, want ErrAlreadyStarted", err)
	}
	runs.Wait()
	if p, err := s.Leader(ctx); err != nil || len(p.ID) != leaderselector.MaxIDSize {
		t.Errorf("Leader with an ID of MaxIDSize bytes: %d bytes, %v", len(p.ID), err)
	}
	if kids := children(t, c, path); len(kids) != 1 {
		t.Errorf("nodes after Start twice: %v, want one", kids)
	}
	observed := s.Observe(ctx)
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for range observed { // Close ends every Observe
	}
	for what, err := range map[string]error{
		"Start":        s.Start(ctx),
		"Requeue":      second(s.Requeue()),
		"Participants": second(s.Participants(ctx)),
		"Leader":       second(s.Leader(ctx)),
	} {
		if !errors.Is(err, leaderselector.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", what, err)
		}
	}
	if kids := children(t, c, path); len(kids) != 0 {
		t.Errorf("nodes after Close: %v", kids)
	}
	noLeaderGoroutines(t)
}
