package framework

import (
	"context"
	"errors"

	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-zookeeper/zk"
)

// GetDataBuilder reads a node's data.
type GetDataBuilder struct {
	c            *Client
	into         chan<- zk.Event
	decompressed bool    // Decompressed
	ns           *nsNode // a NamespaceView's namespace; nil: the client's
}

// GetData starts a read of a node's data.
func (c *Client) GetData() GetDataBuilder { return GetDataBuilder{c: c} }

// Into makes ForPathW send its watch's one event to ch, and return a nil
// channel: several watches can then share one channel (a waiter that
// watches two nodes selects on one channel, and gets their events in the
// order the server sent them). The client never closes ch and never
// blocks on it: an event that finds ch full is dropped, so give ch a free
// slot for each event you need (one, if the first decides).
// A read that fails sets no watch and sends nothing. Into(nil) gives
// ForPathW its own channel again.
func (b GetDataBuilder) Into(ch chan<- zk.Event) GetDataBuilder { b.into = ch; return b }

// Decompressed decompresses the data with the client's compression
// provider (gzip by default), as Curator's decompressed() does: for nodes
// written with CreateBuilder.Compressed or SetDataBuilder.Compressed, by
// this client or by Curator. Data that does not decompress makes ForPath
// fail with an error matching ErrBadCompressedData; the stat (and
// ForPathW's channel, whose watch is set) are returned with it. Under
// Builder.EnableCompression every read decompresses.
func (b GetDataBuilder) Decompressed() GetDataBuilder { b.decompressed = true; return b }

// ForPath returns the node's data and stat.
func (b GetDataBuilder) ForPath(ctx context.Context, path string) ([]byte, *zk.Stat, error) {
	data, stat, _, err := b.get(ctx, path, false)
	return data, stat, err
}

// ForPathW returns the node's data and stat, and sets a one-shot watch on
// its data: the channel gets one event when the data changes, the node is
// deleted, or the watch ends with its session (zk.EventNotWatching).
func (b GetDataBuilder) ForPathW(ctx context.Context, path string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	return b.get(ctx, path, true)
}

func (b GetDataBuilder) get(ctx context.Context, path string, watch bool) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	full, err := b.c.prepareIn(ctx, b.ns, path)
	if err != nil {
		return nil, nil, nil, err
	}
	if watch && b.ns != nil {
		return nil, nil, nil, errViewWatch
	}
	var (
		data []byte
		stat *zk.Stat
		ch   <-chan zk.Event
	)
	err = b.c.retryRead(ctx, OpNameGetData, func() (err error) {
		if watch {
			data, stat, ch, err = b.c.getW(full, b.into)
		} else {
			data, stat, err = b.c.zkConn().Get(full)
		}
		return err
	})
	if err != nil {
		return nil, nil, nil, errtext.Errorf("framework: get %s: %w", path, b.c.explainNoNode(err))
	}
	if data, err = b.c.decompress(b.decompressed, path, data); err != nil {
		return nil, stat, ch, errtext.Errorf("framework: get %s: %w", path, err)
	}
	return data, stat, ch, nil
}

// CheckExistsBuilder reads a node's stat.
type CheckExistsBuilder struct {
	c       *Client
	into    chan<- zk.Event
	parents bool    // CreatingParentContainersIfNeeded
	ns      *nsNode // a NamespaceView's namespace; nil: the client's
}

// CheckExists starts an existence check.
func (c *Client) CheckExists() CheckExistsBuilder { return CheckExistsBuilder{c: c} }

// Into makes ForPathW send its watch's one event to ch, as
// GetDataBuilder.Into does.
func (b CheckExistsBuilder) Into(ch chan<- zk.Event) CheckExistsBuilder { b.into = ch; return b }

// CreatingParentContainersIfNeeded creates the missing parents of the path
// as containers (persistent nodes under Builder.DontUseContainerParents)
// before the check, as Curator's does, so that a watch set on a missing
// node by ForPathW can see it created under a parent that exists. The
// node itself is not created.
func (b CheckExistsBuilder) CreatingParentContainersIfNeeded() CheckExistsBuilder {
	b.parents = true
	return b
}

