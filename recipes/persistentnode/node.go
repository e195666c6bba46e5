package persistentnode

import (
	"context"
	"errors"
	"time"

	"github.com/go-curator/curator/framework"
)

// The errors of this package. A bad argument matches both ErrInvalidArgument
// and the framework's specific sentinel (framework.ErrInvalidPath,
// framework.ErrNilClient, framework.ErrInvalidArgument).
var (
	ErrInvalidArgument = errors.New("persistentnode: invalid argument")
	ErrNotStarted      = errors.New("persistentnode: not started")
	ErrAlreadyStarted  = errors.New("persistentnode: already started")
	ErrClosed          = errors.New("persistentnode: closed")
	// ErrCannotCreate reports a node that the server refuses in a way no
	// retry changes: its parent is an ephemeral node
	// (zk.ErrNoChildrenForEphemerals), an ACL forbids the create or the
	// read (zk.ErrNoAuth), the ACL given is invalid (zk.ErrInvalidACL),
	// or the server rejects the path (zk.ErrBadArguments). The error
	// matches it and the server's sentinel. The Node stops trying: see
	// Failed.
	ErrCannotCreate = errors.New("persistentnode: node cannot be created")
)

// EventType is the kind of an Event.
type EventType int

const (
	// Created: the node was created (the first time, or again); Event.Path
	// is its path.
	Created EventType = iota + 1
	// Gone: the node is no longer there, or no longer trusted (it was
	// deleted, or the session that owned it ended); the Node makes it
	// again. Event.Path is the path it had.
	Gone
	// Failed: the node cannot be created (Event.Err matches
	// ErrCannotCreate and the server's sentinel), and the Node has stopped
	// trying; it keeps nothing until Close. Event.Path is the path given
	// to New.
	Failed
)

// String returns "CREATED", "GONE" or "FAILED".
func (t EventType) String() string {
	switch t {
	case Created:
		return "CREATED"
	case Gone:
		return "GONE"
	case Failed:
		return "FAILED"
	}
	return "UNKNOWN"
}

// Event is what a listener receives.
type Event struct {
	Type EventType
	Path string
	Err  error // for Failed: why
}

// Option configures a Node made by New. An option given a bad value
// returns an error matching [ErrInvalidArgument], which New returns.
type Option func(*options) error

// options are what the Options set.
type options struct {
	mode     framework.CreateMode
	protect  bool
	plain    bool // WithoutProtection
	takeOver bool // WithTakeOver
}

// WithMode sets the node's create mode: framework.Ephemeral (the default),
// EphemeralSequential, Persistent, PersistentSequential or Container.
// Another mode is an error (the TTL modes are NewTTL's).
func WithMode(m framework.CreateMode) Option {
	return func(o *options) error {
		switch m {
		case framework.Ephemeral, framework.EphemeralSequential, framework.Persistent,
			framework.PersistentSequential, framework.Container:
			o.mode = m
			return nil
		}
		return badArg("create mode %d is not one of Ephemeral, EphemeralSequential, Persistent, PersistentSequential, Container (use NewTTL for a TTL node)", m)
	}
}

// WithProtection creates the node with Curator's protected name,
// "_c_<uuid>-<name>", a new UUID at each creation. Sequential modes are
// always protected.
func WithProtection() Option {
	return func(o *options) error { o.protect = true; return nil }
}

// WithoutProtection creates an EphemeralSequential node under its plain
// name, <name><10-digit sequence>, without Curator's protected prefix:
// the layout of curator-x-discovery's DYNAMIC_SEQUENTIAL instances. A
// create whose reply is lost is resolved by owner instead of by prefix:
// every node of that name pattern in the parent owned by the client's
// current session is taken to be this Node's (the newest is kept, any
// other deleted), so a client must keep at most one such Node per path.
// Another mode is an error.
func WithoutProtection() Option {
	return func(o *options) error { o.plain = true; return nil }
}

// WithTakeOver makes the first creation of an Ephemeral node replace a
// node at the path that another session owns, or a persistent one,
// instead of waiting for it to go: what Curator's ServiceDiscovery does
// when an instance restarts with the ID of its crashed self, whose node
// lives until the server expires the old session. Only the first
// creation takes over: after it, another session's node at the path is
// waited for, as without the option, so that two live Nodes of one path
// never delete each other's node in turn (the later Start holds the path,
// the earlier one waits for it to go). Another mode is an error.
func WithTakeOver() Option {
	return func(o *options) error { o.takeOver = true; return nil }
}

// Node is a node that the client keeps present: created at Start, made
// again after a delete or the end of its session, deleted at Close. Make
// one with New; the zero Node is not usable (its methods return an error
// matching ErrInvalidArgument, and never panic). A Node must not be copied
// after first use. Its methods are safe for concurrent use.
type Node struct {
	e *engine
}

// New returns a Node for path with data. It checks its arguments and does
// no I/O: the client may be started later, before Start.
func New(client *framework.Client, path string, data []byte, opts ...Option) (*Node, error) {
	e, err := newEngine(client, path, data, opts)
	if err != nil {
		return nil, err
	}
	return &Node{e: e}, nil
}

func (n *Node) engine() *engine {
	if n == nil {
		return nil
	}
	return n.e
}

// Start begins creating and keeping the node, and returns at once; use
// WaitForInitialCreate to wait for the node. It returns an error for a nil
// ctx, a client that is not started or is closed, a second Start, or a
// closed Node.
func (n *Node) Start(ctx context.Context) error { return n.engine().start(ctx) }

