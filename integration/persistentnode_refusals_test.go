package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/persistentnode"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// Issue 32, items 1, 2 and 4 at the level of persistentnode.

// TestPersistentNode_RefusedCreateFailsAtOnce: a node the server refuses
// for good (its parent is ephemeral; the parent's ACL forbids create) is
// reported at once: WaitForInitialCreate returns an error matching
// ErrCannotCreate and the server's sentinel, with a ctx that would allow
// a long wait, a listener gets Failed, and the Node stops trying (no node,
// nothing left after Close). Before the fix the Node retried until the
// ctx ended: WaitForInitialCreate returned context.DeadlineExceeded.
func TestPersistentNode_RefusedCreateFailsAtOnce(t *testing.T) {
	cacheNoLeaks(t)
	c := newClient(t)
	dir := cachePath(t, c)
	for _, tc := range []struct {
		name   string
		parent func(ctx context.Context, p string) error
		want   error
	}{
		{"EphemeralParent", func(ctx context.Context, p string) error {
			_, err := c.Create().CreatingParentsIfNeeded().WithMode(framework.Ephemeral).ForPath(ctx, p, nil)
			return err
		}, zk.ErrNoChildrenForEphemerals},
		{"ReadOnlyParent", func(ctx context.Context, p string) error {
			_, err := c.Create().CreatingParentsIfNeeded().WithACL(zk.WorldACL(zk.PermRead)...).ForPath(ctx, p, nil)
			return err
		}, zk.ErrNoAuth},
	} {
		for _, mode := range []struct {
			name string
			opts []persistentnode.Option
		}{
			{"Ephemeral", nil},
			{"Protected", []persistentnode.Option{persistentnode.WithProtection()}},
			{"PlainSequential", []persistentnode.Option{persistentnode.WithMode(framework.EphemeralSequential), persistentnode.WithoutProtection()}},
		} {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				parent := dir + "/" + tc.name + "-" + mode.name
				if err := tc.parent(t.Context(), parent); err != nil {
					t.Fatal(err)
				}
				n, err := persistentnode.New(c, parent+"/id", []byte("x"), mode.opts...)
				if err != nil {
					t.Fatal(err)
				}
				var r pnRecorder
				n.AddListener(r.listen)
				if err := n.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(t.Context(), pnWait)
				defer cancel()
				err = n.WaitForInitialCreate(ctx)
				if !errors.Is(err, persistentnode.ErrCannotCreate) || !errors.Is(err, tc.want) {
					t.Fatalf("WaitForInitialCreate = %v, want ErrCannotCreate and %v", err, tc.want)
				}
				if strings.Count(err.Error(), "persistentnode:") != 1 {
					t.Errorf("message %q: want one package prefix", err)
				}
				// A second wait says the same, at once.
				if err2 := n.WaitForInitialCreate(ctx); !errors.Is(err2, persistentnode.ErrCannotCreate) {
					t.Errorf("second WaitForInitialCreate = %v", err2)
				}
				waitFor(t, func() string {
					if got := r.count(persistentnode.Failed); got != 1 {
						return fmt.Sprintf("%d Failed events", got)
					}
					return ""
				})
				if p, ok := n.Path(); ok {
					t.Errorf("Path() = %q, true after a refusal", p)
				}
				if err := n.Close(t.Context()); err != nil {
					t.Errorf("Close: %v", err)
				}
				if kids := children(t, c, parent); len(kids) != 0 {
					t.Errorf("nodes left under %s: %q", parent, kids)
				}
			})
		}
	}
}

