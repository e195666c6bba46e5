package atomicvalue

import (
	"bytes"
	"context"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/atomiccore"
	"github.com/go-curator/curator/retry"
)

// Value is a distributed byte string changed by compare-and-set: Curator's
// DistributedAtomicValue. It is safe for concurrent use and holds no
// resources, so it has no Start or Close.
//
// The zero Value is not usable: make one with [New]. Its methods, and
// those of a nil *Value, return an error matching [ErrInvalidArgument];
// none panics. A Value must not be copied after first use. The slices
// a Value takes and returns are copies: the caller may change them.
type Value struct {
	c *atomiccore.Core[[]byte]
}

// byteCodec stores bytes as they are.
var byteCodec = atomiccore.Codec[[]byte]{
	Encode: func(b []byte) []byte { return b },
	Decode: func(_ string, data []byte) ([]byte, error) { return data, nil },
	Equal:  bytes.Equal,
}

// New returns a Value stored at path. policy decides how many tries an
// operation makes, before and under the promoted lock (see the package
// doc). New validates its arguments and does no I/O: a nil client or
// policy, an invalid path or the root, a bad promoted lock or a nil
// option is an error.
func New(client *framework.Client, path string, policy retry.Policy, opts ...Option) (*Value, error) {
	c, err := newCore(client, path, policy, byteCodec, opts)
	if err != nil {
		return nil, err
	}
	return &Value{c: c}, nil
}

func (v *Value) check(ctx context.Context) error {
	if v == nil {
		return check[[]byte](ctx, nil, true, "Value")
	}
	return check(ctx, v.c, v.c == nil, "Value")
}

// Get reads the value: nil for a missing node. Its Result always
// succeeds, with PreValue equal to PostValue.
func (v *Value) Get(ctx context.Context) (Result[[]byte], error) {
	if err := v.check(ctx); err != nil {
		return Result[[]byte]{}, err
	}
	r, err := v.c.Get(ctx)
	return result(r, bytes.Clone), err
}

// TrySet sets the value to b with compare-and-set tries, creating the node
// if it is missing, under the optimistic policy and then the promoted
// lock, if any. Succeeded is false, without an error, when every try lost
// to another writer. If the connection was lost before a write's reply,
// TrySet stops there with an error matching ErrIndeterminate: the value
// may or may not be b.
func (v *Value) TrySet(ctx context.Context, b []byte) (Result[[]byte], error) {
	if err := v.check(ctx); err != nil {
		return Result[[]byte]{}, err
	}
	b = bytes.Clone(b)
	r, err := v.c.TrySet(ctx, func([]byte) []byte { return b })
	return result(r, bytes.Clone), err
}

// CompareAndSet sets the value to b if it is expected (nil and empty are
// equal), in one try. A missing node never matches: call Initialize
// first. If the connection was lost before the write's reply, the error
// matches ErrIndeterminate: the value may or may not be b now.
func (v *Value) CompareAndSet(ctx context.Context, expected, b []byte) (Result[[]byte], error) {
	if err := v.check(ctx); err != nil {
		return Result[[]byte]{}, err
	}
	r, err := v.c.CompareAndSet(ctx, expected, bytes.Clone(b))
	return result(r, bytes.Clone), err
}

// ForceSet writes b whatever the current value, creating the node if it is
// missing. It has no atomicity guarantee, and is safe to repeat after an
// error matching ErrIndeterminate.
func (v *Value) ForceSet(ctx context.Context, b []byte) error {
	if err := v.check(ctx); err != nil {
		return err
	}
	return v.c.ForceSet(ctx, bytes.Clone(b))
}

// Initialize creates the node with the value b if it does not exist, and
// reports whether it did. If the connection was lost before the create's
// reply, the error matches ErrIndeterminate: this call may or may not have
// created the node.
func (v *Value) Initialize(ctx context.Context, b []byte) (bool, error) {
	if err := v.check(ctx); err != nil {
		return false, err
	}
	return v.c.Initialize(ctx, bytes.Clone(b))
}
