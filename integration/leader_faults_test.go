package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// The fault tests run each scenario with both recipes. Leaders write to a
// fenced store while their terms last; at the end the store's history
// must show no stale write accepted and no two leaders' writes
// interleaved, and the election log must show every election in order of
// fencing tokens (and, where the old leader can know first, after the old
// leader stopped trusting its leadership).

// waitTerms waits until the log holds n terms.
func waitTerms(t *testing.T, log *electionLog, n int, d time.Duration, what string) leaderTerm {
	t.Helper()
	eventually(t, d, func() bool { return log.count() >= n }, what)
	return log.last()
}

// leaderOf returns the candidate that leads, or nil.
func leaderOf(cands []*candidate) *candidate {
	for _, c := range cands {
		if c != nil && c.leads() {
			return c
		}
	}
	return nil
}

// TestLeader_FiveCandidatesOnThreeClients: five candidates on three
// clients; the leader is closed again and again and a new candidate joins
// at the back each time. Leadership passes in queue order, each new leader
// is elected only after the old one's Lost() closed, and the fenced
// writes never interleave.
func TestLeader_FiveCandidatesOnThreeClients(t *testing.T) {
	for _, kind := range leaderKinds {
		t.Run(kind.name, func(t *testing.T) {
			base := testPath(t)
			obs := newClient(t)
			t.Cleanup(func() { deleteTree(t, obs, base) })
			clients := []*framework.Client{newClient(t), newClient(t), newClient(t)}
			w := &termWorker{log: &electionLog{strict: true}, store: newFencedStore(t, obs, base+"/store"), every: 2 * time.Millisecond}
			path := base + "/election"
			var cands []*candidate
			join := func(i int) {
				cands = append(cands, kind.start(t, clients[i%3], path, fmt.Sprintf("k%d", i), w))
				eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path)) == len(cands)-closedCount(cands) },
					fmt.Sprintf("k%d queued", i))
			}
			for i := range 5 {
				join(i)
			}
			const rounds = 8
			for r := range rounds {
				term := waitTerms(t, w.log, r+1, 15*time.Second, fmt.Sprintf("election %d", r+1))
				if want := fmt.Sprintf("k%d", r); term.who != want {
					t.Errorf("election %d went to %s, want %s (queue order)", r+1, term.who, want)
				}
				time.Sleep(30 * time.Millisecond) // let it write
				l := leaderOf(cands)
				if l == nil || l.id != term.who {
					t.Fatalf("election %d: %s was elected but does not report leading", r+1, term.who)
				}
				if err := l.close(t.Context()); err != nil {
					t.Fatalf("close %s: %v", l.id, err)
				}
				cands[r] = nil
				join(5 + r)
			}
			for _, c := range cands {
				if c != nil {
					c.close(t.Context())
				}
			}
			w.check(t)
			h := w.store.verify(t)
			if len(h) == 0 {
				t.Error("no write was accepted")
			}
			eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path)) == 0 }, "every node is gone after Close")
			noLeaderGoroutines(t)
		})
	}
}

func closedCount(cs []*candidate) int {
	n := 0
	for _, c := range cs {
		if c == nil {
			n++
		}
	}
	return n
}

// TestLeader_SessionExpiryMovesLeadership expires the leader's session on
// the server. The next candidate is elected, the old leader's Lost()
// closes, the old candidate joins again with a node of its new session,
// and it leads again once the new leader closes. The server deletes the
// old leader's node at once, so it can be told only after the next
// election: the fenced store is what keeps it from writing.
func TestLeader_SessionExpiryMovesLeadership(t *testing.T) {
	for _, kind := range leaderKinds {
		t.Run(kind.name, func(t *testing.T) {
			base := testPath(t)
			obs := newClient(t)
			t.Cleanup(func() { deleteTree(t, obs, base) })
			a, b := newClient(t), newClient(t)
			w := &termWorker{log: &electionLog{}, store: newFencedStore(t, obs, base+"/store"), every: time.Millisecond}
			path := base + "/election"
			ca := kind.start(t, a, path, "a", w)
			first := waitTerms(t, w.log, 1, 10*time.Second, "a leads")
			cb := kind.start(t, b, path, "b", w)
			eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path)) == 2 }, "b queued")
			oldSession := a.SessionID()

			if err := zktest.ExpireSession(t.Context(), zktest.Shared(t).ConnectString(), a.ZooKeeper()); err != nil && !errors.Is(err, zk.ErrSessionExpired) {
				t.Fatal(err)
			}
			second := waitTerms(t, w.log, 2, 10*time.Second, "b is elected")
			if second.who != "b" || second.token <= first.token {
				t.Errorf("after a's expiry %s was elected with token %d (a's was %d)", second.who, second.token, first.token)
			}
			eventually(t, 10*time.Second, func() bool { return isClosed(first.lost) }, "a's Lost() closes")
			eventually(t, 15*time.Second, func() bool { return len(children(t, obs, path)) == 2 && a.SessionID() != oldSession },
				"a joins again on its new session")
			for _, k := range children(t, obs, path) {
				st, err := obs.CheckExists().ForPath(t.Context(), path+"/"+k)
				if err == nil && st != nil && st.EphemeralOwner == oldSession {
					t.Errorf("node %s of a's expired session is still there", k)
				}
			}
			if err := cb.close(t.Context()); err != nil {
				t.Fatal(err)
			}
			third := waitTerms(t, w.log, 3, 10*time.Second, "a leads again")
			if third.who != "a" || third.token <= second.token {
				t.Errorf("after b closed %s was elected with token %d (b's was %d)", third.who, third.token, second.token)
			}
			ca.close(t.Context())
			w.check(t)
			w.store.verify(t)
			t.Logf("stale writes refused: %d", w.store.refusals())
		})
	}
}

