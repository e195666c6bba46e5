package framework

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-zookeeper/zk"
)

// OpType names the kind of one operation in a transaction.
type OpType int

// The operations a transaction can hold.
const (
	OpCreate OpType = iota
	OpDelete
	OpSetData
	OpCheck
)

// OpResult is the outcome of one operation of a committed transaction.
type OpResult struct {
	Type OpType
	// Path is the operation's path without the namespace; for a sequential
	// create, the path the server made.
	Path string
	// Stat is the node's new stat, for SetData.
	Stat *zk.Stat
	// Err is this operation's error when the transaction failed.
	Err error
}

type txOp struct {
	typ     OpType
	path    string
	data    []byte
	mode    CreateMode
	ttl     time.Duration
	version int32
}

// Transaction collects operations and commits them atomically with
// ZooKeeper's multi. It is a cheap value: each method returns a changed
// copy that shares nothing with the original.
type Transaction struct {
	c    *Client
	ops  []txOp
	ns   *nsNode // a NamespaceView's namespace; nil: the client's
	sess int64   // InSession's session; 0: any
}

// Transaction starts an empty transaction.
func (c *Client) Transaction() Transaction { return Transaction{c: c} }

func (t Transaction) add(op txOp) Transaction {
	t.ops = append(t.ops[:len(t.ops):len(t.ops)], op)
	return t
}

// Create adds the creation of a node. A Container node is created as
// ZooKeeper's createContainer operation, as Curator's transactions do. A
// TTL mode needs its TTL: use CreateTTL (Create with a TTL mode fails
// Commit with ErrInvalidArgument).
func (t Transaction) Create(path string, data []byte, mode CreateMode) Transaction {
	return t.add(txOp{typ: OpCreate, path: path, data: data, mode: mode})
}

// CreateTTL adds the creation of a PersistentWithTTL or
// PersistentSequentialWithTTL node with its TTL (1 ms to MaxTTL, in whole
// milliseconds), as ZooKeeper's createTTL operation; the server needs
// extendedTypesEnabled=true, else Commit fails with ErrTTLNotEnabled.
func (t Transaction) CreateTTL(path string, data []byte, mode CreateMode, ttl time.Duration) Transaction {
	return t.add(txOp{typ: OpCreate, path: path, data: data, mode: mode, ttl: ttl})
}

// InSession binds the transaction to session s: Commit sends it (and any
// retry after a lost reply) only on a connection of that session, so the
// server applies it under s or, once s has expired, not at all. When the
// client runs another session, Commit fails with an error matching
// ErrSessionLost (and ErrIndeterminate if an earlier attempt may have been
// applied). A recipe whose ephemeral node grants it the right to a write
// (a lock it holds) uses it so that the write never runs on a later
// session, where that node may be another's. The zero Session, or one
// that is no longer Valid, fails Commit with ErrSessionLost.
func (t Transaction) InSession(s Session) Transaction {
	t.sess = s.ID()
	if t.sess == 0 || !s.Valid() {
		t.sess = -1
	}
	return t
}

// Delete adds a delete of version (-1 for any).
func (t Transaction) Delete(path string, version int32) Transaction {
	return t.add(txOp{typ: OpDelete, path: path, version: version})
}

// SetData adds a write of version (-1 for any).
func (t Transaction) SetData(path string, data []byte, version int32) Transaction {
	return t.add(txOp{typ: OpSetData, path: path, data: data, version: version})
}

// Check adds a check that the node's data version is version.
func (t Transaction) Check(path string, version int32) Transaction {
	return t.add(txOp{typ: OpCheck, path: path, version: version})
}

