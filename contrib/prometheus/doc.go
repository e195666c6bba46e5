// Package prometheus exports a go-curator client's metrics to Prometheus.
package prometheus
