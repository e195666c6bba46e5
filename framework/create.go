package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-zookeeper/zk"
)

// CreateMode is the kind of node Create makes.
type CreateMode int32

// The create modes, with ZooKeeper's flag values.
const (
	Persistent           CreateMode = zk.FlagPersistent
	Ephemeral            CreateMode = zk.FlagEphemeral
	PersistentSequential CreateMode = zk.FlagSequence
	EphemeralSequential  CreateMode = zk.FlagEphemeralSequential
	Container            CreateMode = zk.FlagContainer
	// PersistentWithTTL is a persistent node that the server deletes once
	// it has had no children for its TTL (CreateBuilder.WithTTL) and was
	// not modified within it. The server needs extendedTypesEnabled=true;
	// without it the create fails with ErrTTLNotEnabled.
	PersistentWithTTL CreateMode = zk.FlagTTL
	// PersistentSequentialWithTTL is PersistentWithTTL with the server's
	// sequence suffix.
	PersistentSequentialWithTTL CreateMode = zk.FlagPersistentSequentialWithTTL
)

func (m CreateMode) valid() bool { return m >= Persistent && m <= PersistentSequentialWithTTL }

// IsEphemeral reports whether nodes of this mode die with their session.
func (m CreateMode) IsEphemeral() bool { return m == Ephemeral || m == EphemeralSequential }

// IsSequential reports whether the server appends a sequence number to
// the names of nodes of this mode.
func (m CreateMode) IsSequential() bool {
	return m == PersistentSequential || m == EphemeralSequential || m == PersistentSequentialWithTTL
}

// IsTTL reports whether nodes of this mode have a TTL.
func (m CreateMode) IsTTL() bool { return m == PersistentWithTTL || m == PersistentSequentialWithTTL }

// MaxTTL is the longest TTL ZooKeeper accepts: 2^40-1 ms, about 34 years.
const MaxTTL = (1<<40 - 1) * time.Millisecond

// CreateBuilder creates a node. It is a cheap value: each method returns a
// changed copy.
type CreateBuilder struct {
	c          *Client
	mode       CreateMode
	parents    bool
	containers bool
	protect    bool
	acl        []zk.ACL
	ttl        time.Duration
	hasTTL     bool
	orSet      bool    // OrSetData
	setVersion int32   // OrSetDataWithVersion; -1 for any
	compressed bool    // Compressed
	ns         *nsNode // a NamespaceView's namespace; nil: the client's
}

// Create starts a create operation. The default mode is Persistent.
func (c *Client) Create() CreateBuilder { return CreateBuilder{c: c, setVersion: -1} }

// WithMode sets the node's mode.
func (b CreateBuilder) WithMode(m CreateMode) CreateBuilder { b.mode = m; return b }

// CreatingParentsIfNeeded creates missing parents as persistent nodes.
func (b CreateBuilder) CreatingParentsIfNeeded() CreateBuilder {
	b.parents, b.containers = true, false
	return b
}

// CreatingParentContainersIfNeeded creates missing parents as container
// nodes, which the server deletes once they are empty; as persistent nodes
// under Builder.DontUseContainerParents.
func (b CreateBuilder) CreatingParentContainersIfNeeded() CreateBuilder {
	b.parents, b.containers = true, true
	return b
}

// WithProtection prefixes the node's name with "_c_<uuid>-", a new UUID per
// call, so that after a connection loss the create can find the node it
// may already have made (Curator's protected mode).
func (b CreateBuilder) WithProtection() CreateBuilder { b.protect = true; return b }

// WithTTL sets the TTL of a node created with PersistentWithTTL or
// PersistentSequentialWithTTL, in whole milliseconds, from 1 ms to MaxTTL
// (Curator's withTtl). Another mode, or a TTL out of that range, makes
// ForPath fail with ErrInvalidArgument.
func (b CreateBuilder) WithTTL(ttl time.Duration) CreateBuilder {
	b.ttl, b.hasTTL = ttl, true
	return b
}

// WithACL sets the node's ACL, instead of the client's ACLProvider's.
func (b CreateBuilder) WithACL(acl ...zk.ACL) CreateBuilder {
	b.acl = append([]zk.ACL(nil), acl...)
	return b
}

// OrSetData makes a create that finds the node already there write its
// data instead, of any version (Curator's orSetData). A sequential mode
// or WithProtection makes a new name each time, so with them the create
// never finds its node: ForPath fails with ErrInvalidArgument.
func (b CreateBuilder) OrSetData() CreateBuilder { b.orSet, b.setVersion = true, -1; return b }

// OrSetDataWithVersion is OrSetData writing only if the node's data
// version is v (Curator's orSetData(version)); otherwise the error
// matches zk.ErrBadVersion.
func (b CreateBuilder) OrSetDataWithVersion(v int32) CreateBuilder {
	b.orSet, b.setVersion = true, v
	return b
}

