package transport

import "time"

// Clock is the time source of the lease and the pings. Now must carry Go's
// monotonic clock reading (as time.Now does): the lease is the difference
// of two readings, and a wall clock that steps back must not lengthen it.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call of Clock.AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not run, and reports whether it did.
	Stop() bool
}

// System is the process's clock: time.Now, whose readings carry the
// monotonic clock, and time.AfterFunc.
var System Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
