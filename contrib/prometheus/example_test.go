package prometheus_test

import (
	"context"
	"log"
	"net/http"
	"time"

	curatorprom "github.com/go-curator/curator/contrib/prometheus"
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// A client whose operations, retries, states, watches and locks are
// exported on /metrics.
func Example() {
	col := curatorprom.New(curatorprom.WithConstLabels(prometheus.Labels{"ensemble": "orders"}))
	reg := prometheus.NewRegistry()
	reg.MustRegister(col)

	policy, err := retry.NewExponentialBackoff(100*time.Millisecond, 10)
	if err != nil {
		log.Fatal(err)
	}
	client, err := framework.NewBuilder().
		ConnectString("127.0.0.1:2181").
		RetryPolicy(policy).
		Metrics(col.Metrics()).
		Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	// ... serve HTTP, use the client and its recipes ...
}
