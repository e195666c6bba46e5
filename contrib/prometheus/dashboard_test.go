package prometheus_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	curatorprom "github.com/go-curator/curator/contrib/prometheus"
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/goleak"
)

// noLeaks checks, after the test's other cleanups (its clients closed),
// that no goroutine is left.
func noLeaks(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreAnyFunction(zktest.ServerWaitFunction)) })
}

// scraped is a started client whose hook is a Collector's, and the URL a
// Prometheus server would scrape.
type scraped struct {
	client *framework.Client
	url    string
}

// startScraped starts a client on server with col's hook, changed by
// wrap if not nil, and serves col's registry over HTTP. t.Cleanup closes
// both.
func startScraped(t *testing.T, server *zktest.Cluster, col *curatorprom.Collector, wrap func(*framework.Metrics)) scraped {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(col)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	m := col.Metrics()
	if wrap != nil {
		wrap(&m)
	}
	return scraped{client: startClient(t, server, m), url: srv.URL + "/metrics"}
}

// startClient starts a client on server with hook m; t.Cleanup closes it.
func startClient(t *testing.T, server *zktest.Cluster, m framework.Metrics) *framework.Client {
	t.Helper()
	policy, err := retry.NewNTimes(3, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c, err := framework.NewBuilder().ConnectString(server.ConnectString()).RetryPolicy(policy).
		Metrics(m).Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// await polls the scrape until cond holds, for at most 30 s.
func await(t *testing.T, url, what string, cond func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := scrape(t, url)
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scrape never showed %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// awaitParticipants waits until the lock at m's path has n contenders.
func awaitParticipants(t *testing.T, m *mutex.Mutex, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ps, err := m.Participants(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lock has %d contenders %v, want %d", len(ps), ps, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCollector_GaugesShowHoldsAndWaitersNow checks that a dashboard sees a
// lock held and its waiters while they last, not only at release: a held
// mutex shows one holder, each queued acquire one waiter, and both go back
// to 0 when the waits end (one cancelled, one granted) and the holds are
// released. A semaphore shows one holder per lease.
func TestCollector_GaugesShowHoldsAndWaitersNow(t *testing.T) {
	noLeaks(t)
	s := startScraped(t, zktest.Shared(t), curatorprom.New(), nil)
	ctx := t.Context()
	const path = "/prometheus/gauges/lock"
	gauges := func(holders, waiters float64) map[string]float64 {
		return map[string]float64{
			`curator_lock_holders{kind="mutex"}`: holders,
			`curator_lock_waiters{kind="mutex"}`: waiters,
		}
	}

	// Every kind's series exists before any acquire, at 0.
	expect(t, scrape(t, s.url), map[string]float64{
		`curator_lock_holders{kind="mutex"}`:          0,
		`curator_lock_waiters{kind="mutex"}`:          0,
		`curator_lock_holders{kind="semaphorev2"}`:    0,
		`curator_lock_holders{kind="rwlock-write"}`:   0,
		`curator_lock_waiters{kind="leaderselector"}`: 0,
	})

	m, err := mutex.New(s.client, path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, scrape(t, s.url), gauges(1, 0))

	// Two waiters queue behind the holder: one to be cancelled, one to be
	// granted the lock at the release.
	other, err := mutex.New(s.client, path)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cancelled := make(chan error, 1)
	go func() {
		_, err := other.Acquire(cctx)
		cancelled <- err
	}()
	awaitParticipants(t, m, 2)
	granted := make(chan *mutex.Hold, 1)
	go func() {
		h, err := other.Acquire(ctx)
		if err != nil {
			t.Errorf("second waiter: %v", err)
		}
		granted <- h
	}()
	awaitParticipants(t, m, 3)
	// Each waiter's node exists, so each acquire has started.
	expect(t, scrape(t, s.url), gauges(1, 2))

	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v, want context.Canceled", err)
	}
	expect(t, scrape(t, s.url), gauges(1, 1))

	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	next := <-granted
	if next == nil {
		t.FailNow()
	}
	expect(t, scrape(t, s.url), gauges(1, 0)) // the second waiter holds it now
	if err := next.Release(ctx); err != nil {
		t.Fatal(err)
	}
	got := scrape(t, s.url)
	expect(t, got, gauges(0, 0))
	expect(t, got, map[string]float64{
		`curator_lock_wait_seconds_count{kind="mutex",outcome="acquired"}`:  2,
		`curator_lock_wait_seconds_count{kind="mutex",outcome="cancelled"}`: 1,
		`curator_lock_hold_seconds_count{kind="mutex",lost="false"}`:        2,
	})

	// A semaphore: one holder per lease, until each is returned.
	sem, err := semaphorev2.New(s.client, "/prometheus/gauges/sem", 3)
	if err != nil {
		t.Fatal(err)
	}
	leases, err := sem.AcquireN(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, scrape(t, s.url), map[string]float64{
		`curator_lock_holders{kind="semaphorev2"}`: 2,
		`curator_lock_waiters{kind="semaphorev2"}`: 0,
	})
	if err := sem.ReturnAll(ctx, leases); err != nil {
		t.Fatal(err)
	}
	expect(t, scrape(t, s.url), map[string]float64{
		`curator_lock_holders{kind="semaphorev2"}`: 0,
		`curator_lock_waiters{kind="semaphorev2"}`: 0,
	})
}

// TestCollector_ExpectedNoNodeIsNotAnError hands a mutex off to a waiter
// whose predecessor, the holder, releases between the waiter's read of
// the children and its watch of the holder's node: the waiter's getData
// finds no node, as the lock algorithm expects, and takes the lock. The
// scrape counts that no_node as the server's answer, and no error at all,
// so the error ratio of a dashboard stays at 0.
func TestCollector_ExpectedNoNodeIsNotAnError(t *testing.T) {
	noLeaks(t)
	server := zktest.Shared(t)
	ctx := t.Context()
	const path = "/prometheus/handoff/lock"

	// The holder, on a client of its own.
	holderClient := startClient(t, server, framework.Metrics{})
	hm, err := mutex.New(holderClient, path)
	if err != nil {
		t.Fatal(err)
	}
	held, err := hm.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// The waiter's client runs release once, right after its read of the
	// children (which lists the holder ahead of it), on the waiter's
	// goroutine before its next request, the data watch on the
	// predecessor: that one then finds the predecessor gone.
	var release atomic.Pointer[func()]
	s := startScraped(t, server, curatorprom.New(), func(m *framework.Metrics) {
		opDone := m.OpDone
		m.OpDone = func(i framework.OpInfo) {
			opDone(i)
			if i.Op == framework.OpNameGetChildren {
				if f := release.Swap(nil); f != nil {
					(*f)()
				}
			}
		}
	})
	var releaseErr error
	f := func() { releaseErr = held.Release(context.WithoutCancel(ctx)) }
	release.Store(&f)

	wm, err := mutex.New(s.client, path)
	if err != nil {
		t.Fatal(err)
	}
	wh, err := wm.Acquire(ctx)
	if err != nil {
		t.Fatalf("waiter: %v", err)
	}
	if release.Load() != nil || releaseErr != nil {
		t.Fatalf("the holder was not released after the waiter's read: %v", releaseErr)
	}
	if ps, err := wm.Participants(ctx); err != nil || len(ps) != 1 || ps[0] != wh.Node() {
		t.Fatalf("contenders %v (%v), want the waiter's node %s alone", ps, err, wh.Node())
	}
	if err := wh.Release(ctx); err != nil {
		t.Fatal(err)
	}

	got := scrape(t, s.url)
	expect(t, got, map[string]float64{
		`curator_operation_answers_total{code="no_node",op="getData"}`:     1,
		`curator_lock_wait_seconds_count{kind="mutex",outcome="acquired"}`: 1,
	})
	for series, v := range got {
		if strings.HasPrefix(series, "curator_operation_errors_total{") && v != 0 {
			t.Errorf("%s = %v after a hand-off without failures, want no error counted", series, v)
		}
	}
}

// TestCollector_StateLabelsAreLowercase expires the client's session and
// checks that the connection state series carry the states in lower case,
// state="lost" among them, as Prometheus's label values are.
func TestCollector_StateLabelsAreLowercase(t *testing.T) {
	noLeaks(t)
	server := zktest.Shared(t)
	s := startScraped(t, server, curatorprom.New(), nil)
	await(t, s.url, "the state connected", func(got map[string]float64) bool {
		return got[`curator_connection_state{state="connected"}`] == 1 ||
			got[`curator_connection_state{state="CONNECTED"}`] == 1
	})
	if err := zktest.ExpireSession(t.Context(), server.ConnectString(), s.client.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	// Wait for the loss and the new session, in any case, then check the case.
	got := await(t, s.url, "a lost session and a new one", func(got map[string]float64) bool {
		lost, reconnected := false, false
		for series, v := range got {
			series = strings.ToLower(series)
			lost = lost || (series == `curator_connection_state_changes_total{state="lost"}` && v == 1)
			reconnected = reconnected || (series == `curator_connection_state{state="reconnected"}` && v == 1)
		}
		return lost && reconnected
	})
	expect(t, got, map[string]float64{
		`curator_connection_state_changes_total{state="connected"}`:   1,
		`curator_connection_state_changes_total{state="lost"}`:        1,
		`curator_connection_state_changes_total{state="reconnected"}`: 1,
		`curator_connection_state{state="reconnected"}`:               1,
		`curator_connection_state{state="lost"}`:                      0,
		`curator_connection_state{state="read_only"}`:                 0,
		`curator_connection_state{state="latent"}`:                    0,
	})
	for series := range got {
		if strings.HasPrefix(series, "curator_connection_state") && series != strings.ToLower(series) {
			t.Errorf("series %s: the state is not in lower case", series)
		}
	}
}
