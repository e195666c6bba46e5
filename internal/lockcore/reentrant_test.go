package lockcore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/goid"
	"github.com/go-curator/curator/retry"
)

// Issue 24, item 4: a nested Acquire by a goroutine whose hold was lost
// returns the loss error without I/O and without raising the count, and a
// downgrade beside a lost hold is refused. The client is never started:
// these paths must not touch it.
func TestReentrant_RefusesLostHolds(t *testing.T) {
	policy, err := retry.NewExponentialBackoff(time.Millisecond, 1)
	if err != nil {
		t.Fatal(err)
	}
	client, err := framework.NewClient("127.0.0.1:1", policy)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	recipeLost := errors.New("recipe: session lost")
	recipeOwner := errors.New("recipe: owner vanished")
	errs := Errors{Prefix: "recipe", SessionLost: recipeLost, OwnerVanished: recipeOwner,
		NotOwner: errors.New("recipe: not held"), Invalid: errors.New("recipe: invalid argument")}

	for _, tc := range []struct {
		name string
		lost <-chan struct{}
		want []error // nil: the nested acquire succeeds and counts
	}{
		{"open", make(chan struct{}), nil},
		{"lost", chans.Closed(), []error{ErrSessionLost, recipeLost}},
	} {
		t.Run("Nested/"+tc.name, func(t *testing.T) {
			core, err := New(client, "/lock", "lock-", MaxLeases(1))
			if err != nil {
				t.Fatal(err)
			}
			r := NewReentrant(core, ReentrantConfig{Errors: errs}, func(h *ReentrantHold) *ReentrantHold { return h })
			h := &ReentrantHold{Hold: &Hold{node: "/lock/_c_x-lock-0000000001", seq: 1, lost: tc.lost}, b: &r.base, gid: goid.Get(), count: 1}
			h.outer = h
			r.holds[h.gid] = h
			for _, try := range []bool{false, true} {
				acquire := r.Acquire
				if try {
					acquire = r.TryAcquire
				}
				got, ok, err := acquire(context.Background(), 0)
				if tc.want == nil {
					if err != nil || !ok || got != h {
						t.Fatalf("nested acquire of an open hold = %v, %v, %v", got, ok, err)
					}
					continue
				}
				for _, w := range tc.want {
					if !errors.Is(err, w) {
						t.Errorf("nested acquire of a lost hold: %v; want it to match %v", err, w)
					}
				}
				if ok || got != nil {
					t.Errorf("nested acquire of a lost hold returned %v, %v", got, ok)
				}
			}
			wantCount := 1
			if tc.want == nil {
				wantCount = 3
			}
			if h.count != wantCount {
				t.Fatalf("count after the nested acquires = %d, want %d", h.count, wantCount)
			}
		})
	}

	t.Run("Downgrade/lost", func(t *testing.T) {
		core, err := New(client, "/lock", "__READ__", MaxLeases(1), "__WRIT__")
		if err != nil {
			t.Fatal(err)
		}
		owner := &Hold{node: "/lock/_c_x-__WRIT__0000000001", seq: 1, lost: chans.Closed()}
		r := NewReentrant(core, ReentrantConfig{Errors: errs, Grant: func() *Hold { return owner }},
			func(h *ReentrantHold) *ReentrantHold { return h })
		got, ok, err := r.Acquire(context.Background(), -1)
		for _, w := range []error{ErrOwnerVanished, recipeOwner, ErrSessionLost, recipeLost} {
			if !errors.Is(err, w) {
				t.Errorf("downgrade beside a lost hold: %v; want it to match %v", err, w)
			}
		}
		if ok || got != nil || r.IsAcquiredInThisProcess() {
			t.Fatalf("downgrade beside a lost hold returned %v, %v; holds %v", got, ok, r.IsAcquiredInThisProcess())
		}
	})
}
