package retry

import (
	"fmt"
	"math"
	"testing"
	"time"
)

const samples = 10_000

func TestExponentialBackoff_SleepBounds(t *testing.T) {
	const base = 3 * time.Millisecond
	tests := []struct {
		name     string
		new      func() (*ExponentialBackoff, error)
		maxSleep time.Duration
	}{
		{"default cap", func() (*ExponentialBackoff, error) { return NewExponentialBackoff(base, 29) }, DefaultMaxSleep},
		{"max cap", func() (*ExponentialBackoff, error) { return NewExponentialBackoffMax(base, 29, time.Second) }, time.Second},
		{"bounded", func() (*ExponentialBackoff, error) {
			return NewBoundedExponentialBackoff(base, 50*time.Millisecond, 29)
		}, 50 * time.Millisecond},
		{"cap below base", func() (*ExponentialBackoff, error) { return NewBoundedExponentialBackoff(base, time.Millisecond, 29) }, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.new()
			require.NoError(t, err)
			for _, retryCount := range []int{0, 1, 2, 5, 10, 28} {
				// r in [0, 2^(n+1)), so max(1, r) in [1, 2^(n+1)-1].
				hi := base * time.Duration(1<<(retryCount+1)-1)
				for range samples {
					sleep, ok := p.AllowRetry(retryCount, 0)
					require.True(t, ok, "retry %d", retryCount)
					require.LessOrEqual(t, sleep, tt.maxSleep, "retry %d", retryCount)
					if sleep == tt.maxSleep {
						continue // capped
					}
					require.GreaterOrEqual(t, sleep, base, "retry %d", retryCount)
					require.LessOrEqual(t, sleep, hi, "retry %d", retryCount)
					require.Zero(t, sleep%base, "retry %d: %v is not a multiple of base", retryCount, sleep)
				}
			}
		})
	}
}

func TestExponentialBackoff_CoversRange(t *testing.T) {
	p, err := NewExponentialBackoff(time.Millisecond, 10)
	require.NoError(t, err)
	for _, tt := range []struct {
		retryCount int
		want       []time.Duration
	}{
		{0, []time.Duration{1}},       // max(1, r), r in {0, 1}
		{1, []time.Duration{1, 2, 3}}, // r in {0..3}
		{2, []time.Duration{1, 2, 3, 4, 5, 6, 7}},
	} {
		t.Run(fmt.Sprint("retry ", tt.retryCount), func(t *testing.T) {
			seen := map[time.Duration]bool{}
			for range samples {
				sleep, ok := p.AllowRetry(tt.retryCount, 0)
				require.True(t, ok)
				seen[sleep/time.Millisecond] = true
			}
			got := make([]time.Duration, 0, len(seen))
			for m := range seen {
				got = append(got, m)
			}
			assert.ElementsMatch(t, tt.want, got)
		})
	}
}

func TestExponentialBackoff_MaxRetries(t *testing.T) {
	tests := []struct {
		name       string
		maxRetries int
		want       int // retries allowed
	}{
		{"zero", 0, 0},
		{"three", 3, 3},
		{"at limit", MaxRetriesLimit, 29},
		{"above limit", 30, 29},
		{"far above limit", math.MaxInt, 29},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewExponentialBackoff(time.Nanosecond, tt.maxRetries)
			require.NoError(t, err)
			for i := range tt.want {
				_, ok := p.AllowRetry(i, 0)
				require.True(t, ok, "retry %d", i)
			}
			for _, i := range []int{tt.want, tt.want + 1, 1000, math.MaxInt} {
				_, ok := p.AllowRetry(i, 0)
				assert.False(t, ok, "retry %d", i)
			}
		})
	}
}

func TestExponentialBackoff_NoOverflow(t *testing.T) {
	huge := time.Duration(math.MaxInt64 / 4)
	tests := []struct {
		name     string
		base     time.Duration
		maxSleep time.Duration
	}{
		{"default cap", time.Hour, DefaultMaxSleep},
		{"max duration cap", huge, math.MaxInt64},
		{"base above cap", huge, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewExponentialBackoffMax(tt.base, 29, tt.maxSleep)
			require.NoError(t, err)
			for range samples {
				sleep, ok := p.AllowRetry(28, 0)
				require.True(t, ok)
				require.Positive(t, sleep)
				require.LessOrEqual(t, sleep, tt.maxSleep)
				if sleep != tt.maxSleep {
					require.GreaterOrEqual(t, sleep, tt.base)
				}
			}
		})
	}
}

func TestExponentialBackoff_ZeroBase(t *testing.T) {
	p, err := NewExponentialBackoff(0, 5)
	require.NoError(t, err)
	for i := range 5 {
		sleep, ok := p.AllowRetry(i, 0)
		assert.True(t, ok)
		assert.Zero(t, sleep)
	}
}

func TestExponentialBackoff_NegativeRetryCount(t *testing.T) {
	p, err := NewExponentialBackoff(time.Millisecond, 5)
	require.NoError(t, err)
	sleep, ok := p.AllowRetry(-1, 0) // misuse: must not panic on the shift
	assert.True(t, ok)
	assert.Equal(t, time.Millisecond, sleep)
}

func TestDefaultMaxSleep(t *testing.T) {
	assert.Equal(t, time.Duration(math.MaxInt32)*time.Millisecond, DefaultMaxSleep)
}