// TestLeader_ProxyCutPastSessionTimeout cuts the leader off (its proxy
// stops forwarding) for longer than the session timeout, under both error
// policies. The server expires the session and elects the next candidate;
// by then the old leader's Lost() must have closed (the client reports
// Lost before the server can expire the session). After the cut ends the
// old candidate joins again on a new session.
func TestLeader_ProxyCutPastSessionTimeout(t *testing.T) {
	for _, kind := range leaderKinds {
		for _, policy := range []framework.ErrorPolicy{framework.StandardErrorPolicy, framework.SessionErrorPolicy} {
			name := kind.name + "/standard"
			if policy == framework.SessionErrorPolicy {
				name = kind.name + "/session"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				base := testPath(t)
				obs := newClient(t)
				t.Cleanup(func() { deleteTree(t, obs, base) })
				a, proxy := proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b.ConnectionStateErrorPolicy(policy) })
				b := startClient(t, builder(t, zktest.Shared(t).ConnectString()).ConnectionStateErrorPolicy(policy))
				w := &termWorker{log: &electionLog{strict: true}, store: newFencedStore(t, obs, base+"/store"), every: 2 * time.Millisecond}
				path := base + "/election"
				ca := kind.start(t, a, path, "a", w)
				first := waitTerms(t, w.log, 1, 10*time.Second, "a leads")
				kind.start(t, b, path, "b", w)
				eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path)) == 2 }, "b queued")
				oldSession := a.SessionID()

				proxy.Pause()
				second := waitTerms(t, w.log, 2, 4*testSessionTimeout, "b is elected once the server expires a's session")
				if second.who != "b" {
					t.Errorf("after the cut %s was elected, want b", second.who)
				}
				if !isClosed(first.lost) {
					t.Error("b was elected while a's Lost() was open")
				}
				proxy.Resume()
				eventually(t, 4*testSessionTimeout, func() bool {
					return a.SessionID() != oldSession && len(children(t, obs, path)) == 2 && ca.node() != ""
				}, "a joins again on a new session")
				w.check(t)
				w.store.verify(t)
			})
		}
	}
}

// TestLeader_EnsembleLeaderKills runs five candidates of each recipe on
// three clients of a 3-node ensemble, and kills the ensemble's leader (and
// now and then a follower) again and again, seeded (LEADER_KILL_SEED to
// repeat a run), for about 25 s. Each recipe keeps at most one trusted
// leader at a time (each election after the old leader's Lost() closed),
// its fenced writes never interleave, and after the last restart each
// recipe has a leader again.
func TestLeader_EnsembleLeaderKills(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("LEADER_KILL_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (LEADER_KILL_SEED=%d repeats this run)", seed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	cluster := zktest.StartEnsemble(t)
	connect := cluster.ConnectString()
	obs := startClient(t, builder(t, connect))
	clients := []*framework.Client{startClient(t, builder(t, connect)), startClient(t, builder(t, connect)), startClient(t, builder(t, connect))}
	ctx := t.Context()

	type run struct {
		kind  leaderKind
		w     *termWorker
		cands []*candidate
		path  string
	}
	var runs []*run
	for _, kind := range leaderKinds {
		base := "/leader-kills/" + kind.name
		r := &run{kind: kind, path: base + "/election",
			w: &termWorker{log: &electionLog{strict: true}, store: newFencedStore(t, obs, base+"/store"), every: 5 * time.Millisecond}}
		for i := range 5 {
			r.cands = append(r.cands, kind.start(t, clients[i%3], r.path, fmt.Sprintf("%s-%d", kind.name, i), r.w))
		}
		runs = append(runs, r)
	}
	for _, r := range runs {
		waitTerms(t, r.w.log, 1, 20*time.Second, r.kind.name+": a first leader")
	}

	deadline := time.Now().Add(25 * time.Second)
	kills := 0
	for time.Now().Before(deadline) {
		victim, err := cluster.Leader()
		if err != nil || rng.IntN(4) == 0 {
			servers := cluster.Servers()
			victim = servers[rng.IntN(len(servers))]
		}
		if err := victim.Kill(); err != nil {
			t.Fatalf("kill %v: %v", victim, err)
		}
		kills++
		time.Sleep(time.Duration(300+rng.IntN(1500)) * time.Millisecond)
		if err := victim.Start(); err != nil {
			t.Fatalf("restart %v: %v", victim, err)
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err = cluster.WaitLeader(wctx)
		cancel()
		if err != nil {
			t.Fatalf("no ensemble leader after restarting %v: %v", victim, err)
		}
		time.Sleep(time.Duration(500+rng.IntN(1500)) * time.Millisecond)
	}
	for _, r := range runs {
		eventually(t, 30*time.Second, func() bool { return leaderOf(r.cands) != nil }, r.kind.name+": a leader after the last restart")
	}
	for _, r := range runs {
		for _, c := range r.cands {
			c.close(ctx)
		}
		r.w.check(t)
		h := r.w.store.verify(t)
		t.Logf("%s: %d kills, %d terms, %d writes accepted, %d stale writes refused", r.kind.name, kills, r.w.log.count(), len(h), r.w.store.refusals())
		eventually(t, 20*time.Second, func() bool { return len(children(t, obs, r.path)) == 0 }, r.kind.name+": every node is gone after Close")
	}
}
