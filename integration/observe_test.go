package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/leaderlatch"
	"github.com/go-curator/curator/recipes/leaderselector"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/rwlock"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// logRecord is one slog record, with its attributes as text.
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func (r logRecord) String() string { return fmt.Sprintf("%v %q %v", r.level, r.msg, r.attrs) }

// logCapture is a slog handler that keeps the records at Info and above, as
// an operator's handler would show them.
type logCapture struct {
	mu   sync.Mutex
	recs []logRecord
}

func (h *logCapture) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (h *logCapture) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *logCapture) WithGroup(string) slog.Handler                { return h }

func (h *logCapture) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	h.recs = append(h.recs, rec)
	h.mu.Unlock()
	return nil
}

func (h *logCapture) records() []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.recs)
}

// find returns the first record from index from whose message contains
// msg, and its index, or -1.
func (h *logCapture) find(from int, msg string) (logRecord, int) {
	recs := h.records()
	for i := from; i < len(recs); i++ {
		if strings.Contains(recs[i].msg, msg) {
			return recs[i], i
		}
	}
	return logRecord{}, -1
}

func (h *logCapture) await(t *testing.T, from int, msg string) (logRecord, int) {
	t.Helper()
	var rec logRecord
	i := -1
	eventually(t, 30*time.Second, func() bool { rec, i = h.find(from, msg); return i >= 0 },
		fmt.Sprintf("a log record %q after record %d (have %v)", msg, from, h.records()))
	return rec, i
}

func hexID(id int64) string { return fmt.Sprintf("0x%x", id) }

