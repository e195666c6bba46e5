package framework_test

import (
	"context"
	"log"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/go-curator/curator/framework"
)

// A metrics hook that counts failed operations (not the server's answers
// a caller expects, such as no node), lock waits that ran out, and the
// holds held now, and a logger that shows the client's Info records (its
// session's story) and nothing per operation. Each func only updates a
// counter: the client calls them synchronously.
func ExampleBuilder_Metrics() {
	var failed, timedOut, held atomic.Int64
	client, err := framework.NewBuilder().
		ConnectString("127.0.0.1:2181").
		Logger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))).
		Metrics(framework.Metrics{
			OpDone: func(op framework.OpInfo) {
				if op.Failed() {
					failed.Add(1)
				}
			},
			AcquireDone: func(a framework.AcquireInfo) {
				if a.Outcome == framework.OutcomeTimeout {
					timedOut.Add(1)
				}
			},
			HoldStarted: func(framework.HoldStartInfo) { held.Add(1) },
			Released:    func(framework.HoldInfo) { held.Add(-1) },
		}).
		Build()
	if err != nil {
		log.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	// ... use the client and its recipes; export failed, timedOut and held ...
}
