package retry

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
)

func TestConstructors_InvalidArguments(t *testing.T) {
	tests := []struct {
		name    string
		new     func() (Policy, error)
		mention string // the error names the bad argument
	}{
		{"exp negative base", func() (Policy, error) { return NewExponentialBackoff(-time.Millisecond, 3) }, "base"},
		{"exp negative retries", func() (Policy, error) { return NewExponentialBackoff(time.Millisecond, -1) }, "maxRetries"},
		{"exp max negative sleep", func() (Policy, error) { return NewExponentialBackoffMax(time.Millisecond, 3, -1) }, "max sleep"},
		{"bounded negative base", func() (Policy, error) { return NewBoundedExponentialBackoff(-1, time.Second, 3) }, "base"},
		{"bounded negative max", func() (Policy, error) { return NewBoundedExponentialBackoff(1, -time.Second, 3) }, "max sleep"},
		{"bounded negative retries", func() (Policy, error) { return NewBoundedExponentialBackoff(1, time.Second, math.MinInt) }, "maxRetries"},
		{"ntimes negative n", func() (Policy, error) { return NewNTimes(-1, time.Second) }, "n -1"},
		{"ntimes negative sleep", func() (Policy, error) { return NewNTimes(1, -time.Second) }, "sleep"},
		{"onetime negative sleep", func() (Policy, error) { return NewOneTime(-time.Second) }, "sleep"},
		{"elapsed negative max", func() (Policy, error) { return NewUntilElapsed(-time.Second, time.Second) }, "max elapsed"},
		{"elapsed negative sleep", func() (Policy, error) { return NewUntilElapsed(time.Second, -time.Second) }, "sleep"},
		{"forever zero", func() (Policy, error) { return NewForever(0) }, "interval"},
		{"forever negative", func() (Policy, error) { return NewForever(-time.Second) }, "interval"},
		{"backoff nil", func() (Policy, error) { return FromBackOff(nil) }, "backoff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Policy
			require.NotPanics(t, func() {
				var err error
				p, err = tt.new()
				require.ErrorIs(t, err, ErrInvalidArgument)
				assert.Contains(t, err.Error(), tt.mention)
			})
			assert.Nil(t, p)
		})
	}
}

func TestSleep(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Unix(0, 0))
	defer cancel2()
	tests := []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"cancelled long sleep", cancelled, time.Hour, context.Canceled},
		{"cancelled zero sleep", cancelled, 0, context.Canceled},
		{"deadline passed", expired, time.Hour, context.DeadlineExceeded},
		{"live zero sleep", t.Context(), 0, nil},
		{"live negative sleep", t.Context(), -time.Second, nil},
		{"live short sleep", t.Context(), time.Millisecond, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Sleep(tt.ctx, tt.d)
			if tt.want == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tt.want)
			}
		})
	}
}

func TestSleep_CancelledWhileSleeping(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- Sleep(ctx, time.Hour) }()
	cancel()
	assert.ErrorIs(t, <-errc, context.Canceled)
}

func TestBackOffPolicy(t *testing.T) {
	t.Run("constant", func(t *testing.T) {
		p, err := FromBackOff(backoff.NewConstantBackOff(40 * time.Millisecond))
		require.NoError(t, err)
		for i := range 100 {
			sleep, ok := p.AllowRetry(i, 0)
			require.True(t, ok)
			assert.Equal(t, 40*time.Millisecond, sleep)
		}
	})
	t.Run("with max retries", func(t *testing.T) {
		p, err := FromBackOff(backoff.WithMaxRetries(backoff.NewConstantBackOff(time.Millisecond), 3))
		require.NoError(t, err)
		for op := range 2 { // retryCount 0 resets the schedule for the next operation
			for i := range 3 {
				sleep, ok := p.AllowRetry(i, 0)
				require.True(t, ok, "operation %d retry %d", op, i)
				assert.Equal(t, time.Millisecond, sleep)
			}
			_, ok := p.AllowRetry(3, 0)
			assert.False(t, ok, "operation %d", op)
		}
	})
	t.Run("stop", func(t *testing.T) {
		p, err := FromBackOff(&backoff.StopBackOff{})
		require.NoError(t, err)
		_, ok := p.AllowRetry(0, 0)
		assert.False(t, ok)
	})
	t.Run("concurrent", func(t *testing.T) {
		p, err := FromBackOff(backoff.NewExponentialBackOff())
		require.NoError(t, err)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 200 {
					sleep, ok := p.AllowRetry((i+g)%10, 0)
					if ok && sleep < 0 {
						t.Errorf("negative sleep %v", sleep)
					}
				}
			}()
		}
		wg.Wait()
	})
}

func TestErrInvalidArgument(t *testing.T) {
	_, err := NewNTimes(-2, 0)
	assert.True(t, errors.Is(err, ErrInvalidArgument))
	assert.Equal(t, "retry: invalid argument: n -2 is negative", err.Error())
}