// Compressed compresses the data with the client's compression provider
// (gzip unless Builder.CompressionProvider says otherwise) before it is
// written, as Curator's compressed() does. Read it back with
// GetData().Decompressed(). Under Builder.EnableCompression every create
// compresses.
func (b CreateBuilder) Compressed() CreateBuilder { b.compressed = true; return b }

// ForPath creates the node and returns its path (without the namespace);
// for sequential modes the path carries the server's 10-digit suffix.
//
// With protection, a retry after a connection loss first looks for the
// node by its prefix; a node found that belongs to another session (an
// ephemeral left from before an expiry) is deleted and created again. If
// the create finally fails, a protected node it may have left is searched
// for and deleted in the background. After a connection loss, a node an
// earlier attempt's late request still makes beside the one returned is
// deleted too (twice: at once, and two seconds later).
//
// With OrSetData, a node already there gets data written instead, and
// ForPath returns its path.
func (b CreateBuilder) ForPath(ctx context.Context, path string, data []byte) (string, error) {
	p, _, err := b.create(ctx, path, data, false)
	return p, err
}

// ForPathStat is ForPath that also returns the node's stat, as Curator's
// storingStatIn does. go-zookeeper v1.0.4 has no create2 request (the
// create that returns the stat), so the stat is read with an exists right
// after the create, and a change made between the two shows in it. If the
// node is gone by then, ForPathStat returns its path and an error
// matching zk.ErrNoNode. With OrSetData, a node written instead gives the
// stat the write returned.
func (b CreateBuilder) ForPathStat(ctx context.Context, path string, data []byte) (string, *zk.Stat, error) {
	return b.create(ctx, path, data, true)
}

func (b CreateBuilder) create(ctx context.Context, path string, data []byte, wantStat bool) (string, *zk.Stat, error) {
	if b.c == nil {
		return "", nil, ErrNilClient
	}
	full, err := b.c.prepareIn(ctx, b.ns, path)
	if err != nil {
		return "", nil, err
	}
	if b.orSet && (b.protect || b.mode.IsSequential()) {
		return "", nil, fmt.Errorf("%w: create %s: OrSetData with a sequential mode or WithProtection never finds its node", ErrInvalidArgument, path)
	}
	if !b.mode.valid() {
		return "", nil, fmt.Errorf("%w: create mode %d", ErrInvalidArgument, b.mode)
	}
	if err := checkTTL(b.mode, b.ttl, b.hasTTL); err != nil {
		return "", nil, errtext.Errorf("%w: create %s: %w", ErrInvalidArgument, path, err)
	}
	if full == "/" || full == b.c.nsPath(b.ns) {
		return "", nil, fmt.Errorf("%w %q: cannot create the root", ErrInvalidPath, path)
	}
	if err := checkACL(b.acl); err != nil {
		return "", nil, errtext.Errorf("framework: create %s: %w", path, err)
	}
	data, err = b.c.compress(b.compressed, path, data)
	if err != nil {
		return "", nil, errtext.Errorf("framework: create %s: %w", path, err)
	}
	parent, name := SplitPath(full)
	prefix := ""
	if b.protect {
		prefix = NewProtectedPrefix()
		full = JoinPath(parent, prefix+name)
	}
	acl := b.acl
	if len(acl) == 0 {
		acl = b.c.aclFor(full)
	}
	c := b.c
	sequential := b.mode.IsSequential()
	containers := c.containerParents(b.containers)
	var (
		created string
		stat    *zk.Stat // from OrSetData's write
	)
	maybe, err := c.retryOp(ctx, OpNameCreate, func(maybe bool) error {
		if maybe && b.protect {
			p, err := c.findProtected(parent, prefix, b.mode)
			if err != nil || p != "" {
				created = p
				return err
			}
		}
		if maybe && sequential && !b.protect {
			// Another attempt would make a second node if the first was
			// applied: only a protected create can tell.
			return errStopRetry
		}
		p, err := c.createOnce(b.ns, full, data, b.mode, acl, b.ttl, b.parents, containers)
		created, stat = p, nil
		if b.orSet && errors.Is(err, zk.ErrNodeExists) {
			created = full
			stat, err = c.zkConn().Set(full, data, b.setVersion)
		}
		return err
	})
	if errors.Is(err, errStopRetry) {
		err = Indeterminate(fmt.Errorf("unprotected sequential create retried after a connection loss (use WithProtection): %w", zk.ErrConnectionClosed))
	}
	if err != nil {
		switch {
		case b.protect && (maybe || IsRetryable(err)):
			// An attempt may have made the node: find and delete it.
			c.sweepProtected(parent, prefix, "")
		case maybe && !b.protect && !(b.orSet && b.setVersion == -1 && !IsRetryable(err)):
			// NodeExists (or OrSetData's BadVersion) may be our own first
			// attempt's doing; a connection error leaves it unknown.
			err = Indeterminate(err)
		}
		if b.mode.IsTTL() && hasUnknownCode(err, codeTTLUnimplemented) {
			err = fmt.Errorf("%w (%w)", ErrTTLNotEnabled, err)
		}
		return "", nil, errtext.Errorf("framework: create %s: %w", path, c.explainNoNode(err))
	}
	if maybe && b.protect {
		// An earlier attempt's request may still be applied: sweep its
		// twin, if any (see sweepProtected).
		c.sweepProtected(parent, prefix, created)
	}
	out := unfixPath(c.nsPath(b.ns), created)
	if !wantStat || stat != nil {
		return out, stat, nil
	}
	err = c.retryRead(ctx, OpNameExists, func() (err error) {
		var ok bool
		ok, stat, err = c.zkConn().Exists(created)
		if err == nil && !ok {
			err = zk.ErrNoNode
		}
		return err
	})
	if err != nil {
		return out, nil, errtext.Errorf("framework: create %s: created %s, but reading its stat: %w", path, out, err)
	}
	return out, stat, nil
}

