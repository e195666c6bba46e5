package groupmember_test

import (
	"errors"
	"testing"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/groupmember"
)

func unstarted(t *testing.T) *framework.Client {
	t.Helper()
	c, err := framework.NewBuilder().ConnectString("127.0.0.1:1").Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestNew_RejectsBadInput(t *testing.T) {
	c := unstarted(t)
	tests := []struct {
		name    string
		client  *framework.Client
		path    string
		id      string
		payload []byte
		want    error
	}{
		{"nil client", nil, "/g", "a", nil, framework.ErrNilClient},
		{"empty path", c, "", "a", nil, framework.ErrInvalidPath},
		{"relative path", c, "g", "a", nil, framework.ErrInvalidPath},
		{"trailing slash", c, "/g/", "a", nil, framework.ErrInvalidPath},
		{"empty ID", c, "/g", "", nil, framework.ErrInvalidArgument},
		{"ID with a slash", c, "/g", "a/b", nil, framework.ErrInvalidArgument},
		{"ID ..", c, "/g", "..", nil, framework.ErrInvalidArgument},
		{"ID with NUL", c, "/g", "a\x00", nil, framework.ErrInvalidPath},
		{"oversized payload", c, "/g", "a", make([]byte, groupmember.MaxPayloadSize+1), framework.ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := groupmember.New(tt.client, tt.path, tt.id, tt.payload)
			if m != nil || !errors.Is(err, groupmember.ErrInvalidArgument) || !errors.Is(err, tt.want) {
				t.Fatalf("New = %v, %v; want nil and an error matching %v and %v", m, err, groupmember.ErrInvalidArgument, tt.want)
			}
		})
	}
}

func TestMember_ZeroAndNilNeverPanic(t *testing.T) {
	ctx := t.Context()
	for _, m := range []*groupmember.Member{nil, {}} {
		if err := m.Start(ctx); !errors.Is(err, groupmember.ErrInvalidArgument) {
			t.Errorf("Start = %v", err)
		}
		if err := m.WaitForInitialCreate(ctx); !errors.Is(err, groupmember.ErrInvalidArgument) {
			t.Errorf("WaitForInitialCreate = %v", err)
		}
		if err := m.SetPayload(ctx, nil); !errors.Is(err, groupmember.ErrInvalidArgument) {
			t.Errorf("SetPayload = %v", err)
		}
		if got := m.Members(); got != nil {
			t.Errorf("Members = %v", got)
		}
		if p, ok := m.Path(); p != "" || ok {
			t.Errorf("Path = %q, %v", p, ok)
		}
		if m.ID() != "" || m.Payload() != nil {
			t.Errorf("ID, Payload = %q, %q", m.ID(), m.Payload())
		}
		m.AddListener(nil)()
		if err := m.Close(ctx); !errors.Is(err, groupmember.ErrInvalidArgument) {
			t.Errorf("Close = %v", err)
		}
	}
}

func TestMember_BeforeStartAndAfterClose(t *testing.T) {
	c := unstarted(t)
	ctx := t.Context()
	m, err := groupmember.New(c, "/g", "a", []byte("p"))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Members(); got != nil {
		t.Errorf("Members before Start = %v", got)
	}
	if err := m.SetPayload(ctx, []byte("q")); !errors.Is(err, groupmember.ErrNotStarted) {
		t.Errorf("SetPayload before Start = %v", err)
	}
	if err := m.Start(ctx); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Start on an unstarted client = %v", err)
	}
	if err := m.Start(ctx); !errors.Is(err, groupmember.ErrClosed) {
		t.Errorf("Start after a failed Start = %v", err)
	}
	if err := m.SetPayload(ctx, []byte("q")); !errors.Is(err, groupmember.ErrClosed) {
		t.Errorf("SetPayload after Close = %v", err)
	}
	if err := m.Close(ctx); err != nil {
		t.Errorf("Close = %v", err)
	}
}

func TestIDFromPath(t *testing.T) {
	for path, want := range map[string]string{"/g/a": "a", "/a/b/c-1": "c-1", "/x": "x"} {
		if got := groupmember.IDFromPath(path); got != want {
			t.Errorf("IDFromPath(%q) = %q, want %q", path, got, want)
		}
	}
}
