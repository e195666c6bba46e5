package semaphoremutex

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
)

func TestBadInput(t *testing.T) {
	if _, err := New(nil, "/m"); !errors.Is(err, framework.ErrNilClient) || !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("New(nil client) = %v, want ErrNilClient and ErrInvalidArgument", err)
	}
	c, err := framework.NewBuilder().ConnectString("127.0.0.1:1").Build()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := New(c, "m"); !errors.Is(err, framework.ErrInvalidPath) || !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("New(relative path) = %v, want ErrInvalidPath and ErrInvalidArgument", err)
	}
	if _, err := New(c, "/m", nil); !errors.Is(err, framework.ErrInvalidArgument) || !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("New(nil option) = %v, want ErrInvalidArgument", err)
	}
	m, err := New(c, "/m")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := m.Release(ctx); !errors.Is(err, ErrNotOwner) {
		t.Errorf("Release without hold = %v, want ErrNotOwner", err)
	}
	if _, _, err := m.TryAcquire(ctx, -time.Second); !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, framework.ErrInvalidArgument) {
		t.Errorf("TryAcquire(-1s) = %v, want ErrInvalidArgument", err)
	}
	if _, err := m.Acquire(ctx); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Acquire on an unstarted client = %v, want ErrNotStarted", err)
	}
	if m.IsAcquiredInThisProcess() {
		t.Error("IsAcquiredInThisProcess without hold")
	}
	var nilMutex *Mutex
	if _, err := nilMutex.Acquire(ctx); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil Mutex Acquire = %v, want ErrInvalidArgument", err)
	}
	for name, h := range map[string]*Hold{"nil": nil, "zero": {}} {
		if err := h.Release(ctx); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%s Hold Release = %v, want ErrNotOwner", name, err)
		}
		if _, err := h.FencingToken(); !errors.Is(err, ErrNotOwner) {
			t.Errorf("%s Hold FencingToken = %v, want ErrNotOwner", name, err)
		}
		select {
		case <-h.Lost():
		default:
			t.Errorf("%s Hold Lost() is not closed", name)
		}
		if h.Node() != "" {
			t.Errorf("%s Hold Node() = %q", name, h.Node())
		}
	}
}
