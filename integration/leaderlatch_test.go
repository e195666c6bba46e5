package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/leaderlatch"
	"github.com/go-curator/curator/zktest"
)

// newLatch makes a latch; the cleanup closes it.
func newLatch(t testing.TB, c *framework.Client, path string, opts ...leaderlatch.Option) *leaderlatch.Latch {
	t.Helper()
	l, err := leaderlatch.New(c, path, opts...)
	if err != nil {
		t.Fatalf("leaderlatch.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l.Close(ctx)
	})
	return l
}

// startLatch makes and starts a latch.
func startLatch(t testing.TB, c *framework.Client, path string, opts ...leaderlatch.Option) *leaderlatch.Latch {
	t.Helper()
	l := newLatch(t, c, path, opts...)
	if err := l.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return l
}

// awaitLatch waits until l leads, failing the test after d.
func awaitLatch(t testing.TB, l *leaderlatch.Latch, d time.Duration) *leaderlatch.Leadership {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	ld, err := l.Await(ctx)
	if err != nil {
		t.Fatalf("Await (%s): %v", l.ID(), err)
	}
	return ld
}

// leaders returns the latches that report leading now.
func latchLeaders(ls []*leaderlatch.Latch) []*leaderlatch.Latch {
	var out []*leaderlatch.Latch
	for _, l := range ls {
		if l.HasLeadership() {
			out = append(out, l)
		}
	}
	return out
}

