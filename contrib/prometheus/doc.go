// Package prometheus exports a go-curator client's metrics to Prometheus:
// a [Collector] fills the client's metrics hook (framework.Metrics) with
// histograms, counters and gauges from Prometheus's Go client, and is registered
// like any other collector. It is a module of its own, so that the
// library's module graph keeps only go-zookeeper, uuid and backoff.
//
// Import it under another name, since its name is Prometheus's:
//
//	import curatorprom "github.com/go-curator/curator/contrib/prometheus"
//
//	col := curatorprom.New()
//	prometheus.MustRegister(col)
//	client, err := framework.NewBuilder().
//		ConnectString("zk1:2181,zk2:2181,zk3:2181").
//		RetryPolicy(policy).
//		Metrics(col.Metrics()).
//		Build()
//	http.Handle("/metrics", promhttp.Handler())
//
// The series (see [New] for the labels):
//
//	curator_operation_duration_seconds{op}        histogram
//	curator_operation_errors_total{op,code}       counter, failures only
//	curator_operation_answers_total{op,code}      counter, no_node, node_exists, bad_version, not_empty
//	curator_retries_total{op}                     counter
//	curator_connection_state_changes_total{state} counter
//	curator_connection_state{state}               gauge, 1 for the current state
//	curator_watch_deliveries_total{watch,type}    counter
//	curator_lock_wait_seconds{kind,outcome}       histogram
//	curator_lock_hold_seconds{kind,lost}          histogram
//	curator_lock_waiters{kind}                    gauge, acquires waiting now
//	curator_lock_holders{kind}                    gauge, holds held now
//
// Label values are lower case: state="lost", type="children_changed".
// An expected answer of the server, such as a lock waiter finding its
// predecessor already gone (no_node), is not a failure: it is counted in
// curator_operation_answers_total, not in curator_operation_errors_total
// (see [New]).
//
// Queries a dashboard or an alert may start from:
//
//	# p99 latency of each operation
//	histogram_quantile(0.99, sum by (op, le) (rate(curator_operation_duration_seconds_bucket[5m])))
//	# share of operations that failed, by error
//	sum by (op, code) (rate(curator_operation_errors_total[5m]))
//	  / ignoring(code) group_left sum by (op) (rate(curator_operation_duration_seconds_count[5m]))
//	# share of all operations that failed
//	sum(rate(curator_operation_errors_total[5m])) / sum(rate(curator_operation_duration_seconds_count[5m]))
//	# sessions lost in the last hour
//	increase(curator_connection_state_changes_total{state="lost"}[1h]) > 0
//	# lock acquires that timed out, and p90 of the time a mutex is held
//	sum by (kind) (rate(curator_lock_wait_seconds_count{outcome="timeout"}[5m]))
//	histogram_quantile(0.9, sum by (le) (rate(curator_lock_hold_seconds_bucket{kind="mutex"}[5m])))
//	# a lock held, or waited for, throughout the last 15 minutes: stuck, or very busy
//	min_over_time(curator_lock_holders{kind="mutex"}[15m]) > 0
//	min_over_time(curator_lock_waiters{kind="mutex"}[15m]) > 0
//
// One Collector serves one client. For several clients in a process, give
// each its own labels: New(WithConstLabels(prometheus.Labels{"ensemble": "orders"})).
package prometheus
