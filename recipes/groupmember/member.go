package groupmember

import (
	"context"
	"errors"
	"sync"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/recipes/persistentnode"
)

// The errors of this package. A bad argument matches both ErrInvalidArgument
// and the framework's specific sentinel.
var (
	ErrInvalidArgument = errors.New("groupmember: invalid argument")
	ErrNotStarted      = errors.New("groupmember: not started")
	ErrAlreadyStarted  = errors.New("groupmember: already started")
	ErrClosed          = errors.New("groupmember: closed")
)

var errZero = recipe.BadArg(ErrInvalidArgument, "nil or zero Member: make one with New")

// MaxPayloadSize is the largest payload a Member takes (persistentnode's
// MaxDataSize).
const MaxPayloadSize = persistentnode.MaxDataSize

type lifecycle int

const (
	latent lifecycle = iota
	started
	closed
)

// Member is this process's membership of a group. Make one with New; the
// zero Member is not usable (its methods return an error matching
// ErrInvalidArgument, or nothing, and never panic). A Member must not be
// copied after first use. Its methods are safe for concurrent use.
type Member struct {
	id    string
	node  *persistentnode.Node
	cache *cache.Children

	mu        sync.Mutex
	state     lifecycle
	closeOnce sync.Once
	closeErr  error
}

// New returns a Member of the group at membershipPath with the ID thisID
// and payload. It checks its arguments and does no I/O: the client may be
// started later, before Start.
func New(client *framework.Client, membershipPath, thisID string, payload []byte) (*Member, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if err := framework.ValidatePath(membershipPath); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	if err := checkID(thisID); err != nil {
		return nil, err
	}
	if len(payload) > MaxPayloadSize {
		return nil, recipe.BadArg(ErrInvalidArgument, "payload of %d bytes; at most %d", len(payload), MaxPayloadSize)
	}
	node, err := persistentnode.New(client, framework.JoinPath(membershipPath, thisID), payload)
	if err != nil {
		return nil, errtext.Also(err, ErrInvalidArgument)
	}
	ch, err := cache.NewChildren(client, membershipPath)
	if err != nil {
		return nil, errtext.Also(err, ErrInvalidArgument)
	}
	return &Member{id: thisID, node: node, cache: ch}, nil
}

// checkID checks that id can be a node name.
func checkID(id string) error {
	if id == "" || id == "." || id == ".." {
		return recipe.BadArg(ErrInvalidArgument, "member ID %q is not a node name", id)
	}
	if err := framework.ValidatePath("/" + id); err != nil {
		return recipe.Invalid(ErrInvalidArgument, err)
	}
	if _, name := framework.SplitPath("/" + id); name != id {
		return recipe.BadArg(ErrInvalidArgument, "member ID %q contains '/'", id)
	}
	return nil
}

// IDFromPath returns the member ID of a member node's path: its last
// segment (Curator's idFromPath).
func IDFromPath(path string) string {
	_, name := framework.SplitPath(path)
	return name
}

// ID returns this Member's ID.
func (m *Member) ID() string {
	if m == nil {
		return ""
	}
	return m.id
}

// Start joins the group (the member node is made in the background; see
// WaitForInitialCreate) and loads the cache of members, returning once it
// is loaded. A failed Start leaves the group and closes the Member. It
// returns an error for a nil or done ctx, a client that is not started or
// is closed, a second Start, or a closed Member.
func (m *Member) Start(ctx context.Context) error {
	if m == nil || m.node == nil {
		return errZero
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	switch m.state {
	case closed:
		m.mu.Unlock()
		return ErrClosed
	case started:
		m.mu.Unlock()
		return ErrAlreadyStarted
	}
	m.state = started
	m.mu.Unlock()
	err := m.node.Start(ctx)
	if err == nil {
		err = m.cache.Start(ctx)
	}
	if err != nil {
		m.Close(context.WithoutCancel(ctx))
		return recipe.Wrapf(ErrInvalidArgument, "groupmember: start %s: %w", m.id, err)
	}
	return nil
}

// WaitForInitialCreate waits until this Member's node has been made for
// the first time, as persistentnode's Node.WaitForInitialCreate.
func (m *Member) WaitForInitialCreate(ctx context.Context) error {
	if m == nil || m.node == nil {
		return errZero
	}
	return m.mapErr(m.node.WaitForInitialCreate(ctx))
}

// SetPayload sets this Member's payload: it writes it now if the member
// node exists, and every later re-creation uses it (Curator's
// setThisData). Errors as persistentnode's Node.SetData.
func (m *Member) SetPayload(ctx context.Context, payload []byte) error {
	if m == nil || m.node == nil {
		return errZero
	}
	return m.mapErr(m.node.SetData(ctx, payload))
}

// Payload returns a copy of this Member's payload.
func (m *Member) Payload() []byte {
	if m == nil || m.node == nil {
		return nil
	}
	return m.node.Data()
}

// Path returns this Member's node path and whether it is there now, as
// persistentnode's Node.Path.
func (m *Member) Path() (string, bool) {
	if m == nil || m.node == nil {
		return "", false
	}
	return m.node.Path()
}

// Members returns the current members, from the cache, without I/O: each
// member's ID and payload (Curator's getCurrentMembers). This Member is
// always listed, with its own payload, even while its node is being made
// again. Before Start and after Close it returns nil.
func (m *Member) Members() map[string][]byte {
	if m == nil || m.cache == nil {
		return nil
	}
	m.mu.Lock()
	st := m.state
	m.mu.Unlock()
	if st != started {
		return nil
	}
	entries, err := m.cache.Entries()
	if err != nil {
		return nil
	}
	out := make(map[string][]byte, len(entries)+1)
	for _, e := range entries {
		out[IDFromPath(e.Path)] = append([]byte{}, e.Data...)
	}
	if _, ok := out[m.id]; !ok {
		out[m.id] = m.node.Data()
	}
	return out
}

// AddListener adds a listener to the cache of members: each member that
// joins, changes its payload or leaves is a cache.Event (NodeAdded,
// NodeUpdated, NodeRemoved) whose Entry.Path gives the ID through
// IDFromPath. Listeners run as cache's do.
func (m *Member) AddListener(fn func(cache.Event)) (remove func()) {
	if m == nil || m.cache == nil {
		return func() {}
	}
	return m.cache.AddListener(fn)
}

// Close leaves the group (deletes this Member's node, retrying in the
// background on connection problems, as persistentnode's Node.Close) and
// stops the cache. It is idempotent: a later call returns the first one's
// result.
func (m *Member) Close(ctx context.Context) error {
	if m == nil || m.node == nil {
		return errZero
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	m.closeOnce.Do(func() {
		m.mu.Lock()
		m.state = closed
		m.mu.Unlock()
		m.closeErr = errors.Join(m.cache.Close(), m.node.Close(ctx))
	})
	return m.closeErr
}

// mapErr gives persistentnode's lifecycle errors this package's names.
func (m *Member) mapErr(err error) error {
	switch {
	case errors.Is(err, persistentnode.ErrNotStarted):
		return errtext.Also(err, ErrNotStarted)
	case errors.Is(err, persistentnode.ErrClosed):
		return errtext.Also(err, ErrClosed)
	case errors.Is(err, persistentnode.ErrInvalidArgument):
		return errtext.Also(err, ErrInvalidArgument)
	}
	return err
}
