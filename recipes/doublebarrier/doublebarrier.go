package doublebarrier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/recipe"
	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
)

// Errors of the double barrier.
var (
	// ErrInvalidArgument reports a bad argument: a nil client, an invalid
	// path or the root, memberQty < 1, a nil option, a nil ctx, a nil or
	// zero DoubleBarrier. The error also matches the framework's specific
	// sentinel (framework.ErrNilClient, framework.ErrInvalidPath or
	// framework.ErrInvalidArgument).
	ErrInvalidArgument = errors.New("doublebarrier: invalid argument")
	// ErrAlreadyEntered reports an Enter on a DoubleBarrier that is
	// already entering, inside, or leaving.
	ErrAlreadyEntered = errors.New("doublebarrier: already entered")
	// ErrNotEntered reports a Leave on a DoubleBarrier that is not inside
	// the barrier.
	ErrNotEntered = errors.New("doublebarrier: not entered")
	// ErrMemberLost reports that the member node kept vanishing while
	// Enter waited (its session expired) and the retry policy gave up.
	ErrMemberLost = errors.New("doublebarrier: member node lost while entering")
)

// readyNode is Curator's name for the node that opens the barrier.
const readyNode = "ready"

type phase int

const (
	idle phase = iota
	entering
	inside
	leaving
)

// DoubleBarrier is one participant of a double barrier. It is safe for
// concurrent use, but it is one participant: a second Enter before Leave
// returns [ErrAlreadyEntered]. After Leave it may Enter again.
//
// The zero DoubleBarrier is not usable: make one with [New]. Its methods,
// and those of a nil *DoubleBarrier, return an error matching
// [ErrInvalidArgument] (Path returns "", MemberQty 0); none panics. A
// DoubleBarrier must not be copied after first use.
type DoubleBarrier struct {
	client    *framework.Client
	path      string
	readyPath string
	memberQty int
	data      []byte // the member nodes' data

	mu    sync.Mutex
	phase phase
	node  string            // our member node's path, from Enter until Leave returns
	sess  framework.Session // the session that created node
}

// Option configures a DoubleBarrier. An option given a bad value returns
// an error matching [ErrInvalidArgument], which [New] returns.
type Option func(*options) error

// options are what the Options set.
type options struct {
	data []byte
}

// WithData sets the data of the participant's member nodes, instead of the
// client's default data.
func WithData(data []byte) Option {
	return func(o *options) error { o.data = append([]byte{}, data...); return nil }
}

// New returns a participant of the double barrier at path that opens when
// memberQty participants have entered. It checks its arguments and does no
// I/O; the client may be started later, before Enter. A nil client, an
// invalid path, the root, memberQty < 1 or a nil option is an error
// matching [ErrInvalidArgument].
func New(client *framework.Client, path string, memberQty int, opts ...Option) (*DoubleBarrier, error) {
	if client == nil {
		return nil, recipe.NilClient(ErrInvalidArgument)
	}
	if err := framework.ValidatePath(path); err != nil {
		return nil, recipe.Invalid(ErrInvalidArgument, err)
	}
	if path == "/" {
		return nil, recipe.Invalid(ErrInvalidArgument,
			fmt.Errorf("%w %q: the root cannot be a barrier", framework.ErrInvalidPath, path))
	}
	if memberQty < 1 {
		return nil, recipe.BadArg(ErrInvalidArgument, "memberQty %d is less than 1", memberQty)
	}
	b := &DoubleBarrier{
		client:    client,
		path:      path,
		readyPath: framework.JoinPath(path, readyNode),
		memberQty: memberQty,
	}
	var o options
	if err := recipe.Apply(ErrInvalidArgument, &o, opts); err != nil {
		return nil, err
	}
	b.data = o.data
	if b.data == nil {
		b.data = client.DefaultData()
	}
	return b, nil
}

// Path returns the barrier's path, or "" for a nil or zero DoubleBarrier.
func (b *DoubleBarrier) Path() string {
	if b == nil {
		return ""
	}
	return b.path
}

// MemberQty returns the number of members that opens the barrier, or 0
// for a nil or zero DoubleBarrier.
func (b *DoubleBarrier) MemberQty() int {
	if b == nil {
		return 0
	}
	return b.memberQty
}

// check returns an error if b cannot run op with ctx.
func (b *DoubleBarrier) check(ctx context.Context, op string) error {
	if b == nil || b.client == nil {
		return recipe.Zero(ErrInvalidArgument, "DoubleBarrier")
	}
	if err := recipe.CheckCtx(ErrInvalidArgument, ctx); err != nil {
		return err
	}
	if err := b.client.Check(); err != nil {
		return recipe.Wrapf(ErrInvalidArgument, "doublebarrier: %s %s: %w", op, b.path, err)
	}
	return nil
}

