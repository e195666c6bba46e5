package prometheus

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/go-curator/curator/framework"
	"github.com/go-zookeeper/zk"
	"github.com/prometheus/client_golang/prometheus"
)

// Collector turns a go-curator client's metrics hook into Prometheus
// metrics. Register it with a prometheus.Registerer and pass
// [Collector.Metrics] to framework.Builder.Metrics. It is safe for
// concurrent use. Make one with [New]. The zero Collector, and a nil
// *Collector, collect nothing, and their Metrics is the zero hook.
//
// One Collector serves one client: its connection state gauge shows one
// client's state. For several clients in one registry, give each
// Collector its own labels with [WithConstLabels].
type Collector struct {
	opDuration  *prometheus.HistogramVec
	opErrors    *prometheus.CounterVec
	opAnswers   *prometheus.CounterVec
	retries     *prometheus.CounterVec
	stateChange *prometheus.CounterVec
	state       *prometheus.GaugeVec
	watches     *prometheus.CounterVec
	lockWait    *prometheus.HistogramVec
	lockHold    *prometheus.HistogramVec
	waiters     *prometheus.GaugeVec
	holders     *prometheus.GaugeVec
}

// Option configures a Collector.
type Option func(*options)

type options struct {
	labels      prometheus.Labels
	opBuckets   []float64
	lockBuckets []float64
}

// WithConstLabels adds labels to every metric of the Collector, such as
// the name of the ensemble or client when a process has several.
func WithConstLabels(l prometheus.Labels) Option {
	return func(o *options) {
		o.labels = prometheus.Labels{}
		for k, v := range l {
			o.labels[k] = v
		}
	}
}

// WithOpBuckets sets the buckets, in seconds, of the operation latency
// histogram. The default runs from 0.5 ms to about 4 s.
func WithOpBuckets(b []float64) Option {
	return func(o *options) { o.opBuckets = append([]float64(nil), b...) }
}

// WithLockBuckets sets the buckets, in seconds, of the lock wait and hold
// histograms. The default runs from 1 ms to about 17 minutes.
func WithLockBuckets(b []float64) Option {
	return func(o *options) { o.lockBuckets = append([]float64(nil), b...) }
}

// The states of the connection state gauge.
var states = []framework.ConnectionState{framework.Latent, framework.Connected, framework.Suspended,
	framework.Reconnected, framework.Lost, framework.ReadOnly, framework.Closed}

// The recipe kinds whose waiter and holder gauges exist from the start.
var kinds = []string{framework.KindMutex, framework.KindReadLock, framework.KindWriteLock,
	framework.KindSemaphore, framework.KindLeaderLatch, framework.KindLeaderSelector}

