package sharedcount

import (
	"context"

	"github.com/go-curator/curator/framework"
)

// Count is an int32 shared through one ZooKeeper node: Curator's
// SharedCount. It is safe for concurrent use. Build one with New, Start it,
// and Close it when done.
type Count struct{ s *shared[int32] }

// New returns a Count for the node at path, to be created with seed by
// Start if it does not exist. It validates its arguments and does no I/O.
// A nil client or an invalid path is an error.
func New(client *framework.Client, path string, seed int32) (*Count, error) {
	s, err := newShared(client, path, seed, countCodec)
	if err != nil {
		return nil, err
	}
	return &Count{s}, nil
}

func (c *Count) core() *shared[int32] {
	if c == nil {
		return nil
	}
	return c.s
}

// Start creates the node with the seed if it does not exist, reads it and
// starts watching it. It returns an error wrapping ErrCorrupt if the node
// does not hold 4 bytes, ErrAlreadyStarted on a second call, and ErrClosed
// after Close. If Start fails the Count is closed: build a new one.
func (c *Count) Start(ctx context.Context) error { return c.core().start(ctx) }

// Close stops watching, stops the listeners and waits for them. It is
// idempotent. The node stays.
func (c *Count) Close() error { return c.core().Close() }

// Count returns the cached count: the seed before Start, then the last
// value read or written.
func (c *Count) Count() int32 { return c.core().versioned().Value }

// VersionedValue returns the cached count with its version and Mzxid, to
// pass to TrySetCount.
func (c *Count) VersionedValue() VersionedValue[int32] { return c.core().versioned() }

// SetCount writes n whatever the current value. An error matching
// ErrIndeterminate means the count may or may not be n now; the write is
// absolute, so repeating it is safe.
func (c *Count) SetCount(ctx context.Context, n int32) error { return c.core().set(ctx, n) }

// TrySetCount writes n only if the node has not changed since prev, which
// should come from VersionedValue or a listener. It returns false and no
// error when another writer got there first: it then waits a random
// moment of up to two round trips (so writers that lost the same race do
// not race again at once) and until the cache holds the winner's value, so
// VersionedValue gives the value to try again with. A prev older than
// the cache returns false without a round trip. A prev whose version
// overflowed to -1 returns an error wrapping ErrVersionOverflow. If the
// connection was lost before the write's reply, it returns false and an
// error matching ErrIndeterminate: the count may or may not be n now (see
// the package doc); never read that as a lost race.
func (c *Count) TrySetCount(ctx context.Context, prev VersionedValue[int32], n int32) (bool, error) {
	return c.core().trySet(ctx, prev, n)
}

// AddListener adds a listener of value changes, connection states and
// background errors, and returns a function that removes it. Listeners
// may be added before Start. After Close it does nothing.
func (c *Count) AddListener(l Listener[int32]) (remove func()) { return c.core().addListener(l) }

// Value is a byte slice shared through one ZooKeeper node: Curator's
// SharedValue. It works as Count does, without an encoding: the bytes are
// stored as they are, and any bytes are valid.
type Value struct{ s *shared[[]byte] }

// NewValue returns a Value for the node at path, to be created with seed
// by Start if it does not exist. It does no I/O. A nil seed is stored as
// empty data.
func NewValue(client *framework.Client, path string, seed []byte) (*Value, error) {
	s, err := newShared(client, path, seed, bytesCodec)
	if err != nil {
		return nil, err
	}
	return &Value{s}, nil
}

func (v *Value) core() *shared[[]byte] {
	if v == nil {
		return nil
	}
	return v.s
}

// Start creates the node with the seed if it does not exist, reads it and
// starts watching it. If Start fails the Value is closed.
func (v *Value) Start(ctx context.Context) error { return v.core().start(ctx) }

// Close stops watching, stops the listeners and waits for them. It is
// idempotent. The node stays.
func (v *Value) Close() error { return v.core().Close() }

// Value returns a copy of the cached bytes.
func (v *Value) Value() []byte { return v.core().versioned().Value }

// VersionedValue returns a copy of the cached bytes with their version and
// Mzxid, to pass to TrySetValue.
func (v *Value) VersionedValue() VersionedValue[[]byte] { return v.core().versioned() }

// SetValue writes b whatever the current value; see Count.SetCount.
func (v *Value) SetValue(ctx context.Context, b []byte) error { return v.core().set(ctx, b) }

// TrySetValue writes b only if the node has not changed since prev; see
// Count.TrySetCount.
func (v *Value) TrySetValue(ctx context.Context, prev VersionedValue[[]byte], b []byte) (bool, error) {
	return v.core().trySet(ctx, prev, b)
}

// AddListener adds a listener and returns a function that removes it; see
// Count.AddListener.
func (v *Value) AddListener(l Listener[[]byte]) (remove func()) { return v.core().addListener(l) }
