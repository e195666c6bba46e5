package transport

import (
	"context"
	"sync"
)

// MaxInFlight bounds the requests of the client's own operations that are
// in flight at once; more wait for a place (or for their ctx).
//
// The bound keeps the session's lease alive under a burst: the server
// answers one connection's requests in order, so with ten thousand
// requests queued (ten thousand lock waiters each reading the children at
// once), a ping waits behind all of them, no reply proves for tens of
// seconds that the server heard from the client, and the client must
// declare the session lost (see Wire.LeaseEnd); and ZooKeeper
// itself stops reading a connection past its outstanding-request limit
// (globalOutstandingLimit, 1000 by default). With at most MaxInFlight
// ahead of it, a ping is answered in a fraction of the session timeout.
const MaxInFlight = 256

// InFlight is the client's count of requests in flight. Its zero value is
// ready.
type InFlight struct {
	once  sync.Once
	slots chan struct{}
}

// Enter takes a place, waiting for one while ctx lasts.
func (f *InFlight) Enter(ctx context.Context) error {
	f.once.Do(func() { f.slots = make(chan struct{}, MaxInFlight) })
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

// Leave gives a place back.
func (f *InFlight) Leave() { <-f.slots }