// TestObserve_InfoLogsTellTheSessionStory checks what an operator sees at
// Info: the session established (ID in hex, granted timeout, server), a
// server-side expiry, a simulated expiry (the client's lease on the session
// ran out while the server did not answer), each new session, and Close;
// and nothing at all for operations and locks on a healthy connection.
func TestObserve_InfoLogsTellTheSessionStory(t *testing.T) {
	faultsNoLeaks(t)
	logs := &logCapture{}
	var states stateLog
	c, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder {
		return b.Logger(slog.New(logs)).Listener(states.listen)
	})
	first := c.SessionID()

	est, _ := logs.await(t, 0, "session established")
	if est.level != slog.LevelInfo || est.attrs["session"] != hexID(first) || est.attrs["server"] != proxy.Addr() {
		t.Fatalf("first record %v; want Info with session %s and server %s", est, hexID(first), proxy.Addr())
	}
	if d, err := time.ParseDuration(est.attrs["timeout"]); err != nil || d <= 0 || d != c.NegotiatedSessionTimeout() {
		t.Fatalf("session established: timeout %q, want the negotiated %v", est.attrs["timeout"], c.NegotiatedSessionTimeout())
	}

	// The hot path: operations, a lock, a watch. Nothing at Info.
	before := len(logs.records())
	p := testPath(t)
	ctx := t.Context()
	for i := range 20 {
		node := fmt.Sprintf("%s/n%d", p, i)
		if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, node, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := c.SetData().ForPath(ctx, node, []byte("y")); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.GetData().ForPath(ctx, node); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete().ForPath(ctx, node); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := c.GetData().ForPath(ctx, p+"/missing"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("get missing: %v", err)
	}
	m, err := mutex.New(c, p+"/lock")
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if recs := logs.records(); len(recs) != before {
		t.Fatalf("records at Info on the hot path: %v", recs[before:])
	}

	// A server-side expiry: the old session is lost, a new one established.
	if err := zktest.ExpireSession(ctx, zktest.Shared(t).ConnectString(), c.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	lost, at := logs.await(t, before, "session lost: the server expired it")
	if lost.level != slog.LevelWarn || lost.attrs["session"] != hexID(first) {
		t.Fatalf("expiry record %v; want Warn with session %s", lost, hexID(first))
	}
	est, at = logs.await(t, at, "session established")
	second := c.SessionID()
	if second == first || est.attrs["session"] != hexID(second) {
		t.Fatalf("after the expiry: %v; want the new session %s", est, hexID(second))
	}

	// A simulated expiry: the server stops answering, the client's lease on
	// the session runs out and it declares the session lost itself.
	proxy.Pause()
	sus, _ := logs.await(t, at, "connection lost: suspended")
	if sus.level != slog.LevelInfo || sus.attrs["session"] != hexID(second) {
		t.Fatalf("suspended record %v; want Info with session %s", sus, hexID(second))
	}
	sim, at := logs.await(t, at, "simulated expiry")
	if sim.level != slog.LevelWarn || sim.attrs["session"] != hexID(second) {
		t.Fatalf("simulated expiry record %v; want Warn with session %s", sim, hexID(second))
	}
	proxy.Resume()
	est, at = logs.await(t, at, "session established")
	if err := c.BlockUntilConnected(ctx); err != nil {
		t.Fatal(err)
	}
	third := c.SessionID()
	if third == second || est.attrs["session"] != hexID(third) {
		t.Fatalf("after the simulated expiry: %v; want the new session %s", est, hexID(third))
	}

	c.Close()
	closed, _ := logs.find(at, "framework: closed")
	if closed.level != slog.LevelInfo || closed.attrs["session"] != hexID(third) {
		t.Fatalf("no Info record of Close with session %s when Close returned: %v", hexID(third), logs.records())
	}

	// Every record is one of the session's story, at Info or Warn.
	story := []string{"session established", "reconnected", "connection lost: suspended", "session lost",
		"framework: closed", "no session yet"}
	for _, r := range logs.records() {
		if !slices.ContainsFunc(story, func(s string) bool { return strings.Contains(r.msg, s) }) {
			t.Errorf("unexpected record %v", r)
		}
	}
	if states.count(framework.Lost) != 2 {
		t.Errorf("listener saw %d Lost, want 2 (states %v)", states.count(framework.Lost), &states)
	}
}

// hookLog records every call of a metrics hook.
type hookLog struct {
	mu       sync.Mutex
	ops      []framework.OpInfo
	retries  []framework.RetryInfo
	states   []framework.StateInfo
	watches  []framework.WatchInfo
	acquires []framework.AcquireInfo
	holds    []framework.HoldInfo
	client   *framework.Client // StateChanged calls it back
}

func (l *hookLog) metrics() framework.Metrics {
	return framework.Metrics{
		OpDone:   func(i framework.OpInfo) { l.mu.Lock(); l.ops = append(l.ops, i); l.mu.Unlock() },
		Retrying: func(i framework.RetryInfo) { l.mu.Lock(); l.retries = append(l.retries, i); l.mu.Unlock() },
		StateChanged: func(i framework.StateInfo) {
			l.mu.Lock()
			c := l.client
			l.mu.Unlock()
			if c != nil {
				_ = c.State() // the hook may call the client: it runs outside the client's lock
			}
			l.mu.Lock()
			l.states = append(l.states, i)
			l.mu.Unlock()
		},
		WatchDelivered: func(i framework.WatchInfo) { l.mu.Lock(); l.watches = append(l.watches, i); l.mu.Unlock() },
		AcquireDone:    func(i framework.AcquireInfo) { l.mu.Lock(); l.acquires = append(l.acquires, i); l.mu.Unlock() },
		Released:       func(i framework.HoldInfo) { l.mu.Lock(); l.holds = append(l.holds, i); l.mu.Unlock() },
	}
}

func (l *hookLog) opsNamed(name string) []framework.OpInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []framework.OpInfo
	for _, o := range l.ops {
		if o.Op == name {
			out = append(out, o)
		}
	}
	return out
}

func (l *hookLog) countWatch(lasting bool, typ string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, w := range l.watches {
		if w.Lasting == lasting && w.Type == typ {
			n++
		}
	}
	return n
}

func (l *hookLog) acquiresOf(kind string) []framework.AcquireOutcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []framework.AcquireOutcome
	for _, a := range l.acquires {
		if a.Kind == kind {
			out = append(out, a.Outcome)
		}
	}
	return out
}

