package prometheus_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	curatorprom "github.com/go-curator/curator/contrib/prometheus"
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// scrape fetches the registry's metrics over HTTP, as Prometheus does, and
// returns each sample by its series ("name{k="v",...}", labels sorted), a
// histogram as its _count and _sum.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			series := seriesName(name, m.GetLabel())
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[series] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[series] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[seriesName(name+"_count", m.GetLabel())] = float64(m.GetHistogram().GetSampleCount())
				out[seriesName(name+"_sum", m.GetLabel())] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}

func seriesName(name string, labels []*dto.LabelPair) string {
	var kv []string
	for _, l := range labels {
		kv = append(kv, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	sort.Strings(kv)
	return name + "{" + strings.Join(kv, ",") + "}"
}

// expect checks the value of each series.
func expect(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for s, v := range want {
		g, ok := got[s]
		if !ok {
			t.Errorf("no series %s in the scrape", s)
			continue
		}
		if g != v {
			t.Errorf("%s = %v, want %v", s, g, v)
		}
	}
}

// TestCollector_ScrapedSeries builds a client with the adapter on a real
// ZooKeeper, runs operations, a retry, a watch and a mutex, and scrapes the
// registry over HTTP for the series and counts a dashboard relies on.
func TestCollector_ScrapedSeries(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreAnyFunction(zktest.ServerWaitFunction))
	server := zktest.Start(t)

	col := curatorprom.New(curatorprom.WithConstLabels(prometheus.Labels{"client": "test"}))
	reg := prometheus.NewRegistry()
	reg.MustRegister(col)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	url := srv.URL + "/metrics"

	// Before the client starts: every state's series, at latent.
	expect(t, scrape(t, url), map[string]float64{
		`curator_connection_state{client="test",state="latent"}`:    1,
		`curator_connection_state{client="test",state="connected"}`: 0,
		`curator_connection_state{client="test",state="lost"}`:      0,
	})

	policy, err := retry.NewNTimes(3, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c, err := framework.NewBuilder().ConnectString(server.ConnectString()).RetryPolicy(policy).
		Metrics(col.Metrics()).Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	const p = "/prometheus/node"
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, p, []byte("a")); err != nil {
		t.Fatal(err)
	}
	_, _, watch, err := c.GetData().ForPathW(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetData().ForPath(ctx, p, []byte("b")); err != nil {
		t.Fatal(err)
	}
	if ev := <-watch; ev.Type != zk.EventNodeDataChanged {
		t.Fatalf("watch event %v", ev)
	}
	if _, _, err := c.GetData().ForPath(ctx, "/prometheus/missing"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("get missing: %v", err)
	}
	attempts := 0
	if err := c.Retry(ctx, func() error {
		if attempts++; attempts == 1 {
			return zk.ErrConnectionClosed
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete().ForPath(ctx, p); err != nil {
		t.Fatal(err)
	}
	// StateChanged runs on the client's own goroutine, right after the
	// change: wait for it rather than race it.
	deadline := time.Now().Add(10 * time.Second)
	for scrape(t, url)[`curator_connection_state{client="test",state="connected"}`] != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the connection state gauge never showed connected")
		}
		time.Sleep(10 * time.Millisecond)
	}
	expect(t, scrape(t, url), map[string]float64{
		`curator_operation_duration_seconds_count{client="test",op="create"}`:          1,
		`curator_operation_duration_seconds_count{client="test",op="getData"}`:         2,
		`curator_operation_duration_seconds_count{client="test",op="setData"}`:         1,
		`curator_operation_duration_seconds_count{client="test",op="delete"}`:          1,
		`curator_operation_duration_seconds_count{client="test",op="retry"}`:           1,
		`curator_operation_answers_total{client="test",code="no_node",op="getData"}`:   1,
		`curator_retries_total{client="test",op="retry"}`:                              1,
		`curator_watch_deliveries_total{client="test",type="changed",watch="oneshot"}`: 1,
		`curator_connection_state_changes_total{client="test",state="connected"}`:      1,
		`curator_connection_state{client="test",state="connected"}`:                    1,
		`curator_connection_state{client="test",state="latent"}`:                       0,
	})

	// A mutex: one wait, acquired; a bounded wait that runs out; one hold.
	m, err := mutex.New(c, "/prometheus/lock")
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	timedOut := make(chan error, 1)
	go func() {
		_, ok, err := m.TryAcquire(ctx, 50*time.Millisecond) // another goroutine: not reentrant
		if ok {
			err = errors.New("a held mutex was acquired again")
		}
		timedOut <- err
	}()
	if err := <-timedOut; err != nil {
		t.Fatal(err)
	}
	if err := h.Release(context.WithoutCancel(ctx)); err != nil {
		t.Fatal(err)
	}
	got := scrape(t, url)
	expect(t, got, map[string]float64{
		`curator_lock_wait_seconds_count{client="test",kind="mutex",outcome="acquired"}`: 1,
		`curator_lock_wait_seconds_count{client="test",kind="mutex",outcome="timeout"}`:  1,
		`curator_lock_hold_seconds_count{client="test",kind="mutex",lost="false"}`:       1,
	})
	if s := got[`curator_lock_hold_seconds_sum{client="test",kind="mutex",lost="false"}`]; s <= 0 {
		t.Errorf("mutex hold time sum %v, want > 0", s)
	}

	// Close: the gauge shows closed once Close has returned.
	c.Close()
	expect(t, scrape(t, url), map[string]float64{
		`curator_connection_state{client="test",state="closed"}`:               1,
		`curator_connection_state{client="test",state="connected"}`:            0,
		`curator_connection_state_changes_total{client="test",state="closed"}`: 1,
	})
}

// TestCollector_ZeroIsInert checks that a zero or nil Collector neither
// panics nor reports: it can be registered and scraped, and its hook is
// empty.
func TestCollector_ZeroIsInert(t *testing.T) {
	for _, c := range []*curatorprom.Collector{nil, {}} {
		m := c.Metrics()
		if m.OpDone != nil || m.StateChanged != nil || m.AcquireDone != nil {
			t.Fatalf("%#v.Metrics() has funcs", c)
		}
		ch := make(chan prometheus.Metric, 1)
		c.Collect(ch)
		if len(ch) != 0 {
			t.Fatalf("%#v collected a metric", c)
		}
		reg := prometheus.NewRegistry()
		if err := reg.Register(c); err != nil {
			t.Fatalf("register %#v: %v", c, err)
		}
	}
}

func TestErrorCode(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{zk.ErrNoNode, "no_node"},
		{fmt.Errorf("framework: get /a: %w", zk.ErrNoNode), "no_node"},
		{framework.Indeterminate(zk.ErrConnectionClosed), "connection_closed"},
		{fmt.Errorf("%w (last error: %w)", context.Canceled, zk.ErrConnectionClosed), "canceled"},
		{framework.ErrClosed, "closed"},
		{errors.New("something else"), "other"},
	}
	for _, tc := range cases {
		if got := curatorprom.ErrorCode(tc.err); got != tc.want {
			t.Errorf("ErrorCode(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
