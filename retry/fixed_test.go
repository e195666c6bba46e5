package retry

import (
	"math"
	"testing"
	"time"
)

func TestNTimes_StopsAfterN(t *testing.T) {
	tests := []struct {
		name  string
		new   func() (*NTimes, error)
		n     int
		sleep time.Duration
	}{
		{"zero", func() (*NTimes, error) { return NewNTimes(0, time.Second) }, 0, time.Second},
		{"three", func() (*NTimes, error) { return NewNTimes(3, 5*time.Millisecond) }, 3, 5 * time.Millisecond},
		{"no sleep", func() (*NTimes, error) { return NewNTimes(2, 0) }, 2, 0},
		{"one time", func() (*NTimes, error) { return NewOneTime(7 * time.Millisecond) }, 1, 7 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.new()
			require.NoError(t, err)
			for i := range tt.n {
				sleep, ok := p.AllowRetry(i, time.Hour) // elapsed is ignored
				require.True(t, ok, "retry %d", i)
				assert.Equal(t, tt.sleep, sleep)
			}
			for _, i := range []int{tt.n, tt.n + 1, math.MaxInt} {
				_, ok := p.AllowRetry(i, 0)
				assert.False(t, ok, "retry %d", i)
			}
		})
	}
}

func TestUntilElapsed_Boundary(t *testing.T) {
	p, err := NewUntilElapsed(time.Second, 10*time.Millisecond)
	require.NoError(t, err)
	tests := []struct {
		elapsed time.Duration
		ok      bool
	}{
		{0, true},
		{time.Second - time.Nanosecond, true},
		{time.Second, false},
		{time.Second + time.Nanosecond, false},
		{time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.elapsed.String(), func(t *testing.T) {
			for _, retryCount := range []int{0, 1, 1000, math.MaxInt} { // count is ignored
				sleep, ok := p.AllowRetry(retryCount, tt.elapsed)
				assert.Equal(t, tt.ok, ok)
				if ok {
					assert.Equal(t, 10*time.Millisecond, sleep)
				}
			}
		})
	}
}

func TestUntilElapsed_ZeroNeverRetries(t *testing.T) {
	p, err := NewUntilElapsed(0, time.Millisecond)
	require.NoError(t, err)
	_, ok := p.AllowRetry(0, 0)
	assert.False(t, ok)
}

func TestForever_NeverStops(t *testing.T) {
	p, err := NewForever(250 * time.Millisecond)
	require.NoError(t, err)
	tests := []struct {
		retryCount int
		elapsed    time.Duration
	}{
		{0, 0},
		{MaxRetriesLimit + 1, time.Hour},
		{1 << 20, 24 * time.Hour},
		{math.MaxInt, math.MaxInt64},
	}
	for _, tt := range tests {
		sleep, ok := p.AllowRetry(tt.retryCount, tt.elapsed)
		assert.True(t, ok, "retry %d after %v", tt.retryCount, tt.elapsed)
		assert.Equal(t, 250*time.Millisecond, sleep)
	}
}

func TestZeroValues_NeverRetry(t *testing.T) {
	for name, p := range map[string]Policy{
		"ExponentialBackoff": &ExponentialBackoff{},
		"NTimes":             &NTimes{},
		"UntilElapsed":       &UntilElapsed{},
	} {
		t.Run(name, func(t *testing.T) {
			_, ok := p.AllowRetry(0, 0)
			assert.False(t, ok)
		})
	}
}
