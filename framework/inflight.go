package framework

import (
	"context"
	"sync"
)

// maxInFlight bounds the requests of the client's own operations that are
// in flight at once; more wait for a place (or for their ctx).
//
// The bound keeps the session's lease alive under a burst: the server
// answers one connection's requests in order, so with ten thousand
// requests queued (ten thousand lock waiters each reading the children at
// once), a ping waits behind all of them, no reply proves for tens of
// seconds that the server heard from the client, and the client must
// declare the session lost (see the lease in events.go); and ZooKeeper
// itself stops reading a connection past its outstanding-request limit
// (globalOutstandingLimit, 1000 by default). With at most maxInFlight
// ahead of it, a ping is answered in a fraction of the session timeout.
const maxInFlight = 256

// inFlight is the client's count of requests in flight. Its zero value is
// ready.
type inFlight struct {
	once  sync.Once
	slots chan struct{}
}

// enter takes a place, waiting for one while ctx lasts.
func (f *inFlight) enter(ctx context.Context) error {
	f.once.Do(func() { f.slots = make(chan struct{}, maxInFlight) })
	select {
	case f.slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case f.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leave gives a place back.
func (f *inFlight) leave() { <-f.slots }
