package transport

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

// round calls Next n times and returns the servers and whether each call
// said a round had been gone.
func round(h *Hosts, n int) ([]string, []bool) {
	var got []string
	var rounds []bool
	for range n {
		s, r := h.Next()
		got = append(got, s)
		rounds = append(rounds, r)
	}
	return got, rounds
}

func TestHosts_NextGoesRoundTheList(t *testing.T) {
	h := NewHosts(false)
	servers := []string{"a:1", "b:2", "c:3", "b:2"}
	if err := h.Init(servers); err != nil {
		t.Fatal(err)
	}
	if h.Len() != 3 {
		t.Fatalf("Len = %d, want 3 (duplicates dropped)", h.Len())
	}
	got, rounds := round(h, 4)
	if !sameSet(got[:3], []string{"a:1", "b:2", "c:3"}) || got[3] != got[0] {
		t.Fatalf("Next gave %q, want each server once, then the first again", got)
	}
	if !slices.Equal(rounds, []bool{false, false, false, true}) {
		t.Fatalf("round flags %v, want true only on the fourth call", rounds)
	}
	connected := got[3]
	h.Connected()
	got, rounds = round(h, 3)
	if got[2] != connected || !slices.Equal(rounds, []bool{false, false, true}) {
		t.Fatalf("after Connected: %q %v, want a whole round ending on the connected server", got, rounds)
	}
}

func TestHosts_Update(t *testing.T) {
	for _, tc := range []struct {
		name    string
		update  []string
		changed bool
		wantErr error
		// want is the set the next round dials; keep says that it ends on
		// the server connected before the update.
		want []string
		keep bool
	}{
		{"current server stays", []string{"b:2", "d:4", "e:5", "a:1", "c:3"}, true, nil, []string{"a:1", "b:2", "c:3", "d:4", "e:5"}, true},
		{"current server gone", []string{"d:4", "e:5"}, true, nil, []string{"d:4", "e:5"}, false},
		{"same set", []string{"c:3", "a:1", "b:2"}, false, nil, []string{"a:1", "b:2", "c:3"}, true},
		{"empty", nil, false, ErrNoServers, []string{"a:1", "b:2", "c:3"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHosts(false)
			if err := h.Init([]string{"a:1", "b:2", "c:3"}); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				h.Next()
			}
			h.Connected()
			connected := h.servers[h.cur]
			changed, err := h.Update(tc.update)
			if changed != tc.changed || !errors.Is(err, tc.wantErr) {
				t.Fatalf("Update = %v, %v; want %v, %v", changed, err, tc.changed, tc.wantErr)
			}
			if !sameSet(h.Servers(), tc.want) {
				t.Fatalf("Servers = %q, want %q", h.Servers(), tc.want)
			}
			got, rounds := round(h, len(tc.want))
			if !sameSet(got, tc.want) {
				t.Fatalf("the next round dials %q, want each of %q once", got, tc.want)
			}
			last := len(got) - 1
			if tc.keep && (got[last] != connected || !rounds[last]) {
				t.Fatalf("the next round %q %v: want it to end on %s, the connected server, as a whole round", got, rounds, connected)
			}
			if !tc.keep && slices.Contains(rounds, true) {
				t.Fatalf("the first round on a new list %q says it went round: %v", got, rounds)
			}
		})
	}
}

func TestHosts_Resolve(t *testing.T) {
	h := NewHosts(true)
	if err := h.Init([]string{"127.0.0.1:2181"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Update([]string{"no-such-host.invalid:2181"}); !errors.Is(err, ErrNoServers) {
		t.Fatalf("Update to a name that does not resolve = %v, want ErrNoServers", err)
	}
	if got := h.Servers(); !slices.Equal(got, []string{"127.0.0.1:2181"}) {
		t.Fatalf("a failed Update changed the list to %q", got)
	}
	if _, err := h.Update([]string{"127.0.0.1"}); err == nil {
		t.Fatal("Update to a server with no port: no error")
	}
}

// Next and Update from two goroutines, as go-zookeeper's loop and the
// ensemble tracker call them (the race detector checks).
func TestHosts_ConcurrentUpdate(t *testing.T) {
	h := NewHosts(false)
	if err := h.Init([]string{"a:1", "b:2"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range 1000 {
			if s, _ := h.Next(); s == "" {
				t.Error("Next gave no server")
				return
			}
			h.Connected()
		}
	}()
	go func() {
		defer wg.Done()
		for i := range 1000 {
			list := []string{"a:1", "b:2"}
			if i%2 == 0 {
				list = []string{"c:3"}
			}
			if _, err := h.Update(list); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	wg.Wait()
}