// New returns a Collector with these metrics:
//
//	curator_operation_duration_seconds{op}          histogram: each operation, success or not
//	curator_operation_errors_total{op,code}         counter: operations that failed
//	curator_operation_answers_total{op,code}        counter: operations the server answered no_node, node_exists, bad_version or not_empty
//	curator_retries_total{op}                       counter: retries of an operation
//	curator_connection_state_changes_total{state}   counter: changes to each state
//	curator_connection_state{state}                 gauge: 1 for the current state, 0 for the others
//	curator_watch_deliveries_total{watch,type}      counter: watch events delivered (watch: lasting, oneshot)
//	curator_lock_wait_seconds{kind,outcome}         histogram: lock and lease acquires
//	curator_lock_hold_seconds{kind,lost}            histogram: lock and lease holds, at release
//	curator_lock_waiters{kind}                      gauge: lock and lease acquires waiting now
//	curator_lock_holders{kind}                      gauge: locks, leases and leaderships held now
//
// op is a framework.OpName (create, delete, exists, getData, setData,
// getChildren, sync, multi, watch, retry); code is ZooKeeper's error in
// snake case (no_node, node_exists, bad_version, connection_closed,
// session_expired, ...), or canceled, deadline_exceeded, closed,
// connection_timeout, other (see [ErrorCode]); state is a connection
// state in lower case (latent, connected, suspended, reconnected, lost,
// read_only, closed); type is a watch event's type in lower case
// (created, changed, deleted, children_changed, synced, resynced, failed,
// not_watching); kind is a framework Kind (mutex, rwlock-read,
// rwlock-write, semaphorev2, leaderlatch, leaderselector); outcome is
// acquired, timeout, cancelled or error; lost is true or false. Every
// state's gauge series exists from the start (at 0, latent at 1), and
// so do the waiter and holder series of every kind (at 0).
//
// An operation that ends in an error is counted once, in one of two
// counters. The server's definite answers about the data, no_node,
// node_exists, bad_version and not_empty, go to
// curator_operation_answers_total: they are often what the caller
// expected (a lock waiter whose predecessor is already gone, a Quietly
// delete of a missing node, a create that finds its node made), and the
// client cannot tell which ones were. Every other error (a lost
// connection, an expired session, a timeout, a cancelled ctx, a refused
// authorization, ...) is a failure and goes to
// curator_operation_errors_total; framework.OpInfo.Failed draws the
// line.
//
// A waiter counts from the start of an acquire to its end, however it
// ends. A holder counts from the grant to the release: a lost lock,
// lease or leadership counts until its holder releases it, as the
// recipes ask (a leader latch's term ends by itself when lost).
func New(opts ...Option) *Collector {
	o := options{
		opBuckets:   prometheus.ExponentialBuckets(0.0005, 2, 14),
		lockBuckets: prometheus.ExponentialBuckets(0.001, 4, 11),
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	c := &Collector{
		opDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "curator_operation_duration_seconds", ConstLabels: o.labels, Buckets: o.opBuckets,
			Help: "Time of a ZooKeeper operation in the client's retry loop, every attempt and sleep included.",
		}, []string{"op"}),
		opErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "curator_operation_errors_total", ConstLabels: o.labels,
			Help: "Operations that failed (connection loss, session expiry, timeout, auth, ...), by operation and error code.",
		}, []string{"op", "code"}),
		opAnswers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "curator_operation_answers_total", ConstLabels: o.labels,
			Help: "Operations the server answered no_node, node_exists, bad_version or not_empty, often expected: not failures.",
		}, []string{"op", "code"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "curator_retries_total", ConstLabels: o.labels,
			Help: "Retries of an operation after a retryable error.",
		}, []string{"op"}),
		stateChange: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "curator_connection_state_changes_total", ConstLabels: o.labels,
			Help: "Changes of the client's connection state, by new state.",
		}, []string{"state"}),
		state: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "curator_connection_state", ConstLabels: o.labels,
			Help: "The client's connection state: 1 for the current state, 0 for the others.",
		}, []string{"state"}),
		watches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "curator_watch_deliveries_total", ConstLabels: o.labels,
			Help: "Watch events delivered, by watch (lasting, oneshot) and event type.",
		}, []string{"watch", "type"}),
		lockWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "curator_lock_wait_seconds", ConstLabels: o.labels, Buckets: o.lockBuckets,
			Help: "Time a lock or lease acquire waited, by recipe and outcome.",
		}, []string{"kind", "outcome"}),
		lockHold: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "curator_lock_hold_seconds", ConstLabels: o.labels, Buckets: o.lockBuckets,
			Help: "Time a lock or lease was held, at its release, by recipe and whether it was lost first.",
		}, []string{"kind", "lost"}),
		waiters: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "curator_lock_waiters", ConstLabels: o.labels,
			Help: "Lock and lease acquires waiting now, by recipe.",
		}, []string{"kind"}),
		holders: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "curator_lock_holders", ConstLabels: o.labels,
			Help: "Locks, leases and leaderships held now (granted, not yet released), by recipe.",
		}, []string{"kind"}),
	}
	c.setState(framework.Latent)
	for _, k := range kinds {
		c.waiters.WithLabelValues(k)
		c.holders.WithLabelValues(k)
	}
	return c
}

// Describe sends the descriptors of the Collector's metrics.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.collectors() {
		m.Describe(ch)
	}
}

// Collect sends the Collector's metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.collectors() {
		m.Collect(ch)
	}
}

func (c *Collector) collectors() []prometheus.Collector {
	if c == nil || c.opDuration == nil {
		return nil
	}
	return []prometheus.Collector{c.opDuration, c.opErrors, c.opAnswers, c.retries, c.stateChange, c.state,
		c.watches, c.lockWait, c.lockHold, c.waiters, c.holders}
}