// ForPath returns the node's stat, or a nil stat and nil error if there is
// no node.
func (b CheckExistsBuilder) ForPath(ctx context.Context, path string) (*zk.Stat, error) {
	stat, _, err := b.exists(ctx, path, false)
	return stat, err
}

// ForPathW is ForPath with a one-shot watch that fires when the node is
// created, changed or deleted. Prefer GetData().ForPathW where the node
// should exist: a watch on a missing node stays on the server until the
// node appears.
func (b CheckExistsBuilder) ForPathW(ctx context.Context, path string) (*zk.Stat, <-chan zk.Event, error) {
	return b.exists(ctx, path, true)
}

func (b CheckExistsBuilder) exists(ctx context.Context, path string, watch bool) (*zk.Stat, <-chan zk.Event, error) {
	full, err := b.c.prepareIn(ctx, b.ns, path)
	if err != nil {
		return nil, nil, err
	}
	if watch && b.ns != nil {
		return nil, nil, errViewWatch
	}
	parents := b.parents && full != "/" && full != b.c.nsPath(b.ns)
	var (
		ok   bool
		stat *zk.Stat
		ch   <-chan zk.Event
	)
	err = b.c.retryRead(ctx, OpNameExists, func() (err error) {
		if parents {
			if err := b.c.ensureNS(b.ns); err != nil {
				return err
			}
			parent, _ := SplitPath(full)
			if err := b.c.mkdirs(parent, b.c.containerParents(true)); err != nil {
				return err
			}
		}
		if watch {
			ok, stat, ch, err = b.c.existsW(full, b.into)
		} else {
			ok, stat, err = b.c.zkConn().Exists(full)
		}
		return err
	})
	if err != nil {
		return nil, nil, errtext.Errorf("framework: exists %s: %w", path, err)
	}
	if !ok {
		stat = nil
	}
	return stat, ch, nil
}

// GetChildrenBuilder lists a node's children.
type GetChildrenBuilder struct {
	c  *Client
	ns *nsNode // a NamespaceView's namespace; nil: the client's
}

// GetChildren starts a listing of a node's children.
func (c *Client) GetChildren() GetChildrenBuilder { return GetChildrenBuilder{c: c} }

// ForPath returns the names of the node's children, in the server's order.
func (b GetChildrenBuilder) ForPath(ctx context.Context, path string) ([]string, error) {
	kids, _, _, err := b.list(ctx, path, false)
	return kids, err
}

// ForPathW is ForPath with a one-shot watch on the children.
func (b GetChildrenBuilder) ForPathW(ctx context.Context, path string) ([]string, <-chan zk.Event, error) {
	kids, _, ch, err := b.list(ctx, path, true)
	return kids, ch, err
}

// ForPathStat is ForPath that also returns the node's own stat, from the
// same read.
func (b GetChildrenBuilder) ForPathStat(ctx context.Context, path string) ([]string, *zk.Stat, error) {
	kids, stat, _, err := b.list(ctx, path, false)
	return kids, stat, err
}

func (b GetChildrenBuilder) list(ctx context.Context, path string, watch bool) ([]string, *zk.Stat, <-chan zk.Event, error) {
	full, err := b.c.prepareIn(ctx, b.ns, path)
	if err != nil {
		return nil, nil, nil, err
	}
	if watch && b.ns != nil {
		return nil, nil, nil, errViewWatch
	}
	var (
		kids []string
		stat *zk.Stat
		ch   <-chan zk.Event
	)
	err = b.c.retryRead(ctx, OpNameGetChildren, func() (err error) {
		if watch {
			kids, stat, ch, err = b.c.childrenW(full)
		} else {
			kids, stat, err = b.c.zkConn().Children(full)
		}
		return err
	})
	if err != nil {
		return nil, nil, nil, errtext.Errorf("framework: children %s: %w", path, b.c.explainNoNode(err))
	}
	return kids, stat, ch, nil
}

// SetDataBuilder writes a node's data.
type SetDataBuilder struct {
	c          *Client
	version    int32
	compressed bool    // Compressed
	ns         *nsNode // a NamespaceView's namespace; nil: the client's
}

// SetData starts a write of a node's data, of any version by default.
func (c *Client) SetData() SetDataBuilder { return SetDataBuilder{c: c, version: -1} }

// WithVersion writes only if the node's data version is v; otherwise the
// error matches zk.ErrBadVersion.
func (b SetDataBuilder) WithVersion(v int32) SetDataBuilder { b.version = v; return b }