// TestPersistentNode_TakeOverReplacesAnotherSessionsNode: with WithTakeOver
// the first creation replaces a node that another session holds at the
// path (an earlier process's, whose session the server has not yet
// expired), at once; after that, a node someone else puts there is waited
// for, not deleted, so two live Nodes never delete each other's node in
// turn. Without the option the Node waits, and WaitForInitialCreate's error
// says why. Before the fix (no option) the first creation waited until the
// ctx ended with a bare context.DeadlineExceeded.
func TestPersistentNode_TakeOverReplacesAnotherSessionsNode(t *testing.T) {
	cacheNoLeaks(t)
	logged := &logCounter{}
	c := startClient(t, builder(t, zktest.Shared(t).ConnectString()).Logger(slog.New(logged)))
	old := newClient(t)
	parent := cachePath(t, c)
	p := parent + "/id"
	if _, err := old.Create().CreatingParentsIfNeeded().WithMode(framework.Ephemeral).ForPath(t.Context(), p, []byte("old")); err != nil {
		t.Fatal(err)
	}

	// Without the option: it waits, and says why.
	waiting, err := persistentnode.New(c, p, []byte("mine"))
	if err != nil {
		t.Fatal(err)
	}
	if err := waiting.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(t.Context(), time.Second)
	err = waiting.WaitForInitialCreate(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, zk.ErrNodeExists) ||
		!strings.Contains(err.Error(), fmt.Sprintf("%#x", old.SessionID())) {
		t.Errorf("WaitForInitialCreate behind another session's node = %v; want the deadline, ErrNodeExists and the owner", err)
	}
	if err := waiting.Close(t.Context()); err != nil {
		t.Fatal(err)
	}

	// With it: replaced at once.
	n := startPNode(t, c, p, "mine", nil, persistentnode.WithTakeOver())
	waitOne(t, old, n, parent, "id", c, "mine")

	// Later, another session's node at the path is waited for: old
	// replaces the Node's node in one multi; the Node sees it go, finds
	// old's node, and waits (its log says so) instead of deleting it.
	waits := logged.count(waitMsg)
	if _, err := old.Transaction().Delete(p, -1).Create(p, []byte("other"), framework.Ephemeral).Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() string {
		if logged.count(waitMsg) == waits {
			return "the Node has not found the other session's node"
		}
		return ""
	})
	got, st, err := old.GetData().ForPath(t.Context(), p)
	if err != nil || string(got) != "other" || st.EphemeralOwner != old.SessionID() {
		t.Fatalf("another session's node after the first creation: %q, %v (want it left alone)", got, err)
	}
	if err := old.Delete().ForPath(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	waitOne(t, old, n, parent, "id", c, "mine")
}

// waitMsg is what a Node logs when it waits for another session's node.
const waitMsg = "persistentnode: another session's node is at the path; waiting for it to go"

// logCounter is a slog.Handler that counts each message.
type logCounter struct {
	mu   sync.Mutex
	seen map[string]int
}

func (l *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCounter) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = make(map[string]int)
	}
	l.seen[r.Message]++
	return nil
}
func (l *logCounter) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCounter) WithGroup(string) slog.Handler      { return l }

func (l *logCounter) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[msg]
}

// TestPersistentNode_PlainSequentialName: WithoutProtection makes an
// EphemeralSequential node named <name><10 digits>, with no protected
// prefix (curator-x-discovery's DYNAMIC_SEQUENTIAL layout), made again
// with a new sequence after a delete, and deleted at Close. Before the
// fix the option did not exist (sequential nodes were always protected).
func TestPersistentNode_PlainSequentialName(t *testing.T) {
	cacheNoLeaks(t)
	c, obs := newClient(t), newClient(t)
	parent := cachePath(t, c)
	n := startPNode(t, c, parent+"/inst-", "d", nil,
		persistentnode.WithMode(framework.EphemeralSequential), persistentnode.WithoutProtection())
	first, _ := n.Path()
	name := strings.TrimPrefix(first, parent+"/")
	if len(name) != len("inst-")+10 || !strings.HasPrefix(name, "inst-") || strings.Trim(name[5:], "0123456789") != "" {
		t.Fatalf("node name %q, want inst-<10 digits>", name)
	}
	waitOne(t, obs, n, parent, "inst-", c, "d")
	if err := obs.Delete().ForPath(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() string {
		if p, ok := n.Path(); !ok || p == first {
			return fmt.Sprintf("Path() = %q, %v", p, ok)
		}
		return pnOne(t.Context(), obs, n, parent, "inst-", c, "d")
	})
	if err := n.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitNone(t, obs, parent, "inst-")
}