// Enter joins the barrier and blocks until at least memberQty members
// have entered. It returns nil only once the barrier is open: no wake-up
// lets it in early.
//
// When ctx ends first, Enter returns an error matching ctx.Err(); on any
// error its member node has been deleted (or its delete goes on in the
// background until the client closes). Enter on a participant that is
// already entering, inside or leaving returns ErrAlreadyEntered.
func (b *DoubleBarrier) Enter(ctx context.Context) error {
	if err := b.check(ctx, "enter"); err != nil {
		return err
	}
	b.mu.Lock()
	if b.phase != idle {
		b.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrAlreadyEntered, b.path)
	}
	b.phase = entering
	b.mu.Unlock()

	if err := b.enter(ctx); err != nil {
		if node, _ := b.member(); node != "" {
			b.deleteMember(ctx, node)
		}
		b.setPhase(idle)
		return recipe.Wrapf(ErrInvalidArgument, "doublebarrier: enter %s: %w", b.path, err)
	}
	b.setPhase(inside)
	return nil
}

// member returns our member node and the session that created it.
func (b *DoubleBarrier) member() (string, framework.Session) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.node, b.sess
}

func (b *DoubleBarrier) setPhase(p phase) {
	b.mu.Lock()
	b.phase = p
	if p == idle {
		b.node, b.sess = "", framework.Session{}
	}
	b.mu.Unlock()
}

// errNotMember reports that our member node vanished (its session
// expired), or that the session that created it is lost, so that the node
// is not ours even if the server still lists it: Enter makes a new one.
var errNotMember = errors.New("doublebarrier: not a member")

// enter creates a member node and waits until the barrier opens. A member
// node counts as ours only while the session that created it is valid:
// after the client declares its session lost, the server keeps that
// session and the node alive until its own timeout, and then the barrier
// would no longer count us. So a node of a lost session is deleted, and
// enter makes a new one, with a new name, as often as the retry policy
// allows.
func (b *DoubleBarrier) enter(ctx context.Context) error {
	policy := b.client.RetryPolicy()
	var lostAt time.Time // when our node was first found gone or untrusted
	var abandoned []string
	for recreated := 0; ; recreated++ {
		node, sess, err := b.createMember(ctx)
		if err != nil {
			return err
		}
		err = b.waitOpen(ctx, node, sess, abandoned)
		if !errors.Is(err, errNotMember) {
			return err
		}
		b.deleteMember(ctx, node)
		_, name := framework.SplitPath(node)
		abandoned = append(abandoned, name)
		if lostAt.IsZero() {
			lostAt = time.Now()
		}
		if _, ok := policy.AllowRetry(recreated, time.Since(lostAt)); !ok {
			return fmt.Errorf("%w: %s", ErrMemberLost, node)
		}
	}
}

// waitOpen waits, as the member whose node sess created, until the barrier
// opens. abandoned lists the names of our earlier nodes, which never count
// as members (a delete deferred by a failed connection may leave them
// listed for a while).
func (b *DoubleBarrier) waitOpen(ctx context.Context, node string, sess framework.Session, abandoned []string) error {
	_, name := framework.SplitPath(node)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Take the loss signal before the reads, so a suspension after them
		// wakes us to read again.
		lost := b.client.LossSignal(framework.StandardErrorPolicy)
		ready, watch, err := b.client.CheckExists().ForPathW(ctx, b.readyPath)
		if err != nil {
			return err
		}
		kids, err := b.client.GetChildren().ForPath(ctx, b.path)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		if !sess.Valid() {
			// The reads may have run on a later session: they prove nothing.
			return fmt.Errorf("%w: session of %s lost", errNotMember, node)
		}
		if !slices.Contains(kids, name) {
			return fmt.Errorf("%w: %s vanished", errNotMember, node)
		}
		if ready != nil {
			return nil
		}
		count := len(kids)
		for _, k := range abandoned {
			if slices.Contains(kids, k) {
				count--
			}
		}
		if count >= b.memberQty {
			_, err := b.client.Create().WithMode(framework.Persistent).
				ForPath(ctx, b.readyPath, b.client.DefaultData())
			if err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return err
			}
			return nil
		}
		select {
		case <-watch:
		case <-lost:
		case <-sess.Lost():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// createMember takes the client's session, then creates a new EPHEMERAL
// member node, which belongs to that session, and records both. The name
// is ours alone, so finding it already there (a retried create) is
// success.
func (b *DoubleBarrier) createMember(ctx context.Context) (string, framework.Session, error) {
	sess, err := b.client.CurrentSession(ctx)
	if err != nil {
		return "", framework.Session{}, err
	}
	node := framework.JoinPath(b.path, uuid.NewString())
	b.mu.Lock()
	b.node, b.sess = node, sess
	b.mu.Unlock()
	_, err = b.client.Create().CreatingParentContainersIfNeeded().
		WithMode(framework.Ephemeral).ForPath(ctx, node, b.data)
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return "", framework.Session{}, err
	}
	return node, sess, nil
}

// deleteMember deletes our member node with a detached, bounded context
// and a guaranteed delete, so it goes even after a cancel: a delete that
// fails on the connection goes on in the background until it succeeds or
// the client closes (and the ephemeral node with its session). The caller
// reports its own error, not the cleanup's.
func (b *DoubleBarrier) deleteMember(ctx context.Context, node string) {
	if err := recipe.Delete(ctx, b.client, node); err != nil {
		b.client.Logger().Debug("doublebarrier: member node delete deferred", "node", node, "err", err)
	}
}
