package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-zookeeper/zk"
)

func TestNew_BadArguments(t *testing.T) {
	c, err := framework.NewBuilder().ConnectString("127.0.0.1:1").Build()
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		new  func() error
		also error
	}{
		"node, nil client":     {func() error { _, err := NewNode(nil, "/a"); return err }, framework.ErrNilClient},
		"children, nil client": {func() error { _, err := NewChildren(nil, "/a"); return err }, framework.ErrNilClient},
		"tree, nil client":     {func() error { _, err := NewTree(nil, "/a"); return err }, framework.ErrNilClient},
		"node, empty path":     {func() error { _, err := NewNode(c, ""); return err }, framework.ErrInvalidPath},
		"children, relative":   {func() error { _, err := NewChildren(c, "a/b"); return err }, framework.ErrInvalidPath},
		"tree, trailing slash": {func() error { _, err := NewTree(c, "/a/"); return err }, framework.ErrInvalidPath},
		"tree, dot segment":    {func() error { _, err := NewTree(c, "/a/./b"); return err }, framework.ErrInvalidPath},
		"tree, NUL":            {func() error { _, err := NewTree(c, "/a\x00"); return err }, framework.ErrInvalidPath},
		"tree, depth -1":       {func() error { _, err := NewTree(c, "/a", WithMaxDepth(-1)); return err }, framework.ErrInvalidArgument},
		"tree, nil option":     {func() error { _, err := NewTree(c, "/a", nil); return err }, framework.ErrInvalidArgument},
		"zero, Start":          {func() error { var n Node; return n.Start(context.Background()) }, framework.ErrInvalidArgument},
		"nil, Entries":         {func() error { var tr *Tree; _, err := tr.Entries(); return err }, framework.ErrInvalidArgument},
		"nil ctx":              {func() error { n, _ := NewNode(c, "/a"); return n.Start(nil) }, framework.ErrInvalidArgument}, //nolint:staticcheck // nil ctx on purpose
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.new()
			if !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, tc.also) {
				t.Errorf("err = %v, want ErrInvalidArgument and %v", err, tc.also)
			}
			if msg := err.Error(); strings.Count(msg, "cache: ") != 1 || strings.Contains(msg, "framework: ") {
				t.Errorf("message %q: want the one prefix cache:", msg)
			}
		})
	}
}

func TestMisuse_BeforeStartAndAfterClose(t *testing.T) {
	c, err := framework.NewBuilder().ConnectString("127.0.0.1:1").Build()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTree(c, "/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Get("/a"); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Get before Start: %v", err)
	}
	if _, err := tr.Entries(); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Entries before Start: %v", err)
	}
	if err := tr.Start(context.Background()); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Start on a client not started: %v", err)
	}
	// A failed Start closed the cache.
	if _, err := tr.Children("/a"); !errors.Is(err, ErrClosed) {
		t.Errorf("Children after a failed Start: %v", err)
	}
	if err := tr.Start(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close: %v", err)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	tr.AddListener(func(Event) {})() // a no-op after Close

	var zero Node
	if err := zero.Start(context.Background()); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("zero Node Start: %v", err)
	}
	if _, err := zero.Current(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("zero Node Current: %v", err)
	}
	var nilTree *Tree
	if err := nilTree.Close(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil Tree Close: %v", err)
	}
	n, _ := NewNode(c, "/a")
	if err := n.Start(nil); !errors.Is(err, ErrInvalidArgument) { //nolint:staticcheck // a nil ctx on purpose
		t.Errorf("Start(nil): %v", err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := n.Start(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a done ctx: %v", err)
	}
	if _, err := n.Current(); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Current after Start with a done ctx: %v", err)
	}
}

func TestEventType_String(t *testing.T) {
	for typ, want := range map[EventType]string{
		NodeAdded: "NODE_ADDED", NodeUpdated: "NODE_UPDATED", NodeRemoved: "NODE_REMOVED",
		Initialized: "INITIALIZED", Resynced: "RESYNCED", ConnectionSuspended: "CONNECTION_SUSPENDED",
		ConnectionReconnected: "CONNECTION_RECONNECTED", ConnectionLost: "CONNECTION_LOST", Error: "ERROR",
		0: "UNKNOWN", 42: "UNKNOWN",
	} {
		if got := typ.String(); got != want {
			t.Errorf("%d: %q, want %q", int(typ), got, want)
		}
	}
}

// ErrNoNode matches the client's no-node sentinels (framework's and
// go-zookeeper's), wrapped or not, and nothing else.
func TestErrNoNodeMatchesTheClientsSentinels(t *testing.T) {
	err := fmt.Errorf("get /a: %w", ErrNoNode)
	for _, target := range []error{ErrNoNode, framework.ErrNoNode, zk.ErrNoNode} {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(%v, %v) = false", err, target)
		}
	}
	for _, target := range []error{ErrClosed, framework.ErrNodeExists, zk.ErrNodeExists} {
		if errors.Is(err, target) {
			t.Errorf("errors.Is(%v, %v) = true", err, target)
		}
	}
}