// codeTTLUnimplemented is ZooKeeper's Unimplemented, which go-zookeeper
// v1.0.4 reports as "unknown error: -6": a server without
// extendedTypesEnabled answers it to a TTL create.
const codeTTLUnimplemented = -6

// checkTTL checks a create's TTL against its mode.
func checkTTL(mode CreateMode, ttl time.Duration, set bool) error {
	switch {
	case !mode.IsTTL() && set:
		return fmt.Errorf("a TTL (%v) needs the mode PersistentWithTTL or PersistentSequentialWithTTL", ttl)
	case !mode.IsTTL():
		return nil
	case !set:
		return errors.New("a TTL mode needs a TTL: use WithTTL")
	case ttl < time.Millisecond || ttl > MaxTTL:
		return fmt.Errorf("TTL %v is not between 1ms and %v", ttl, MaxTTL)
	}
	return nil
}

// errStopRetry ends a write's retry loop when another attempt could apply
// it twice.
var errStopRetry = errors.New("framework: not retried")

// createOnce creates a node, making its parents when asked. A parent
// container reaped between the two steps is made again, a few times.
func (c *Client) createOnce(ns *nsNode, full string, data []byte, mode CreateMode, acl []zk.ACL, ttl time.Duration, parents, containers bool) (string, error) {
	if err := c.ensureNS(ns); err != nil {
		return "", err
	}
	for i := 0; ; i++ {
		var p string
		var err error
		if mode.IsTTL() {
			p, err = c.zkConn().CreateTTL(full, data, int32(mode), acl, ttl)
		} else {
			p, err = c.zkCreate(full, data, mode, acl)
		}
		if !errors.Is(err, zk.ErrNoNode) || i == 3 {
			return p, err
		}
		parent, _ := SplitPath(full)
		switch {
		case parents:
			if err := c.mkdirs(parent, containers); err != nil {
				return "", err
			}
		case c.nsMissing(ns, parent):
			// The namespace container was reaped once it emptied: make it
			// again, as Curator's EnsureContainers does on first use.
		default:
			return p, err
		}
	}
}

// nsMissing reports whether the namespace (ns's, or the client's for nil)
// is set, parent is the namespace node, and that node is missing (a reaped
// container), in which case it makes it again. A deeper parent is the
// caller's to make.
func (c *Client) nsMissing(ns *nsNode, parent string) bool {
	if !c.hasNS(ns) || parent != c.nsPath(ns) {
		return false
	}
	return c.mkdirs(parent, c.containerParents(true)) == nil
}

func (c *Client) zkCreate(full string, data []byte, mode CreateMode, acl []zk.ACL) (string, error) {
	if mode == Container {
		return c.zkConn().CreateContainer(full, data, zk.FlagContainer, acl)
	}
	return c.zkConn().Create(full, data, int32(mode), acl)
}

// mkdirs makes p and its missing ancestors, deepest first, so that in the
// common case (only the last one missing) it costs one round trip.
// The chroot counts as the root: it is never made.
func (c *Client) mkdirs(p string, containers bool) error {
	if p == "/" || p == c.chroot {
		return nil
	}
	mode := Persistent
	if containers {
		mode = Container
	}
	acl := c.aclFor(p)
	_, err := c.zkCreate(p, nil, mode, acl)
	if errors.Is(err, zk.ErrNoNode) {
		parent, _ := SplitPath(p)
		if err := c.mkdirs(parent, containers); err != nil {
			return err
		}
		_, err = c.zkCreate(p, nil, mode, acl)
	}
	if err == nil || errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return err
}

