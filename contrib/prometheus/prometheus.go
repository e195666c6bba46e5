package prometheus

import (
	"context"
	"errors"
	"strconv"

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
	retries     *prometheus.CounterVec
	stateChange *prometheus.CounterVec
	state       *prometheus.GaugeVec
	watches     *prometheus.CounterVec
	lockWait    *prometheus.HistogramVec
	lockHold    *prometheus.HistogramVec
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

// New returns a Collector with these metrics:
//
//	curator_operation_duration_seconds{op}          histogram: each operation, success or not
//	curator_operation_errors_total{op,code}         counter: operations that ended in an error
//	curator_retries_total{op}                       counter: retries of an operation
//	curator_connection_state_changes_total{state}   counter: changes to each state
//	curator_connection_state{state}                 gauge: 1 for the current state, 0 for the others
//	curator_watch_deliveries_total{watch,type}      counter: watch events delivered (watch: lasting, oneshot)
//	curator_lock_wait_seconds{kind,outcome}         histogram: lock and lease acquires
//	curator_lock_hold_seconds{kind,lost}            histogram: lock and lease holds, at release
//
// op is a framework.OpName (create, delete, exists, getData, setData,
// getChildren, sync, multi, watch, retry); code is ZooKeeper's error in
// snake case (no_node, node_exists, bad_version, connection_closed,
// session_expired, ...), or canceled, deadline_exceeded, closed,
// connection_timeout, other; kind is a framework Kind (mutex,
// rwlock-read, rwlock-write, semaphorev2, leaderlatch, leaderselector); outcome is
// acquired, timeout, cancelled or error; lost is true or false. Every
// state's gauge series exists from the start (at 0, LATENT at 1).
//
// Note that an error code is the server's answer, not always a failure
// of the caller's: a Quietly delete of a missing node counts no_node.
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
			Help: "Operations that ended in an error, by operation and error code.",
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
	}
	c.setState(framework.Latent)
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
	return []prometheus.Collector{c.opDuration, c.opErrors, c.retries, c.stateChange, c.state,
		c.watches, c.lockWait, c.lockHold}
}

// Metrics returns the hook to pass to framework.Builder.Metrics. Each of
// its funcs updates a counter or a histogram and never blocks.
func (c *Collector) Metrics() framework.Metrics {
	if c == nil || c.opDuration == nil {
		return framework.Metrics{}
	}
	return framework.Metrics{
		OpDone:         c.opDone,
		Retrying:       c.retrying,
		StateChanged:   c.stateChanged,
		WatchDelivered: c.watchDelivered,
		AcquireDone:    c.acquireDone,
		Released:       c.released,
	}
}

func (c *Collector) opDone(i framework.OpInfo) {
	c.opDuration.WithLabelValues(i.Op).Observe(i.Duration.Seconds())
	if i.Err != nil {
		c.opErrors.WithLabelValues(i.Op, ErrorCode(i.Err)).Inc()
	}
}

func (c *Collector) retrying(i framework.RetryInfo) { c.retries.WithLabelValues(i.Op).Inc() }

func (c *Collector) stateChanged(i framework.StateInfo) {
	c.stateChange.WithLabelValues(i.State.String()).Inc()
	c.setState(i.State)
}

// setState sets the gauge of s to 1 and the others to 0. The client
// reports its states in order, from one goroutine.
func (c *Collector) setState(s framework.ConnectionState) {
	for _, st := range states {
		v := 0.0
		if st == s {
			v = 1
		}
		c.state.WithLabelValues(st.String()).Set(v)
	}
}

func (c *Collector) watchDelivered(i framework.WatchInfo) {
	watch := "oneshot"
	if i.Lasting {
		watch = "lasting"
	}
	c.watches.WithLabelValues(watch, i.Type).Inc()
}

func (c *Collector) acquireDone(i framework.AcquireInfo) {
	c.lockWait.WithLabelValues(i.Kind, i.Outcome.String()).Observe(i.Duration.Seconds())
}

func (c *Collector) released(i framework.HoldInfo) {
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
// "other" for anything else, and "" for nil.
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