func (l *hookLog) holdsOf(kind string) []framework.HoldInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []framework.HoldInfo
	for _, h := range l.holds {
		if h.Kind == kind {
			out = append(out, h)
		}
	}
	return out
}

func (l *hookLog) stateList() []framework.StateInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.states)
}

// TestObserve_MetricsHookReportsWhatTheClientDid runs each operation, a
// retry, watches, locks and leases and a session expiry on a client with a
// metrics hook, and checks that the hook heard of each, by name, with its
// outcome.
func TestObserve_MetricsHookReportsWhatTheClientDid(t *testing.T) {
	faultsNoLeaks(t)
	hooks := &hookLog{}
	c, err := builder(t, fwShared(t)).Metrics(hooks.metrics()).Build()
	if err != nil {
		t.Fatal(err)
	}
	hooks.mu.Lock()
	hooks.client = c
	hooks.mu.Unlock()
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()
	p := testPath(t)

	// Operations, each reported once by its name, with the server's answer.
	node := p + "/n"
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, node, []byte("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetData().ForPath(ctx, node, []byte("2")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CheckExists().ForPath(ctx, node); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetChildren().ForPath(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := c.Sync().ForPath(ctx, node); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Transaction().SetData(node, []byte("3"), -1).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.GetData().ForPath(ctx, p+"/missing"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("get missing: %v", err)
	}
	// A one-shot watch fires once.
	_, _, ch, err := c.GetData().ForPathW(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetData().ForPath(ctx, node, []byte("4")); err != nil {
		t.Fatal(err)
	}
	if ev := <-ch; ev.Type != zk.EventNodeDataChanged {
		t.Fatalf("one-shot watch event %v", ev)
	}
	if err := c.Delete().ForPath(ctx, node); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete().Quietly().ForPath(ctx, node); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		op   string
		n    int
		errs []error // the error of each, in order (nil: success)
	}{
		{framework.OpNameCreate, 1, []error{nil}},
		{framework.OpNameSetData, 2, []error{nil, nil}},
		{framework.OpNameExists, 1, []error{nil}},
		{framework.OpNameGetChildren, 1, []error{nil}},
		{framework.OpNameSync, 1, []error{nil}},
		{framework.OpNameMulti, 1, []error{nil}},
		{framework.OpNameGetData, 2, []error{zk.ErrNoNode, nil}},
		{framework.OpNameDelete, 2, []error{nil, zk.ErrNoNode}},
	} {
		got := hooks.opsNamed(tc.op)
		if len(got) != tc.n {
			t.Errorf("OpDone %s: %d calls %+v, want %d", tc.op, len(got), got, tc.n)
			continue
		}
		for i, o := range got {
			if (tc.errs[i] == nil) != (o.Err == nil) || (tc.errs[i] != nil && !errors.Is(o.Err, tc.errs[i])) {
				t.Errorf("OpDone %s #%d: err %v, want %v", tc.op, i, o.Err, tc.errs[i])
			}
		}
	}
	if n := hooks.countWatch(false, "CHANGED"); n != 1 {
		t.Errorf("one-shot CHANGED deliveries = %d, want 1", n)
	}

	// A retry of the caller's own operation.
	attempts := 0
	if err := c.Retry(ctx, func() error {
		if attempts++; attempts == 1 {
			return zk.ErrConnectionClosed
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	hooks.mu.Lock()
	retries := slices.Clone(hooks.retries)
	hooks.mu.Unlock()
	if len(retries) != 1 || retries[0].Op != framework.OpNameRetry || retries[0].Attempt != 1 ||
		!errors.Is(retries[0].Err, zk.ErrConnectionClosed) {
		t.Errorf("Retrying calls %+v, want one for attempt 1 of %q with the connection error", retries, framework.OpNameRetry)
	}
	if got := hooks.opsNamed(framework.OpNameRetry); len(got) != 1 || got[0].Err != nil {
		t.Errorf("OpDone retry: %+v, want one success", got)
	}

	// A lasting watch: each event on the channel is a delivery.
	wctx, stop := context.WithCancel(ctx)
	events, err := c.Watch().ForPath(wctx, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []framework.WatchEventType{framework.WatchCreated, framework.WatchSynced} {
		if ev := <-events; ev.Type != want {
			t.Fatalf("lasting watch event %v, want %v", ev.Type, want)
		}
	}
	stop()
	for range events {
	}
	if hooks.countWatch(true, "CREATED") < 1 || hooks.countWatch(true, "SYNCED") != 1 {
		t.Errorf("lasting deliveries: %d CREATED, %d SYNCED; want at least one and one",
			hooks.countWatch(true, "CREATED"), hooks.countWatch(true, "SYNCED"))
	}

	// A mutex: a wait per new hold (not per nested acquire), a hold time per
	// last release; a bounded wait that runs out, a cancelled one.
	m, err := mutex.New(c, p+"/lock")
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Acquire(ctx); err != nil { // nested
		t.Fatal(err)
	}
	other, err := mutex.New(c, p+"/lock")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, ok, err := other.TryAcquire(ctx, 100*time.Millisecond); ok || err != nil {
			t.Errorf("TryAcquire of a held lock: %v, %v", ok, err)
		}
		cctx, cancel := context.WithCancel(ctx)
		go func() { // cancel once the waiter is queued
			defer cancel()
			for ctx.Err() == nil {
				if ps, _ := m.Participants(ctx); len(ps) == 2 {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		if _, err := other.Acquire(cctx); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled Acquire: %v", err)
		}
	}()
	<-done
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got := hooks.holdsOf(framework.KindMutex); len(got) != 0 {
		t.Fatalf("hold reported after the first of two releases: %+v", got)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := hooks.acquiresOf(framework.KindMutex), []framework.AcquireOutcome{
		framework.OutcomeAcquired, framework.OutcomeTimeout, framework.OutcomeCancelled}; !slices.Equal(got, want) {
		t.Errorf("mutex waits %v, want %v", got, want)
	}
	if got := hooks.holdsOf(framework.KindMutex); len(got) != 1 || got[0].Lost || got[0].Duration <= 0 {
		t.Errorf("mutex holds %+v, want one, not lost", got)
	}

	// A read/write lock, each side under its own kind.
	rw, err := rwlock.New(c, p+"/rw")
	if err != nil {
		t.Fatal(err)
	}
	wh, err := rw.WriteLock().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rh, err := rw.ReadLock().Acquire(ctx) // a writer may take the read lock
	if err != nil {
		t.Fatal(err)
	}
	if err := rh.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := wh.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{framework.KindWriteLock, framework.KindReadLock} {
		if got := hooks.acquiresOf(k); !slices.Equal(got, []framework.AcquireOutcome{framework.OutcomeAcquired}) {
			t.Errorf("%s waits %v, want one acquired", k, got)
		}
		if got := hooks.holdsOf(k); len(got) != 1 {
			t.Errorf("%s holds %+v, want one", k, got)
		}
	}

	// A semaphore: one wait per acquire call, one hold per lease.
	sem, err := semaphorev2.New(c, p+"/sem", 2)
	if err != nil {
		t.Fatal(err)
	}
	leases, err := sem.AcquireN(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := sem.ReturnAll(ctx, leases); err != nil {
		t.Fatal(err)
	}
	if got := hooks.acquiresOf(framework.KindSemaphore); !slices.Equal(got, []framework.AcquireOutcome{framework.OutcomeAcquired}) {
		t.Errorf("semaphore waits %v, want one acquired", got)
	}
	if got := hooks.holdsOf(framework.KindSemaphore); len(got) != 2 {
		t.Errorf("semaphore holds %+v, want two", got)
	}

	// A leader latch: Await, and the term, which Close ends (not a loss).
	latch, err := leaderlatch.New(c, p+"/leader")
	if err != nil {
		t.Fatal(err)
	}
	if err := latch.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := latch.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if err := latch.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := hooks.acquiresOf(framework.KindLeaderLatch); !slices.Equal(got, []framework.AcquireOutcome{framework.OutcomeAcquired}) {
		t.Errorf("leaderlatch waits %v, want one acquired", got)
	}
	if got := hooks.holdsOf(framework.KindLeaderLatch); len(got) != 1 || got[0].Lost {
		t.Errorf("leaderlatch terms %+v, want one, not lost", got)
	}

	// An election: Campaign, and the term Resign ends.
	e, err := leaderselector.NewElection(c, p+"/election")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Campaign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := hooks.acquiresOf(framework.KindLeaderSelector); !slices.Equal(got, []framework.AcquireOutcome{framework.OutcomeAcquired}) {
		t.Errorf("leaderselector waits %v, want one acquired", got)
	}
	if got := hooks.holdsOf(framework.KindLeaderSelector); len(got) != 1 || got[0].Lost {
		t.Errorf("leaderselector terms %+v, want one, not lost", got)
	}

	// States: Connected, then a server-side expiry (Lost for the old
	// session, Reconnected on a new one), then Closed once Close returns.
	// A mutex held across the expiry is released as lost.
	lostHold, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := c.SessionID()
	if err := zktest.ExpireSession(ctx, fwShared(t), c.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, func() bool {
		st := hooks.stateList()
		return len(st) > 0 && st[len(st)-1].State == framework.Reconnected
	}, "Reconnected reported to the hook")
	second := c.SessionID()
	<-lostHold.Lost()
	if err := lostHold.Release(ctx); !releasedAfterLoss(err) {
		t.Fatal(err)
	}
	if got := hooks.holdsOf(framework.KindMutex); len(got) != 2 || !got[1].Lost {
		t.Errorf("mutex holds %+v, want the second one lost", got)
	}
	c.Close()
	got := hooks.stateList()
	var names []string
	for _, s := range got {
		names = append(names, s.State.String())
	}
	st := func(s framework.ConnectionState, id int64) framework.StateInfo {
		return framework.StateInfo{State: s, SessionID: id}
	}
	want := []framework.StateInfo{st(framework.Connected, first), st(framework.Lost, first),
		st(framework.Reconnected, second), st(framework.Closed, second)}
	withSuspended := append([]framework.StateInfo{want[0], st(framework.Suspended, first)}, want[1:]...)
	if !slices.Equal(got, want) && !slices.Equal(got, withSuspended) {
		t.Fatalf("states reported %v (%+v), want CONNECTED (SUSPENDED) LOST RECONNECTED CLOSED with sessions %#x, %#x",
			names, got, first, second)
	}
}

// TestObserve_CloseFromTheStateHookReturns checks that a StateChanged
// hook that closes the client does not deadlock Close, which waits for the
// hook's last call (Closed) only up to a bound, as it does for listeners.
func TestObserve_CloseFromTheStateHookReturns(t *testing.T) {
	faultsNoLeaks(t)
	var c *framework.Client
	ready := make(chan struct{})
	closed := make(chan struct{})
	var seen []framework.ConnectionState
	var mu sync.Mutex
	b := builder(t, fwShared(t)).Metrics(framework.Metrics{StateChanged: func(i framework.StateInfo) {
		mu.Lock()
		seen = append(seen, i.State)
		mu.Unlock()
		if i.State == framework.Connected {
			<-ready
			c.Close()
			close(closed)
		}
	}})
	var err error
	if c, err = b.Build(); err != nil {
		t.Fatal(err)
	}
	close(ready)
	if err := c.Start(t.Context()); err != nil && !errors.Is(err, framework.ErrClosed) {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close called from StateChanged never returned")
	}
	if st := c.State(); st != framework.Closed {
		t.Fatalf("state %v after Close", st)
	}
	// Closed comes once the hook has returned from its Close.
	want := []framework.ConnectionState{framework.Connected, framework.Closed}
	eventually(t, 10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Equal(seen, want)
	}, "the states CONNECTED CLOSED reported")
}