// nsGone reports whether the namespace node (ns's, or the client's for
// nil) is missing (a reaped container), and makes it again if so.
func (c *Client) nsGone(ns *nsNode) bool {
	p := c.nsPath(ns)
	ok, _, err := c.zkConn().Exists(p)
	if err != nil || ok {
		return false
	}
	return c.mkdirs(p, c.containerParents(true)) == nil
}

// ensureNamespace creates the namespace node, as a container, once; a
// reaped one is made again where a create finds it missing.
func (c *Client) ensureNamespace() error {
	if !c.hasNamespace() {
		return nil
	}
	c.mu.Lock()
	ready := c.nsReady
	c.mu.Unlock()
	if ready {
		return nil
	}
	if err := c.mkdirs(c.ns, c.containerParents(true)); err != nil {
		return err
	}
	c.mu.Lock()
	c.nsReady = true
	c.mu.Unlock()
	return nil
}

// FindProtected returns the path of the child of parent whose name starts
// with prefix (from NewProtectedPrefix), or "" if there is none. Recipes
// use it after a connection loss to learn whether a protected node they
// made outside Create (in a transaction) exists. An ephemeral child owned
// by another session (left from before an expiry) is deleted and reported
// as missing, as Create's own retry does (CURATOR-498).
func (c *Client) FindProtected(ctx context.Context, parent, prefix string) (string, error) {
	full, err := c.prepare(ctx, parent)
	if err != nil {
		return "", err
	}
	if err := validProtectedPrefix(prefix); err != nil {
		return "", err
	}
	var found string
	err = c.retryRead(ctx, OpNameGetChildren, func() (err error) {
		found, err = c.findProtected(full, prefix, EphemeralSequential)
		return err
	})
	if err != nil {
		return "", errtext.Errorf("framework: find protected node under %s: %w", parent, err)
	}
	if found == "" {
		return "", nil
	}
	return unfixPath(c.ns, found), nil
}

// findProtected looks for a child of parent whose name starts with prefix.
// An ephemeral one owned by another session is deleted and reported as
// missing (CURATOR-498). It returns the full path, or "".
func (c *Client) findProtected(parent, prefix string, mode CreateMode) (string, error) {
	conn := c.zkConn() // one session for the lookup and the ownership check
	kids, _, err := conn.Children(parent)
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	for _, k := range kids {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		p := JoinPath(parent, k)
		if !mode.IsEphemeral() {
			return p, nil
		}
		_, stat, err := conn.Exists(p)
		if err != nil {
			return "", err
		}
		if stat != nil && (stat.EphemeralOwner == conn.SessionID() || stat.EphemeralOwner == 0) {
			// Ours: made on this session, or persistent (a protected
			// persistent node has no session to tell it from).
			return p, nil
		}
		if stat == nil {
			continue
		}
		if err := conn.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return "", err
		}
	}
	return "", nil
}

// twinSweepDelay is how long after a protected create that met a
// connection loss its prefix is swept a second time (see sweepProtected).
const twinSweepDelay = 2 * time.Second

// sweepProtected deletes, in the background, every child of parent whose
// name starts with prefix except keep (a full path, or "" to keep none):
// the nodes of a protected create's attempts that the create did not
// return. It sweeps as soon as the client is connected, and again
// twinSweepDelay later, retrying each sweep until it succeeds or the
// client closes.
//
// The second sweep is for a late twin. A request the server had read from
// a connection that then broke can still be applied after the client,
// reconnected on the same session, searched for its node: a standalone
// ZooKeeper gives every connection of a session the same owner, so it
// does not refuse that request as moved. The create would then have made
// a second node that no one knows of: a persistent one stays forever, and
// an ephemeral one in a lock's queue stays in line behind its twin until
// the session ends, blocking every waiter after it. The window is the
// server's own processing, milliseconds, so one more sweep shortly after
// closes it in practice; nothing on the wire can close it for certain.
// Only this create's attempts make nodes with prefix (a new UUID per
// create), so the sweep cannot touch another node.
func (c *Client) sweepProtected(parent, prefix, keep string) {
	sweeps := 0
	c.background(func() error {
		for ; sweeps < 2; sweeps++ {
			if sweeps == 1 && c.sleep(c.ctx, twinSweepDelay) != nil {
				return nil
			}
			if err := c.deleteProtected(parent, prefix, keep); err != nil {
				return err
			}
		}
		return nil
	})
}

// deleteProtected deletes every child of parent whose name starts with
// prefix, except keep.
func (c *Client) deleteProtected(parent, prefix, keep string) error {
	conn := c.zkConn()
	kids, _, err := conn.Children(parent)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		p := JoinPath(parent, k)
		if !strings.HasPrefix(k, prefix) || p == keep {
			continue
		}
		if err := conn.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		c.logger.Debug("framework: deleted a protected node no create returned", "path", p)
	}
	return nil
}
