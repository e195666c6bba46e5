package recipe

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/retry"
)

func TestRestart(t *testing.T) {
	errGone := errors.New("gone")
	errOther := errors.New("other")
	again := func(err error) bool { return errors.Is(err, errGone) }
	policy, err := retry.NewNTimes(2, 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		results []error
		calls   int
		want    error
	}{
		{"first try", []error{nil}, 1, nil},
		{"restarts then succeeds", []error{errGone, errGone, nil}, 3, nil},
		{"the policy gives up", []error{errGone, errGone, errGone, nil}, 3, errGone},
		{"another error ends it", []error{errGone, errOther, nil}, 2, errOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			v, err := Restart(t.Context(), policy, again, func() (int, error) {
				calls++
				return calls, tt.results[calls-1]
			})
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if calls != tt.calls || v != calls {
				t.Fatalf("%d calls, value %d; want %d calls", calls, v, tt.calls)
			}
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	long, _ := retry.NewNTimes(5, time.Hour)
	_, err = Restart(ctx, long, again, func() (int, error) { return 0, errGone })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled sleep: err = %v", err)
	}
}

func TestJitterAndHex(t *testing.T) {
	for range 1000 {
		if j := Jitter(time.Minute, 20*time.Millisecond); j < 0 || j >= 20*time.Millisecond {
			t.Fatalf("Jitter(1m, 20ms) = %v, want in [0, 20ms)", j)
		}
		if j := Jitter(time.Millisecond, 20*time.Millisecond); j < 0 || j >= 2*time.Millisecond {
			t.Fatalf("Jitter(1ms, 20ms) = %v, want in [0, 2ms)", j)
		}
	}
	if j := Jitter(0, time.Second); j != 0 {
		t.Fatalf("Jitter(0) = %v", j)
	}
	if got := Hex([]byte("foo")); got != "[0x66 0x6f 0x6f]" {
		t.Errorf("Hex(foo) = %s", got)
	}
	if got := Hex(make([]byte, 17)); got != "[0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 ...]" {
		t.Errorf("Hex(17 bytes) = %s", got)
	}
}
