package observe

import (
	"context"
	"slices"
	"testing"

	"github.com/go-curator/curator/framework"
)

// calls records the hook's calls by name and kind.
type calls struct{ got []string }

func (c *calls) metrics(starts, ends bool) framework.Metrics {
	var m framework.Metrics
	if starts {
		m.AcquireStarted = func(i framework.AcquireStartInfo) { c.got = append(c.got, "wait+ "+i.Kind) }
		m.HoldStarted = func(i framework.HoldStartInfo) { c.got = append(c.got, "hold+ "+i.Kind) }
	}
	if ends {
		m.AcquireDone = func(i framework.AcquireInfo) { c.got = append(c.got, "wait- "+i.Kind+" "+i.Outcome.String()) }
		m.Released = func(i framework.HoldInfo) {
			lost := ""
			if i.Lost {
				lost = " lost"
			}
			c.got = append(c.got, "hold- "+i.Kind+lost)
		}
	}
	return m
}

func client(t *testing.T, m framework.Metrics) *framework.Client {
	t.Helper()
	c, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Metrics(m).Build() // no I/O before Start
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestBeginHeld_StartsAndEndsPair checks that each start reaches the hook
// at Begin and Held, and each end at End and Release, whichever of the
// funcs the hook sets.
func TestBeginHeld_StartsAndEndsPair(t *testing.T) {
	lost := make(chan struct{})
	close(lost)
	for _, tc := range []struct {
		name         string
		starts, ends bool
		want         []string
	}{
		{"all", true, true, []string{
			"wait+ mutex", "wait- mutex acquired", "hold+ mutex", "hold- mutex",
			"wait+ mutex", "wait- mutex cancelled", "hold+ leaderlatch", "hold- leaderlatch lost"}},
		{"starts only", true, false, []string{"wait+ mutex", "hold+ mutex", "wait+ mutex", "hold+ leaderlatch"}},
		{"ends only", false, true, []string{
			"wait- mutex acquired", "hold- mutex", "wait- mutex cancelled", "hold- leaderlatch lost"}},
		{"none", false, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &calls{}
			c := client(t, rec.metrics(tc.starts, tc.ends))
			w := Begin(c, framework.KindMutex)
			w.End(true, nil)
			h := Held(c, framework.KindMutex)
			h.Release(make(chan struct{}))
			w = Begin(c, framework.KindMutex)
			w.End(false, context.Canceled)
			h = Held(c, framework.KindLeaderLatch)
			h.Release(lost)
			if !slices.Equal(rec.got, tc.want) {
				t.Errorf("hook calls %q, want %q", rec.got, tc.want)
			}
		})
	}
}

// TestZero_ReportsNothing checks that the zero Wait and Hold, what a
// client without a hook gets, can be ended.
func TestZero_ReportsNothing(t *testing.T) {
	Wait{}.End(true, nil)
	Hold{}.End(false)
	Hold{}.Release(nil)
	c := client(t, framework.Metrics{})
	Begin(c, framework.KindMutex).End(false, nil)
	Held(c, framework.KindMutex).Release(nil)
}

// BenchmarkBeginHeld measures what a recipe's acquire pays for its reports
// (Begin, End, Held, Release) without a hook and with a no-op one.
//
//	go test -run '^$' -bench BeginHeld -count 3 ./internal/observe
func BenchmarkBeginHeld(b *testing.B) {
	noop := framework.Metrics{
		AcquireStarted: func(framework.AcquireStartInfo) {}, AcquireDone: func(framework.AcquireInfo) {},
		HoldStarted: func(framework.HoldStartInfo) {}, Released: func(framework.HoldInfo) {},
	}
	for _, bc := range []struct {
		name string
		m    framework.Metrics
	}{{"nil-hook", framework.Metrics{}}, {"hook", noop}} {
		c, err := framework.NewBuilder().ConnectString("127.0.0.1:2181").Metrics(bc.m).Build()
		if err != nil {
			b.Fatal(err)
		}
		lost := make(chan struct{})
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				Begin(c, framework.KindMutex).End(true, nil)
				Held(c, framework.KindMutex).Release(lost)
			}
		})
		c.Close()
	}
}
