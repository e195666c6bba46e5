package integration

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
)

// A changing ensemble (issue 32 §1), on one reconfigurable ensemble of
// three servers: GetConfig, the refusals of Reconfig, then two servers
// join and the first three leave while a client started against the first
// three holds a mutex; once they are stopped, the client works on the new
// members with its hold intact, and a client without the tracker does not
// reach them. The steps run in order: each changes the ensemble.
func TestReconfig_ChangingEnsemble(t *testing.T) {
	t.Parallel()
	cl := zktest.StartReconfigurable(t, 3, zktest.Config{})
	first := cl.Servers()
	ctx := t.Context()
	admin := startClient(t, builder(t, cl.ConnectString()).Authorization("digest", []byte(zktest.SuperUser)))
	const chroot = "/rc"
	mustCreate(t, admin, chroot, "")
	// user is started against the first servers only, under a chroot; the
	// tracker is on by default for a connect string of several servers.
	user := startClient(t, builder(t, cl.ConnectString()+chroot))
	fixed := startClient(t, builder(t, cl.ConnectString()).EnsembleTracker(false))

	cfg, _, err := user.GetConfig().ForEnsemble(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rcWantMembers(t, "GetConfig", cfg, first)
	if cur := user.CurrentConfig(); cur == nil || cur.Version != cfg.Version {
		t.Fatalf("the tracker's config after Start = %+v, want version %x", cur, cfg.Version)
	}

	// Refusals: no rights, then a stale version. Neither changes anything.
	_, err = user.Reconfig().Leaving(3).ForEnsemble(ctx)
	if !errors.Is(err, framework.ErrNoAuth) {
		t.Fatalf("reconfig without rights = %v, want ErrNoAuth", err)
	}
	_, err = admin.Reconfig().Leaving(3).FromConfig(cfg.Version - 1).ForEnsemble(ctx)
	if !errors.Is(err, framework.ErrBadVersion) || errors.Is(err, framework.ErrIndeterminate) {
		t.Fatalf("reconfig from a stale version = %v, want ErrBadVersion (determinate)", err)
	}
	if now, _, err := admin.GetConfig().ForEnsemble(ctx); err != nil || now.Version != cfg.Version {
		t.Fatalf("config after the refusals: %+v, %v; want version %x unchanged", now, err, cfg.Version)
	}

	path := testPath(t)
	var suspended atomic.Int32
	user.AddListener(func(s framework.ConnectionState) {
		if s == framework.Suspended {
			suspended.Add(1)
		}
	})
	server := user.ZooKeeper().Server()
	hold, err := newMutex(t, user, path).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// Two servers join.
	joiners := make([]*zktest.Server, 2)
	var wg sync.WaitGroup
	for i := range joiners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := cl.AddServer(ctx)
			if err != nil {
				t.Error(err)
			}
			joiners[i] = s
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	slices.SortFunc(joiners, func(a, b *zktest.Server) int { return a.ID - b.ID })
	added, err := admin.Reconfig().Joining(joiners[0].Spec(), joiners[1].Spec()).FromConfig(cfg.Version).ForEnsemble(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rcWantMembers(t, "after the joins", added, append(slices.Clone(first), joiners...))
	eventually(t, 10*time.Second, func() bool { return rcSameServers(user.ConnectString(), chroot, cl.Servers()) },
		"the tracker gives the client all five servers")
	// Its server is still a member: the client stays on it.
	if got := user.ZooKeeper().Server(); got != server || suspended.Load() != 0 {
		t.Fatalf("after the joins the client is on %s (was %s), %d times suspended; want the same connection", got, server, suspended.Load())
	}

	// The first three leave; then a whole reconfiguration states the same
	// members again, from a client whose reply to it is lost: its retry
	// finds the version moved on by its own first attempt, which it cannot
	// tell from another's, so the outcome is indeterminate.
	left, err := admin.Reconfig().Leaving(int64(first[0].ID), int64(first[1].ID), int64(first[2].ID)).ForEnsemble(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rcWantMembers(t, "after the leaves", left, joiners)
	proxy, err := zktest.NewProxy(joiners[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	lossy := startClient(t, builder(t, proxy.Addr()).Authorization("digest", []byte(zktest.SuperUser)))
	proxy.LoseNextReply(zktest.OpReconfig)
	_, err = lossy.Reconfig().WithNewMembers(joiners[0].Spec(), joiners[1].Spec()).FromConfig(left.Version).ForEnsemble(ctx)
	if !errors.Is(err, framework.ErrIndeterminate) || !errors.Is(err, framework.ErrBadVersion) || proxy.LostReplies() != 1 {
		t.Fatalf("a whole reconfiguration whose reply was lost = %v (%d replies lost), want ErrIndeterminate and ErrBadVersion", err, proxy.LostReplies())
	}
	if err := lossy.Sync().ForPath(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	whole, _, err := lossy.GetConfig().ForEnsemble(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rcWantMembers(t, "after the whole reconfiguration", whole, joiners)
	if whole.Version <= left.Version {
		t.Fatalf("the whole reconfiguration was not applied: version %x, was %x", whole.Version, left.Version)
	}
	eventually(t, 10*time.Second, func() bool { return rcSameServers(user.ConnectString(), chroot, joiners) },
		"the tracker gives the client the two new members only")
	if !rcSameServers(fixed.ConnectString(), "", first) {
		t.Fatalf("without the tracker the client dials %s, want the first servers", fixed.ConnectString())
	}
	// A write commits only once the new configuration is active (ZooKeeper's
	// guide): then the first servers may go.
	mustCreate(t, admin, testPath(t)+"-sync", "")
	for _, s := range first {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Kill(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()

	// The client works on the new members, on the same session: its hold
	// is intact, and its chroot still applies.
	session := user.SessionID()
	mustCreate(t, user, path+"-after", "moved")
	if data, _, err := user.GetData().ForPath(ctx, path+"-after"); err != nil || string(data) != "moved" {
		t.Fatalf("read on the new members = %q, %v", data, err)
	}
	if _, err := admin.CheckExists().ForPath(ctx, chroot+path+"-after"); err != nil {
		t.Fatalf("the node written after the move is not under the chroot %s: %v", chroot, err)
	}
	if user.SessionID() != session {
		t.Fatalf("the session changed (%x to %x)", session, user.SessionID())
	}
	select {
	case <-hold.Lost():
		t.Fatal("the hold was lost across the change of ensemble")
	default:
	}
	if err := hold.Check(); err != nil {
		t.Fatalf("the hold's check after the move: %v", err)
	}
	if err := hold.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if kids := children(t, user, path); len(kids) != 0 {
		t.Fatalf("nodes left under %s: %q", path, kids)
	}

	// Without the tracker the client still dials the first servers only.
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := fixed.CheckExists().ForPath(short, "/"); err == nil {
		t.Fatal("the client without the tracker reached the ensemble after its servers were stopped")
	}
}

// rcWantMembers fails the test unless cfg's members are servers, with
// their specs and client addresses.
func rcWantMembers(t *testing.T, what string, cfg *framework.EnsembleConfig, servers []*zktest.Server) {
	t.Helper()
	var got, want []string
	for _, m := range cfg.Members {
		got = append(got, m.String()+" "+m.ClientAddr)
	}
	for _, s := range servers {
		want = append(want, s.Spec()+" "+s.Addr())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || cfg.Version == 0 {
		t.Fatalf("%s: members %q (version %x), want %q", what, got, cfg.Version, want)
	}
}

// rcSameServers reports whether connect names the servers' client
// addresses, in any order, followed by chroot.
func rcSameServers(connect, chroot string, servers []*zktest.Server) bool {
	hosts, ok := strings.CutSuffix(connect, chroot)
	if !ok {
		return false
	}
	got := strings.Split(hosts, ",")
	var want []string
	for _, s := range servers {
		want = append(want, s.Addr())
	}
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}