var latchNode = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-latch-\d{10}$`)

// TestLeaderLatch_LeadsInStartOrder is Curator's testBasic: candidates
// lead in the order they started, one at a time, and the leadership moves
// to the next when the leader closes; the old leader's Lost() has closed
// by the time the next one is elected.
func TestLeaderLatch_LeadsInStartOrder(t *testing.T) {
	path := testPath(t)
	obs := newClient(t)
	clients := []*framework.Client{newClient(t), newClient(t), newClient(t)}
	var latches []*leaderlatch.Latch
	for i := range 5 {
		latches = append(latches, startLatch(t, clients[i%3], path, leaderlatch.WithID(fmt.Sprintf("c%d", i))))
	}
	var prev *leaderlatch.Leadership
	var prevToken int64
	for i, l := range latches {
		ld := awaitLatch(t, l, 10*time.Second)
		if prev != nil && !isClosed(prev.Lost()) {
			t.Errorf("c%d was elected while c%d's Lost() was still open", i, i-1)
		}
		if got := latchLeaders(latches[i:]); len(got) != 1 || got[0] != l {
			t.Errorf("after c%d's election %d latches report leading", i, len(got))
		}
		tok, err := ld.FencingToken()
		if err != nil || tok <= prevToken {
			t.Errorf("c%d's fencing token = %d, %v; want more than %d", i, tok, err, prevToken)
		}
		_, name := framework.SplitPath(ld.Node())
		if !latchNode.MatchString(name) {
			t.Errorf("leader node %q does not have Curator's layout", name)
		}
		data, stat, err := obs.GetData().ForPath(t.Context(), ld.Node())
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != l.ID() || stat.EphemeralOwner != clients[i%3].SessionID() {
			t.Errorf("node data %q owner 0x%x; want %q of session 0x%x", data, stat.EphemeralOwner, l.ID(), clients[i%3].SessionID())
		}
		prev, prevToken = ld, tok
		if err := l.Close(t.Context()); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if l.HasLeadership() || !isClosed(ld.Lost()) {
			t.Errorf("c%d still reports leading after Close", i)
		}
	}
	eventually(t, 10*time.Second, func() bool {
		st, err := obs.CheckExists().ForPath(t.Context(), path)
		return err == nil && st == nil
	}, "the empty election's CONTAINER parent is reaped")
}

// latchEvents records a latch listener's calls, in order.
type latchEvents struct {
	mu  sync.Mutex
	got []string
}

func (e *latchEvents) listener() leaderlatch.Listener {
	return leaderlatch.Listener{
		IsLeader:  func(*leaderlatch.Leadership) { e.add("leader") },
		NotLeader: func() { e.add("not") },
	}
}

func (e *latchEvents) add(s string) {
	e.mu.Lock()
	e.got = append(e.got, s)
	e.mu.Unlock()
}

func (e *latchEvents) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.got, " ")
}

// TestLeaderLatch_ParticipantsAndLeader lists the candidates with their
// IDs in line order from every candidate, and reads the leader; an
// election that was never created has no leader (CURATOR-436: not a
// NoNode error) and no participants.
func TestLeaderLatch_ParticipantsAndLeader(t *testing.T) {
	path := testPath(t)
	c1, c2 := newClient(t), newClient(t)
	ctx := t.Context()
	idle := newLatch(t, c1, path)
	if _, err := idle.Leader(ctx); !errors.Is(err, leaderlatch.ErrNoLeader) {
		t.Errorf("Leader of an uncreated election = %v, want ErrNoLeader", err)
	}
	if ps, err := idle.Participants(ctx); err != nil || len(ps) != 0 {
		t.Errorf("Participants of an uncreated election = %v, %v; want none", ps, err)
	}
	var ls []*leaderlatch.Latch
	for i, c := range []*framework.Client{c1, c2, c1} {
		ls = append(ls, startLatch(t, c, path, leaderlatch.WithID(fmt.Sprintf("p%d", i))))
		eventually(t, 10*time.Second, func() bool { return len(children(t, c1, path)) == i+1 }, "queued")
	}
	ls = append(ls, startLatch(t, c2, path)) // no ID: empty data, as Curator
	eventually(t, 10*time.Second, func() bool { return len(children(t, c1, path)) == 4 }, "queued")
	awaitLatch(t, ls[0], 10*time.Second)
	want := "p0=true p1=false p2=false =false"
	for _, l := range append(ls, idle) {
		ps, err := l.Participants(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, fmt.Sprintf("%s=%v", p.ID, p.IsLeader))
		}
		if s := strings.Join(got, " "); s != want {
			t.Errorf("Participants from %q = %q, want %q", l.ID(), s, want)
		}
		if p, err := l.Leader(ctx); err != nil || p.ID != "p0" || !p.IsLeader || p.Node != ls[0].Node() {
			t.Errorf("Leader from %q = %+v, %v; want p0 at %s", l.ID(), p, err, ls[0].Node())
		}
	}
	if err := ls[0].Close(ctx); err != nil {
		t.Fatal(err)
	}
	awaitLatch(t, ls[1], 10*time.Second)
	if p, err := idle.Leader(ctx); err != nil || p.ID != "p1" {
		t.Errorf("Leader after p0 closed = %+v, %v; want p1", p, err)
	}
}

// TestLeaderLatch_CloseModes ports Curator's testCallbackDontNotify and the
// close-mode override: a Silent close tells the listeners nothing, a
// NotifyLeader close of a leader tells them NotLeader (delivered by the
// time Close returns), and closing a candidate that never led tells
// nothing in either mode.
func TestLeaderLatch_CloseModes(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	for _, tc := range []struct {
		name     string
		mode     leaderlatch.CloseMode
		override *leaderlatch.CloseMode
		want     string
	}{
		{"silent", leaderlatch.Silent, nil, "leader"},
		{"notify", leaderlatch.NotifyLeader, nil, "leader not"},
		{"silent overridden to notify", leaderlatch.Silent, ptr(leaderlatch.NotifyLeader), "leader not"},
		{"notify overridden to silent", leaderlatch.NotifyLeader, ptr(leaderlatch.Silent), "leader"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := testPath(t)
			var lead, wait latchEvents
			leader := newLatch(t, c, path, leaderlatch.WithCloseMode(tc.mode))
			leader.AddListener(lead.listener())
			if err := leader.Start(ctx); err != nil {
				t.Fatal(err)
			}
			awaitLatch(t, leader, 10*time.Second)
			waiter := newLatch(t, c, path, leaderlatch.WithCloseMode(leaderlatch.NotifyLeader))
			waiter.AddListener(wait.listener())
			if err := waiter.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if err := waiter.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if s := wait.String(); s != "" {
				t.Errorf("a candidate that never led was told %q on Close", s)
			}
			var err error
			if tc.override != nil {
				err = leader.CloseWith(ctx, *tc.override)
			} else {
				err = leader.Close(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := lead.String(); s != tc.want {
				t.Errorf("leader's listener heard %q by the time Close returned, want %q", s, tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestLeaderLatch_CallbackSanity ports Curator's testCallbackSanity and
// testCallbackNotifyLeader: ten candidates whose listener, the first time
// it leads, releases the leadership (Curator's reset: to the back of the
// line), and the second time closes its own latch from the listener. Three
// close Silent, seven NotifyLeader: each leads twice, and hears NotLeader
// once per release plus once per NotifyLeader close.
func TestLeaderLatch_CallbackSanity(t *testing.T) {
	const n, silent = 10, 3
	path := testPath(t)
	c := newClient(t)
	ctx := t.Context()
	var isLeader, notLeader, closedN atomic.Int32
	var errs = make(chan error, 2*n)
	for i := range n {
		mode := leaderlatch.NotifyLeader
		if i < silent {
			mode = leaderlatch.Silent
		}
		l := newLatch(t, c, path, leaderlatch.WithCloseMode(mode))
		var beenLeader bool
		l.AddListener(leaderlatch.Listener{
			IsLeader: func(ld *leaderlatch.Leadership) {
				isLeader.Add(1)
				if !beenLeader {
					beenLeader = true
					if err := ld.Release(ctx); err != nil {
						errs <- err
					}
					return
				}
				if err := l.Close(ctx); err != nil {
					errs <- err
				}
				closedN.Add(1)
			},
			NotLeader: func() { notLeader.Add(1) },
		})
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, func() bool {
		return closedN.Load() == n && notLeader.Load() == 2*n-silent
	}, "every latch led twice and closed itself")
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := isLeader.Load(); got != 2*n {
		t.Errorf("IsLeader called %d times, want %d", got, 2*n)
	}
	time.Sleep(100 * time.Millisecond) // nothing more may come
	if got := notLeader.Load(); got != 2*n-silent {
		t.Errorf("NotLeader called %d times, want %d", got, 2*n-silent)
	}
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == 0 }, "no node left")
}

// TestLeaderLatch_CorrectWatching ports Curator's testCorrectWatching:
// closing a candidate in the middle of the line does not elect the one
// before it, and the line closes up behind it.
func TestLeaderLatch_CorrectWatching(t *testing.T) {
	const n = 10
	path := testPath(t)
	c := newClient(t)
	var ls []*leaderlatch.Latch
	for i := range n {
		ls = append(ls, startLatch(t, c, path, leaderlatch.WithID(fmt.Sprintf("w%d", i))))
		eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == i+1 }, "queued")
	}
	awaitLatch(t, ls[0], 10*time.Second)
	if err := ls[2].Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if got := latchLeaders(ls); len(got) != 1 || got[0] != ls[0] {
		t.Fatalf("after closing w2, %d candidates lead (want w0 only)", len(got))
	}
	for _, i := range []int{0, 1, 3, 4} {
		awaitLatch(t, ls[i], 10*time.Second)
		if err := ls[i].Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	awaitLatch(t, ls[5], 10*time.Second)
}

// TestLeaderLatch_AwaitEndsOnlyTheWait: an Await whose ctx ends returns
// the ctx error and the candidate stays in line (its node stays); Close
// ends a blocked Await with ErrClosed and leaves no node; a done ctx
// returns at once.
func TestLeaderLatch_AwaitEndsOnlyTheWait(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	leader := startLatch(t, c, path, leaderlatch.WithID("a"))
	awaitLatch(t, leader, 10*time.Second)
	b := startLatch(t, c, path, leaderlatch.WithID("b"))
	wctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if ld, err := b.Await(wctx); !errors.Is(err, context.DeadlineExceeded) || ld != nil {
		t.Fatalf("Await behind a leader = %v, %v; want DeadlineExceeded", ld, err)
	}
	if b.HasLeadership() || len(children(t, c, path)) != 2 || b.Node() == "" {
		t.Fatalf("after the timed-out Await: leads=%v nodes=%v node=%q; want b still in line", b.HasLeadership(), children(t, c, path), b.Node())
	}
	done, cancelDone := context.WithCancel(t.Context())
	cancelDone()
	if _, err := b.Await(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Await(done ctx) = %v, want Canceled", err)
	}
	awaitErr := make(chan error, 1)
	go func() {
		_, err := b.Await(t.Context())
		awaitErr <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-awaitErr:
		if !errors.Is(err, leaderlatch.ErrClosed) {
			t.Errorf("Await ended by Close = %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a blocked Await")
	}
	if kids := children(t, c, path); len(kids) != 1 {
		t.Errorf("nodes after b closed: %v, want only a's", kids)
	}
}

// TestLeaderLatch_Waiting ports Curator's testWaiting: ten candidates on
// one client, each awaits, holds a flag that no other may hold, and closes;
// three times over.
func TestLeaderLatch_Waiting(t *testing.T) {
	c := newClient(t)
	for round := range 3 {
		path := fmt.Sprintf("%s/%d", testPath(t), round)
		var flag atomic.Bool
		var wg sync.WaitGroup
		errs := make(chan error, 10)
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := leaderlatch.New(c, path)
				if err != nil {
					errs <- err
					return
				}
				defer l.Close(context.Background())
				if err := l.Start(t.Context()); err != nil {
					errs <- err
					return
				}
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				defer cancel()
				if _, err := l.Await(ctx); err != nil {
					errs <- fmt.Errorf("candidate %d: %w", i, err)
					return
				}
				if !flag.CompareAndSwap(false, true) {
					errs <- fmt.Errorf("candidate %d leads while another does", i)
				}
				time.Sleep(time.Duration(rand.IntN(10)) * time.Millisecond)
				flag.Store(false)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}

// cutAndRestore drops the client's connection through proxy and refuses
// new ones (as a stopped server would) until the client reports
// Suspended, then lets it reconnect on the same session.
func cutAndRestore(t *testing.T, proxy *zktest.Proxy, log *stateLog) {
	t.Helper()
	suspended := log.count(framework.Suspended)
	proxy.Refuse(true)
	proxy.Reset()
	eventually(t, 10*time.Second, func() bool { return log.count(framework.Suspended) > suspended }, "Suspended")
	reconnected := log.count(framework.Reconnected)
	proxy.Refuse(false)
	eventually(t, 10*time.Second, func() bool { return log.count(framework.Reconnected) > reconnected }, "Reconnected")
	if n := log.count(framework.Lost); n != 0 {
		t.Fatalf("the session was lost (%d LOST): the cut was too long for this test", n)
	}
}

// TestLeaderLatch_ErrorPolicies ports Curator's testSessionErrorPolicy and
// testErrorPolicies: under the standard policy a dropped connection ends
// the leadership (NotLeader, Lost() closes) and, back on the same session,
// the candidate keeps its node and leads again; under the session policy a
// dropped connection that comes back in time changes nothing.
func TestLeaderLatch_ErrorPolicies(t *testing.T) {
	for _, policy := range []framework.ErrorPolicy{framework.StandardErrorPolicy, framework.SessionErrorPolicy} {
		name := map[framework.ErrorPolicy]string{framework.StandardErrorPolicy: "standard", framework.SessionErrorPolicy: "session"}[policy]
		t.Run(name, func(t *testing.T) {
			path := testPath(t)
			var log stateLog
			c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder {
				return b.ConnectionStateErrorPolicy(policy).Listener(log.listen)
			})
			obs := newClient(t)
			var ev latchEvents
			l := newLatch(t, c, path)
			l.AddListener(ev.listener())
			if err := l.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			first := awaitLatch(t, l, 10*time.Second)
			before := children(t, obs, path)
			cutAndRestore(t, proxy, &log)
			if policy == framework.SessionErrorPolicy {
				time.Sleep(200 * time.Millisecond)
				if isClosed(first.Lost()) || !l.HasLeadership() || ev.String() != "leader" {
					t.Errorf("session policy, connection back in time: lost=%v leads=%v events %q; want the leadership kept",
						isClosed(first.Lost()), l.HasLeadership(), ev.String())
				}
				return
			}
			if !isClosed(first.Lost()) {
				t.Error("standard policy: the leadership's Lost() is open after Suspended")
			}
			second := awaitLatch(t, l, 10*time.Second)
			if second == first {
				t.Error("Await after the reconnect returned the lost leadership")
			}
			eventually(t, 5*time.Second, func() bool { return ev.String() == "leader not leader" }, "listener heard leader, not, leader")
			if after := children(t, obs, path); !slices.Equal(before, after) {
				t.Errorf("nodes before the cut %v, after %v: want the same node kept", before, after)
			}
		})
	}
}

// TestLeaderLatch_NodeDeletedUnderLeader: when the leader's node is
// deleted by someone else, its leadership ends (Lost() closes), the next
// candidate leads, and the old leader joins again at the back with one new
// node.
func TestLeaderLatch_NodeDeletedUnderLeader(t *testing.T) {
	path := testPath(t)
	obs := newClient(t)
	a := startLatch(t, newClient(t), path, leaderlatch.WithID("a"))
	la := awaitLatch(t, a, 10*time.Second)
	b := startLatch(t, newClient(t), path, leaderlatch.WithID("b"))
	eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path)) == 2 }, "b queued")
	if err := obs.Delete().ForPath(t.Context(), la.Node()); err != nil {
		t.Fatal(err)
	}
	awaitLatch(t, b, 10*time.Second)
	eventually(t, 5*time.Second, func() bool { return isClosed(la.Lost()) }, "a's Lost() closes")
	eventually(t, 10*time.Second, func() bool { return a.Node() != "" && a.Node() != la.Node() }, "a joins again")
	if kids := children(t, obs, path); len(kids) != 2 {
		t.Errorf("nodes: %v, want one per candidate", kids)
	}
	if ps, err := a.Participants(t.Context()); err != nil || len(ps) != 2 || ps[0].ID != "b" || ps[1].ID != "a" {
		t.Errorf("Participants = %+v, %v; want b then a", ps, err)
	}
}

// TestLeaderLatch_BadInput: each misuse gets an error that says what is
// wrong, and leaves no node behind; after Close nothing of the latch runs.
func TestLeaderLatch_BadInput(t *testing.T) {
	faultsNoLeaks(t)
	path := testPath(t)
	c := newClient(t)
	ctx := t.Context()
	for _, tc := range []struct {
		name   string
		client *framework.Client
		path   string
		opts   []leaderlatch.Option
		want   error
	}{
		{"empty path", c, "", nil, framework.ErrInvalidPath},
		{"relative path", c, "it/latch", nil, framework.ErrInvalidPath},
		{"nil client", nil, path, nil, framework.ErrNilClient},
		{"participant ID over the node size limit", c, path, []leaderlatch.Option{leaderlatch.WithID(strings.Repeat("x", leaderlatch.MaxIDSize+1))}, leaderlatch.ErrInvalidArgument},
	} {
		if l, err := leaderlatch.New(tc.client, tc.path, tc.opts...); l != nil || !errors.Is(err, tc.want) || !errors.Is(err, leaderlatch.ErrInvalidArgument) {
			t.Errorf("%s: New = %v, %v; want %v", tc.name, l, err, tc.want)
		}
	}

	// The largest ID is written and read back whole.
	big := strings.Repeat("i", leaderlatch.MaxIDSize)
	l := startLatch(t, c, path, leaderlatch.WithID(big))
	if p, err := l.Leader(ctx); err != nil || p.ID != big {
		t.Errorf("Leader with an ID of MaxIDSize bytes: %d bytes, %v", len(p.ID), err)
	}
	if err := l.Start(ctx); !errors.Is(err, leaderlatch.ErrAlreadyStarted) {
		t.Errorf("second Start = %v, want ErrAlreadyStarted", err)
	}
	if kids := children(t, c, path); len(kids) != 1 {
		t.Errorf("nodes after Start twice: %v, want one", kids)
	}
	ld := awaitLatch(t, l, 10*time.Second)
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"Start":        l.Start(ctx),
		"Await":        second(l.Await(ctx)),
		"Participants": second(l.Participants(ctx)),
		"Leader":       second(l.Leader(ctx)),
	} {
		if !errors.Is(err, leaderlatch.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", what, err)
		}
	}
	if err := ld.Release(ctx); err != nil {
		t.Errorf("Release of a leadership ended by Close = %v, want nil", err)
	}
	if err := l.Close(ctx); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}

	// A Start whose ctx ends during the create leaves no node.
	pc, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b })
	cut := newLatch(t, pc, path+"/cut")
	proxy.Pause()
	sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := cut.Start(sctx)
	cancel()
	proxy.Resume()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Start with a ctx that ends during the create = %v, want DeadlineExceeded", err)
	}
	if err := cut.Start(ctx); !errors.Is(err, leaderlatch.ErrClosed) {
		t.Errorf("Start after a failed Start = %v, want ErrClosed", err)
	}
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path+"/cut")) == 0 }, "no node left by the cancelled Start")
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == 0 }, "no node left")
	noLeaderGoroutines(t)
}

func second[T any](_ T, err error) error { return err }

// TestLeaderLatch_SlowListener: a listener that blocks delays only itself:
// the latch still hands over and Await still returns, the listener then
// gets every event in order, and Close waits for it only until its ctx
// ends. A listener may close its own latch.
func TestLeaderLatch_SlowListener(t *testing.T) {
	path := testPath(t)
	c := newClient(t)
	var ev latchEvents
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	a := newLatch(t, c, path, leaderlatch.WithCloseMode(leaderlatch.NotifyLeader))
	t.Cleanup(open) // before a's Close, should the test end early
	a.AddListener(leaderlatch.Listener{
		IsLeader:  func(*leaderlatch.Leadership) { <-gate; ev.add("leader") },
		NotLeader: func() { ev.add("not") },
	})
	if err := a.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	la := awaitLatch(t, a, 10*time.Second)
	b := startLatch(t, c, path)
	var closedBy atomic.Bool
	b.AddListener(leaderlatch.Listener{IsLeader: func(*leaderlatch.Leadership) {
		closedBy.Store(b.Close(context.Background()) == nil)
	}})
	if err := la.Release(t.Context()); err != nil { // a goes behind b
		t.Fatal(err)
	}
	// b leads, and its listener closes it at once (so b is not awaited).
	eventually(t, 10*time.Second, func() bool { return closedBy.Load() }, "b's listener closes b")
	awaitLatch(t, a, 10*time.Second)
	cctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	err := a.Close(cctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close with a blocked listener = %v, want DeadlineExceeded", err)
	}
	open()
	eventually(t, 5*time.Second, func() bool { return ev.String() == "leader not leader not" }, "the slow listener gets every event in order")
	if kids := children(t, c, path); len(kids) != 0 {
		t.Errorf("nodes left: %v", kids)
	}
}
