package semaphorev2

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/go-curator/curator/framework"
)

// Lease is one granted lease of a semaphore. Close it (or pass it to
// ReturnLease) when done; if the session ends first, ZooKeeper deletes its
// node and the lease goes back to the pool by itself. A Lease is safe for
// concurrent use.
type Lease struct {
	client *framework.Client
	sem    string // the semaphore's path
	node   string // full path of the lease node, without the namespace
	token  int64
	lost   <-chan struct{}
	closed atomic.Bool
}

// Close deletes the lease node with a guaranteed delete: if the connection
// is down, the delete goes on in the background after Close returns its
// error, until it succeeds or the client closes. Closing a lease again, or
// closing a nil lease, does nothing and returns nil.
func (l *Lease) Close(ctx context.Context) error {
	if l == nil || !l.closed.CompareAndSwap(false, true) {
		return nil
	}
	return l.delete(ctx)
}

func (l *Lease) delete(ctx context.Context) error {
	if err := l.client.Delete().Guaranteed().Quietly().ForPath(ctx, l.node); err != nil {
		return fmt.Errorf("semaphorev2: return lease %s: %w", l.node, err)
	}
	return nil
}

// Data reads the lease node's data: the semaphore's node data, or the
// client's default data. After the lease is closed the error matches
// zk.ErrNoNode.
func (l *Lease) Data(ctx context.Context) ([]byte, error) {
	if l == nil {
		return nil, fmt.Errorf("%w: nil lease", ErrInvalidArgument)
	}
	data, _, err := l.client.GetData().ForPath(ctx, l.node)
	if err != nil {
		return nil, fmt.Errorf("semaphorev2: lease data: %w", err)
	}
	return data, nil
}

// NodeName returns the name of the lease node, as Curator's
// Lease.getNodeName does: _c_<uuid>-lease-<seq10>.
func (l *Lease) NodeName() string {
	if l == nil {
		return ""
	}
	_, name := framework.SplitPath(l.node)
	return name
}

// Path returns the full path of the lease node (without the namespace).
func (l *Lease) Path() string {
	if l == nil {
		return ""
	}
	return l.node
}

// FencingToken returns the pzxid of <path>/leases as read by the read that
// granted the lease: a ZooKeeper transaction ID that grows with every
// change of the leases. With one lease (semaphoremutex) a later holder
// always has a greater token, so a resource that remembers the highest
// token it has seen can reject a stale holder's writes.
func (l *Lease) FencingToken() int64 {
	if l == nil {
		return 0
	}
	return l.token
}

var closedChan = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// Lost returns a channel closed when the lease can no longer be trusted:
// when the session that made its node is lost, whatever the client's error
// policy (a server-reported expiry, the client's simulated expiry, a new
// session, or the client's Close); under the standard error policy also
// at the first Suspended after the grant. Closing the lease does not close
// it. A nil lease returns a closed channel.
func (l *Lease) Lost() <-chan struct{} {
	if l == nil {
		return closedChan
	}
	return l.lost
}
