package integration

import (
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
)

// BenchmarkObserve_NilHook measures what the metrics hook costs when it is
// not set (the default) and when it is: the retry loop around an operation
// that does no I/O (the loop's own cost, where the hook's nil checks sit),
// and a getData round trip to a real server.
//
//	go test -run '^$' -bench 'Observe_NilHook/retry-loop' -benchtime 500000x -count 3 ./integration
//	go test -run '^$' -bench 'Observe_NilHook/getData' -benchtime 2s ./integration
func BenchmarkObserve_NilHook(b *testing.B) {
	noop := func(framework.OpInfo) {}
	for _, bc := range []struct {
		name string
		m    framework.Metrics
	}{
		{"nil-hook", framework.Metrics{}},
		{"hook", framework.Metrics{OpDone: noop}},
	} {
		c := startClient(b, builder(b, zktest.Shared(b).ConnectString()).Metrics(bc.m))
		if _, err := c.Create().CreatingParentsIfNeeded().ForPath(b.Context(), "/it/bench-observe", nil); err != nil {
			b.Log(err) // left by an earlier run
		}
		b.Run("retry-loop/"+bc.name, func(b *testing.B) {
			ctx := b.Context()
			op := func() error { return nil }
			for b.Loop() {
				if err := c.Retry(ctx, op); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("getData/"+bc.name, func(b *testing.B) {
			ctx := b.Context()
			for b.Loop() {
				if _, _, err := c.GetData().ForPath(ctx, "/it/bench-observe"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