// Metrics returns the hook to pass to framework.Builder.Metrics. Each of
// its funcs updates a counter, a gauge or a histogram and never blocks.
func (c *Collector) Metrics() framework.Metrics {
	if c == nil || c.opDuration == nil {
		return framework.Metrics{}
	}
	return framework.Metrics{
		OpDone:         c.opDone,
		Retrying:       c.retrying,
		StateChanged:   c.stateChanged,
		WatchDelivered: c.watchDelivered,
		AcquireStarted: c.acquireStarted,
		AcquireDone:    c.acquireDone,
		HoldStarted:    c.holdStarted,
		Released:       c.released,
	}
}

func (c *Collector) opDone(i framework.OpInfo) {
	c.opDuration.WithLabelValues(i.Op).Observe(i.Duration.Seconds())
	switch {
	case i.Failed():
		c.opErrors.WithLabelValues(i.Op, ErrorCode(i.Err)).Inc()
	case i.Err != nil:
		c.opAnswers.WithLabelValues(i.Op, ErrorCode(i.Err)).Inc()
	}
}

func (c *Collector) retrying(i framework.RetryInfo) { c.retries.WithLabelValues(i.Op).Inc() }

func (c *Collector) stateChanged(i framework.StateInfo) {
	c.stateChange.WithLabelValues(stateLabel(i.State)).Inc()
	c.setState(i.State)
}

// stateLabel returns the state label of s: its name in lower case, as
// Prometheus's label values are ("lost", "read_only").
func stateLabel(s framework.ConnectionState) string { return strings.ToLower(s.String()) }

// setState sets the gauge of s to 1 and the others to 0. The client
// reports its states in order, from one goroutine.
func (c *Collector) setState(s framework.ConnectionState) {
	for _, st := range states {
		v := 0.0
		if st == s {
			v = 1
		}
		c.state.WithLabelValues(stateLabel(st)).Set(v)
	}
}

func (c *Collector) watchDelivered(i framework.WatchInfo) {
	watch := "oneshot"
	if i.Lasting {
		watch = "lasting"
	}
	c.watches.WithLabelValues(watch, strings.ToLower(i.Type)).Inc()
}

func (c *Collector) acquireStarted(i framework.AcquireStartInfo) {
	c.waiters.WithLabelValues(i.Kind).Inc()
}

func (c *Collector) acquireDone(i framework.AcquireInfo) {
	c.waiters.WithLabelValues(i.Kind).Dec()
	c.lockWait.WithLabelValues(i.Kind, i.Outcome.String()).Observe(i.Duration.Seconds())
}

func (c *Collector) holdStarted(i framework.HoldStartInfo) {
	c.holders.WithLabelValues(i.Kind).Inc()
}

func (c *Collector) released(i framework.HoldInfo) {
	c.holders.WithLabelValues(i.Kind).Dec()
	c.lockHold.WithLabelValues(i.Kind, strconv.FormatBool(i.Lost)).Observe(i.Duration.Seconds())
}

// codes maps errors to the code label, in the order they are tried: the
// caller's and the client's own ends first, then ZooKeeper's answers.
var codes = []struct {
	err  error
	code string
}{
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "deadline_exceeded"},
	{framework.ErrClosed, "closed"},
	{framework.ErrConnectionTimeout, "connection_timeout"},
	{zk.ErrNoNode, "no_node"},
	{zk.ErrNodeExists, "node_exists"},
	{zk.ErrBadVersion, "bad_version"},
	{zk.ErrNotEmpty, "not_empty"},
	{zk.ErrNoChildrenForEphemerals, "no_children_for_ephemerals"},
	{zk.ErrNoAuth, "no_auth"},
	{zk.ErrAuthFailed, "auth_failed"},
	{zk.ErrInvalidACL, "invalid_acl"},
	{zk.ErrBadArguments, "bad_arguments"},
	{zk.ErrSessionExpired, "session_expired"},
	{zk.ErrSessionMoved, "session_moved"},
	{zk.ErrConnectionClosed, "connection_closed"},
	{zk.ErrNoServer, "no_server"},
	{zk.ErrClosing, "closing"},
	{zk.ErrAPIError, "api_error"},
	{zk.ErrUnknown, "unknown"},
}

// ErrorCode returns the code label of an operation's error: ZooKeeper's
// error in snake case ("no_node", "connection_closed", ...), "canceled" or
// "deadline_exceeded" for the ctx's end, "closed" for a closed client,
// "connection_timeout" for no connection within the connection timeout,
// "other" for anything else, and "" for nil. The code does not say
// whether the error is a failure: see framework.OpInfo.Failed.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return "other"
}
