package framework

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-zookeeper/zk"
)

// The names of the ACL operations in OpInfo and RetryInfo, beside the
// other OpName constants.
const (
	OpNameGetACL = "getACL" // GetACL().ForPath
	OpNameSetACL = "setACL" // SetACL().ForPath
)

// GetACLBuilder reads a node's ACL. It is a cheap value.
type GetACLBuilder struct {
	c  *Client
	ns *nsNode // a NamespaceView's namespace; nil: the client's
}

// GetACL starts a read of a node's ACL (Curator's getACL).
func (c *Client) GetACL() GetACLBuilder { return GetACLBuilder{c: c} }

// ForPath returns the node's ACL and stat; the stat's Aversion is the
// version SetACL().WithVersion takes. A missing node gives an error
// matching zk.ErrNoNode. Reading an ACL needs no permission on the node.
func (b GetACLBuilder) ForPath(ctx context.Context, path string) ([]zk.ACL, *zk.Stat, error) {
	full, err := b.c.prepareIn(ctx, b.ns, path)
	if err != nil {
		return nil, nil, err
	}
	var (
		acl  []zk.ACL
		stat *zk.Stat
	)
	err = b.c.retryRead(ctx, OpNameGetACL, func() (err error) {
		acl, stat, err = b.c.zkConn().GetACL(full)
		return err
	})
	if err != nil {
		return nil, nil, errtext.Errorf("framework: get ACL %s: %w", path, b.c.explainNoNode(err))
	}
	return acl, stat, nil
}

// SetACLBuilder replaces a node's ACL. It is a cheap value.
type SetACLBuilder struct {
	c       *Client
	version int32
	ns      *nsNode // a NamespaceView's namespace; nil: the client's
}

// SetACL starts a write of a node's ACL (Curator's setACL), of any ACL
// version by default.
func (c *Client) SetACL() SetACLBuilder { return SetACLBuilder{c: c, version: -1} }

// WithVersion writes only if the node's ACL version (Stat.Aversion, not
// its data version) is v; otherwise the error matches zk.ErrBadVersion.
func (b SetACLBuilder) WithVersion(v int32) SetACLBuilder { b.version = v; return b }

// ForPath replaces the node's ACL with acl and returns its new stat. acl
// must hold at least one entry, each with a scheme and permissions within
// zk.PermAll, or ForPath fails with ErrInvalidArgument before any I/O. The
// client's ACL provider is not consulted. A missing node gives an error
// matching zk.ErrNoNode, a session without the ADMIN permission one
// matching zk.ErrNoAuth, and a version that does not match one matching
// zk.ErrBadVersion; a versioned write retried after a lost reply that
// then finds zk.ErrBadVersion may have met its own first attempt, and its
// error also matches ErrIndeterminate, as SetData's does.
func (b SetACLBuilder) ForPath(ctx context.Context, path string, acl ...zk.ACL) (*zk.Stat, error) {
	full, err := b.c.prepareIn(ctx, b.ns, path)
	if err != nil {
		return nil, err
	}
	if len(acl) == 0 {
		return nil, fmt.Errorf("%w: set ACL %s: an empty ACL (ZooKeeper refuses it)", ErrInvalidArgument, path)
	}
	if err := checkACL(acl); err != nil {
		return nil, errtext.Errorf("framework: set ACL %s: %w", path, err)
	}
	acl = append([]zk.ACL(nil), acl...)
	var stat *zk.Stat
	maybe, err := b.c.retryOp(ctx, OpNameSetACL, func(bool) (err error) {
		stat, err = b.c.zkConn().SetACL(full, acl, b.version)
		return err
	})
	if err != nil {
		// As SetData: a versioned write that finds BadVersion on a retry
		// may have met its own first attempt; a connection error leaves
		// it unknown.
		if maybe && (IsRetryable(err) || (b.version != -1 && errors.Is(err, zk.ErrBadVersion))) {
			err = Indeterminate(err)
		}
		return nil, errtext.Errorf("framework: set ACL %s: %w", path, b.c.explainNoNode(err))
	}
	return stat, nil
}
