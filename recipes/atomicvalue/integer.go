package atomicvalue

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/atomiccore"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/retry"
)

// Integer is a distributed int32 counter: Curator's
// DistributedAtomicInteger. It is safe for concurrent use and holds no
// resources, so it has no Start or Close.
//
// The zero Integer is not usable: make one with [NewInteger]. Its
// methods, and those of a nil *Integer, return an error matching
// [ErrInvalidArgument]; none panics. An Integer must not be copied after
// first use.
type Integer struct {
	c *atomiccore.Core[int32]
}

// intLen is the length of an encoded Integer: Curator's 4-byte int.
const intLen = 4

// intCodec is Curator's int: 4 bytes, big-endian.
var intCodec = atomiccore.Codec[int32]{Encode: encodeInt, Decode: decodeInt, Equal: func(a, b int32) bool { return a == b }}

// encodeInt returns n as Curator writes it: 4 bytes, big-endian.
func encodeInt(n int32) []byte {
	return binary.BigEndian.AppendUint32(make([]byte, 0, intLen), uint32(n))
}

// decodeInt reads a value as Curator does: no data is 0, 4 bytes are a
// big-endian int32. Any other length is an error wrapping ErrCorrupt that
// names path.
func decodeInt(path string, b []byte) (int32, error) {
	switch len(b) {
	case 0:
		return 0, nil
	case intLen:
		return int32(binary.BigEndian.Uint32(b)), nil
	}
	return 0, fmt.Errorf("%w in %s: %d bytes %s, want %d", ErrCorrupt, path, len(b), recipe.Hex(b), intLen)
}

// NewInteger returns an Integer stored at path, with the arguments and
// checks of [New].
func NewInteger(client *framework.Client, path string, policy retry.Policy, opts ...Option) (*Integer, error) {
	c, err := newCore(client, path, policy, intCodec, opts)
	if err != nil {
		return nil, err
	}
	return &Integer{c: c}, nil
}

func (n *Integer) check(ctx context.Context) error {
	if n == nil {
		return check[int32](ctx, nil, true, "Integer")
	}
	return check(ctx, n.c, n.c == nil, "Integer")
}

func same(n int32) int32 { return n }

// Get reads the value; a missing node reads as 0. Its Result always
// succeeds, with PreValue == PostValue.
func (n *Integer) Get(ctx context.Context) (Result[int32], error) {
	if err := n.check(ctx); err != nil {
		return Result[int32]{}, err
	}
	r, err := n.c.Get(ctx)
	return result(r, same), err
}

// Increment adds 1; see Add.
func (n *Integer) Increment(ctx context.Context) (Result[int32], error) { return n.Add(ctx, 1) }

// Decrement subtracts 1; see Add.
func (n *Integer) Decrement(ctx context.Context) (Result[int32], error) { return n.Add(ctx, -1) }

// Add adds delta with a compare-and-set, creating the node if it is
// missing, under the optimistic policy and then the promoted lock, if any.
// Arithmetic wraps around, as Java's int does in Curator. Succeeded is
// false, without an error, when every try lost to another writer. If the
// connection was lost before a write's reply, Add stops there with an
// error matching ErrIndeterminate: the addition may or may not have
// happened (once at most), and the Result holds the values of that write.
func (n *Integer) Add(ctx context.Context, delta int32) (Result[int32], error) {
	return n.trySet(ctx, func(prev int32) int32 { return prev + delta })
}

// Subtract subtracts delta; see Add.
func (n *Integer) Subtract(ctx context.Context, delta int32) (Result[int32], error) {
	return n.trySet(ctx, func(prev int32) int32 { return prev - delta })
}

// TrySet sets the value to v with a compare-and-set, like Add.
func (n *Integer) TrySet(ctx context.Context, v int32) (Result[int32], error) {
	return n.trySet(ctx, func(int32) int32 { return v })
}

func (n *Integer) trySet(ctx context.Context, next func(int32) int32) (Result[int32], error) {
	if err := n.check(ctx); err != nil {
		return Result[int32]{}, err
	}
	r, err := n.c.TrySet(ctx, next)
	return result(r, same), err
}

// CompareAndSet sets the value to v if it is expected, in one try. A
// missing node never matches: call Initialize first. (Unlike Curator,
// which compares bytes, an existing node with no data matches 0.) If the
// connection was lost before the write's reply, the error matches
// ErrIndeterminate: the value may or may not be v now.
func (n *Integer) CompareAndSet(ctx context.Context, expected, v int32) (Result[int32], error) {
	if err := n.check(ctx); err != nil {
		return Result[int32]{}, err
	}
	r, err := n.c.CompareAndSet(ctx, expected, v)
	return result(r, same), err
}

// ForceSet writes v whatever the current value, creating the node if it
// is missing. It has no atomicity guarantee, and is safe to repeat after
// an error matching ErrIndeterminate.
func (n *Integer) ForceSet(ctx context.Context, v int32) error {
	if err := n.check(ctx); err != nil {
		return err
	}
	return n.c.ForceSet(ctx, v)
}

// Initialize creates the node with the value v if it does not exist, and
// reports whether it did. If the connection was lost before the create's
// reply, the error matches ErrIndeterminate: this call may or may not have
// created the node.
func (n *Integer) Initialize(ctx context.Context, v int32) (bool, error) {
	if err := n.check(ctx); err != nil {
		return false, err
	}
	return n.c.Initialize(ctx, v)
}