// Compressed compresses the data with the client's compression provider
// before it is written, as CreateBuilder.Compressed does.
func (b SetDataBuilder) Compressed() SetDataBuilder { b.compressed = true; return b }

// ForPath writes data and returns the node's new stat.
func (b SetDataBuilder) ForPath(ctx context.Context, path string, data []byte) (*zk.Stat, error) {
	full, err := b.c.prepareIn(ctx, b.ns, path)
	if err != nil {
		return nil, err
	}
	if data, err = b.c.compress(b.compressed, path, data); err != nil {
		return nil, errtext.Errorf("framework: set %s: %w", path, err)
	}
	var stat *zk.Stat
	maybe, err := b.c.retryOp(ctx, OpNameSetData, func(bool) (err error) {
		stat, err = b.c.zkConn().Set(full, data, b.version)
		return err
	})
	if err != nil {
		// A versioned write that finds BadVersion on a retry may have met
		// its own first attempt; a connection error leaves it unknown.
		if maybe && (IsRetryable(err) || (b.version != -1 && errors.Is(err, zk.ErrBadVersion))) {
			err = Indeterminate(err)
		}
		return nil, errtext.Errorf("framework: set %s: %w", path, b.c.explainNoNode(err))
	}
	return stat, nil
}

// SyncBuilder syncs the connected server with the leader.
type SyncBuilder struct{ c *Client }

// Sync starts a sync.
func (c *Client) Sync() SyncBuilder { return SyncBuilder{c} }

// ForPath waits until the server this client talks to has caught up with
// the leader for path, so a following read sees every earlier write.
func (b SyncBuilder) ForPath(ctx context.Context, path string) error {
	full, err := b.c.prepare(ctx, path)
	if err != nil {
		return err
	}
	err = b.c.retryRead(ctx, OpNameSync, func() error {
		_, err := b.c.zkConn().Sync(full)
		return err
	})
	if err != nil {
		return errtext.Errorf("framework: sync %s: %w", path, err)
	}
	return nil
}

// getW, existsW and childrenW run go-zookeeper's W reads with the watch
// registered in c.oneShots, whose channel they return (see oneShots): the
// event's Path is relative to the namespace, and an end of watch tells
// Close (ErrClosed) from a session that ended (zk.ErrSessionExpired).
// Where a persistent watch of the client serves the path, the read is sent
// without a watch (ZOOKEEPER-4466) and the persistent watch fires it.
func (c *Client) getW(full string, into chan<- zk.Event) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	conn, w := c.connWire()
	s, own, served := c.oneShots.pre(conn, full, bitData, w, into)
	var (
		data []byte
		stat *zk.Stat
		err  error
	)
	if served {
		data, stat, err = conn.Get(full)
	} else {
		data, stat, _, err = conn.GetW(full)
	}
	c.oneShots.done(conn, full, s, err)
	if err != nil {
		return nil, nil, nil, err
	}
	return data, stat, own, nil
}

// existsW registers for every event an exists watch can get: go-zookeeper
// sets a data watch on a node that exists and an exist watch on one that
// does not.
func (c *Client) existsW(full string, into chan<- zk.Event) (bool, *zk.Stat, <-chan zk.Event, error) {
	conn, w := c.connWire()
	s, own, served := c.oneShots.pre(conn, full, bitExist, w, into)
	var (
		ok   bool
		stat *zk.Stat
		err  error
	)
	if served {
		ok, stat, err = conn.Exists(full)
	} else {
		ok, stat, _, err = conn.ExistsW(full)
	}
	c.oneShots.done(conn, full, s, err)
	if err != nil {
		return false, nil, nil, err
	}
	return ok, stat, own, nil
}

func (c *Client) childrenW(full string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	conn, w := c.connWire()
	s, own, served := c.oneShots.pre(conn, full, bitChild, w, nil)
	var (
		kids []string
		stat *zk.Stat
		err  error
	)
	if served {
		kids, stat, err = conn.Children(full)
	} else {
		kids, stat, _, err = conn.ChildrenW(full)
	}
	c.oneShots.done(conn, full, s, err)
	if err != nil {
		return nil, nil, nil, err
	}
	return kids, stat, own, nil
}