// WaitForInitialCreate waits until the node has been created for the first
// time (Curator's waitForInitialCreate). It returns nil at once if it
// already was, ctx's error if ctx ends first (with the latest reason the
// node is not there yet, such as another session's node at the path),
// ErrClosed if the Node closes first, and an error matching
// ErrCannotCreate as soon as the server refuses the node for good.
func (n *Node) WaitForInitialCreate(ctx context.Context) error {
	return n.engine().waitInitial(ctx)
}

// Path returns the node's path, as the server made it (protected prefix
// and sequence suffix included, namespace excluded), and whether the node
// is there now as far as the Node knows: created and not seen deleted
// since, on a session not declared lost. Before the first creation it
// returns "", false; after a loss, the last path and false.
func (n *Node) Path() (string, bool) { return n.engine().path() }

// Data returns a copy of the node's data: the latest given to New or
// SetData.
func (n *Node) Data() []byte { return n.engine().data() }

// SetData sets the node's data: it writes it to the node now if the node
// exists, and every later re-creation uses it. If the node does not exist
// now, the data is kept for its next creation and SetData returns nil. A
// write whose outcome is unknown is repeated by the Node, never reported
// as done: SetData returns the error, and the Node keeps trying.
func (n *Node) SetData(ctx context.Context, data []byte) error {
	return n.engine().setData(ctx, data)
}

// AddListener registers fn, called with each Created and Gone event on a
// goroutine of its own, and returns its remover. fn may call the Node's
// methods, Close included.
func (n *Node) AddListener(fn func(Event)) (remove func()) { return n.engine().addListener(fn) }

// Close stops keeping the node and deletes it. The delete runs on a
// context detached from ctx (a cancelled ctx does not stop it) and bounded
// to 10 s; if it fails on a connection problem it goes on in the
// background until it succeeds or the client closes, and Close returns
// that error. A node at a fixed path that another session made is never
// deleted. Close is idempotent: a later call returns the first one's
// result. A nil ctx is an error and closes nothing.
func (n *Node) Close(ctx context.Context) error { return n.engine().close(ctx, true) }

// TTLNode is a node that stays while its client touches it, and that the
// server deletes a TTL after its client stopped: Curator's
// PersistentTtlNode. It is a CONTAINER node, kept present as a Node keeps a
// persistent one, with a PERSISTENT_WITH_TTL child ("touch") that the
// TTLNode touches (sets, or creates) every TTL/2. Make one with NewTTL;
// the zero TTLNode is not usable, and a TTLNode must not be copied after
// first use. It needs a server with extendedTypesEnabled=true: without one
// WaitForInitialCreate returns an error matching
// framework.ErrTTLNotEnabled.
type TTLNode struct {
	t *ttlEngine
}

// TTLOption configures a TTLNode made by NewTTL. An option given a bad
// value returns an error matching [ErrInvalidArgument], which NewTTL
// returns.
type TTLOption func(*ttlOptions) error

// ttlOptions are what the TTLOptions set.
type ttlOptions struct {
	child  string
	factor int
}

// WithTouchName names the touched child (default "touch", Curator's).
func WithTouchName(name string) TTLOption {
	return func(o *ttlOptions) error {
		if err := checkName(name); err != nil {
			return err
		}
		o.child = name
		return nil
	}
}

// WithTouchFactor touches the child every ttl/factor (default 2,
// Curator's). factor must be at least 1.
func WithTouchFactor(factor int) TTLOption {
	return func(o *ttlOptions) error {
		if factor < 1 {
			return badArg("touch factor %d is below 1", factor)
		}
		o.factor = factor
		return nil
	}
}

// NewTTL returns a TTLNode for path with data and the given ttl (from 1 ms
// to framework.MaxTTL). It checks its arguments and does no I/O.
func NewTTL(client *framework.Client, path string, ttl time.Duration, data []byte, opts ...TTLOption) (*TTLNode, error) {
	t, err := newTTLEngine(client, path, ttl, data, opts)
	if err != nil {
		return nil, err
	}
	return &TTLNode{t: t}, nil
}

func (n *TTLNode) engine() *ttlEngine {
	if n == nil {
		return nil
	}
	return n.t
}

// Start creates the container and starts touching its child; it returns at
// once. Errors as Node.Start.
func (n *TTLNode) Start(ctx context.Context) error { return n.engine().start(ctx) }

// WaitForInitialCreate waits until the container and its touch child have
// been created for the first time, as Node.WaitForInitialCreate. A server
// without TTL nodes makes it return an error matching
// framework.ErrTTLNotEnabled.
func (n *TTLNode) WaitForInitialCreate(ctx context.Context) error {
	return n.engine().waitInitial(ctx)
}

// Path returns the container's path and whether it is there, as Node.Path.
func (n *TTLNode) Path() (string, bool) { return n.engine().path() }

// Data returns a copy of the container's data.
func (n *TTLNode) Data() []byte { return n.engine().data() }

// SetData sets the container's data, as Node.SetData.
func (n *TTLNode) SetData(ctx context.Context, data []byte) error {
	return n.engine().setData(ctx, data)
}

// Close stops touching the child and keeping the container. As in Curator,
// it deletes nothing: the server deletes the child a TTL after its last
// touch, then the empty container (unless another TTLNode on the same
// path still touches it). Close is idempotent and returns nil.
func (n *TTLNode) Close(ctx context.Context) error { return n.engine().close(ctx) }