// Commit runs the operations atomically: all succeed, or none does. On
// failure the error matches the first failing operation's error (for
// example zk.ErrBadVersion) and the results say which one failed.
func (t Transaction) Commit(ctx context.Context) ([]OpResult, error) {
	if err := t.c.Check(); err != nil {
		return nil, err
	}
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	if len(t.ops) == 0 {
		return nil, fmt.Errorf("%w: empty transaction", ErrInvalidArgument)
	}
	if t.sess == -1 {
		return nil, fmt.Errorf("%w: transaction bound to a session that is not the client's", ErrSessionLost)
	}
	reqs := make([]any, len(t.ops))
	var raw []rawOp // the multi the framework encodes: bound to a session, or holding a container or TTL create
	if t.sess != 0 {
		raw = make([]rawOp, len(t.ops))
	}
	for _, op := range t.ops {
		if op.typ == OpCreate && (op.mode == Container || op.mode.IsTTL()) {
			raw = make([]rawOp, len(t.ops))
			break
		}
	}
	for i, op := range t.ops {
		full, err := t.c.prepareIn(ctx, t.ns, op.path)
		if err != nil {
			return nil, errtext.Errorf("framework: transaction op %d: %w", i, err)
		}
		switch op.typ {
		case OpCreate, OpSetData:
			// Under Builder.EnableCompression a transaction's data is
			// compressed too, as Curator 5's is.
			data, err := t.c.compress(false, op.path, op.data)
			if err != nil {
				return nil, errtext.Errorf("framework: transaction op %d: %w", i, err)
			}
			op.data = data
		}
		switch op.typ {
		case OpCreate:
			if !op.mode.valid() {
				return nil, fmt.Errorf("%w: transaction op %d: create mode %d", ErrInvalidArgument, i, op.mode)
			}
			if err := checkTTL(op.mode, op.ttl, op.ttl != 0); err != nil {
				return nil, errtext.Errorf("%w: transaction op %d: %w", ErrInvalidArgument, i, err)
			}
			reqs[i] = &zk.CreateRequest{Path: full, Data: op.data, Acl: t.c.aclFor(full), Flags: int32(op.mode)}
		case OpDelete:
			reqs[i] = &zk.DeleteRequest{Path: full, Version: op.version}
		case OpSetData:
			reqs[i] = &zk.SetDataRequest{Path: full, Data: op.data, Version: op.version}
		case OpCheck:
			reqs[i] = &zk.CheckVersionRequest{Path: full, Version: op.version}
		}
		if raw != nil {
			raw[i] = rawOp{typ: op.typ, path: full, data: op.data, mode: op.mode, ttl: op.ttl, version: op.version}
			if op.typ == OpCreate {
				raw[i].acl = t.c.aclFor(full)
			}
		}
	}
	multi := t.c.zkConn().Multi
	if raw != nil {
		// go-zookeeper v1.0.4's Multi sends every create as a plain
		// create with no TTL field, which the server refuses for a
		// container or TTL flag: send this one ourselves.
		multi = func(...any) ([]zk.MultiResponse, error) { return t.c.rawMulti(raw, t.sess) }
	}
	var resp []zk.MultiResponse
	maybe, err := t.c.retryOp(ctx, OpNameMulti, func(bool) error {
		if err := t.c.ensureNS(t.ns); err != nil {
			return err
		}
		var err error
		resp, err = multi(reqs...)
		if errors.Is(err, zk.ErrNoNode) && t.c.hasNS(t.ns) && t.c.nsGone(t.ns) {
			resp, err = multi(reqs...) // the namespace container was reaped
		}
		return err
	})
	if err != nil && maybe {
		// A failure after an attempt whose reply was lost may be caused by
		// that attempt's own commit (NodeExists, BadVersion, NoNode).
		err = Indeterminate(err)
		if resp == nil {
			return nil, errtext.Errorf("framework: transaction: %w", err)
		}
	}
	if resp == nil && err != nil {
		return nil, errtext.Errorf("framework: transaction: %w", t.c.explainNoNode(err))
	}
	res := make([]OpResult, len(t.ops))
	for i, op := range t.ops {
		res[i] = OpResult{Type: op.typ, Path: op.path}
		if i < len(resp) {
			r := resp[i]
			res[i].Err = withSentinels(r.Error)
			if op.typ == OpCreate && op.mode.IsTTL() && hasUnknownCode(r.Error, codeTTLUnimplemented) {
				res[i].Err = fmt.Errorf("%w (%w)", ErrTTLNotEnabled, r.Error)
			}
			if r.Stat != nil {
				res[i].Stat = r.Stat
			}
			if op.typ == OpCreate && r.String != "" {
				res[i].Path = unfixPath(t.c.nsPath(t.ns), r.String)
			}
		}
	}
	if err != nil {
		for _, r := range res {
			// The server marks the operations after the failing one with a
			// runtime inconsistency; report the real cause.
			if r.Err != nil && !errors.Is(r.Err, zk.ErrAPIError) && r.Err.Error() != "unknown error: -2" {
				if maybe {
					return res, errtext.Errorf("framework: transaction: %w", Indeterminate(r.Err))
				}
				return res, errtext.Errorf("framework: transaction: %w", t.c.explainNoNode(r.Err))
			}
		}
		return res, errtext.Errorf("framework: transaction: %w", t.c.explainNoNode(err))
	}
	return res, nil
}
