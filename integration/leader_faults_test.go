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

// leadersOf returns every candidate that reports leading.
func leadersOf(cands []*candidate) []*candidate {
	var out []*candidate
	for _, c := range cands {
		if c != nil && c.leads() {
			out = append(out, c)
		}
	}
	return out
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

// TestLeader_SessionExpiryMovesLeadership expires, on the server, the
// session of the client holding the leader k0 and k1, next in line. Both
// lose their nodes at once, k2 on another client is elected, k0's Lost()
// closes, and both join again at the back on their client's new session;
// closing the leaders in turn then hands leadership down to them. The
// server deletes k0's node before its client can know, so k2 may be
// elected while k0 still trusts its term (the log excuses that overlap
// and no other): the fenced store is what stops k0's writes.
func TestLeader_SessionExpiryMovesLeadership(t *testing.T) {
	for _, kind := range leaderKinds {
		t.Run(kind.name, func(t *testing.T) {
			base := testPath(t)
			obs := newClient(t)
			t.Cleanup(func() { deleteTree(t, obs, base) })
			clients := []*framework.Client{newClient(t), newClient(t), newClient(t)}
			w := &termWorker{log: &electionLog{strict: true}, store: newFencedStore(t, obs, base+"/store"), every: time.Millisecond}
			e := startFaultedElection(t, kind, obs, clients, w, base+"/election")
			oldSession := clients[0].SessionID()
			w.log.excuse(e.faultedNodes()...)

			if err := zktest.ExpireSession(t.Context(), zktest.Shared(t).ConnectString(), clients[0].ZooKeeper()); err != nil && !errors.Is(err, zk.ErrSessionExpired) {
				t.Fatal(err)
			}
			second := waitTerms(t, w.log, 2, 10*time.Second, "a new leader after the expiry")
			q := e.checkMoved(t, second, oldSession, 15*time.Second)
			e.handDown(t, q, second)
			e.finish(t)
		})
	}
}

// TestLeader_ProxyCutPastSessionTimeout cuts off (its proxy stops
// forwarding) the client holding the leader k0 and k1, next in line, for
// longer than the session timeout, under both error policies. The server
// expires the session and elects k2 on another client; by then k0's
// Lost() must have closed (the client reports Lost before the server can
// expire the session) and no candidate of the cut client leads. After the
// cut both join again at the back on a new session, and closing the
// leaders in turn hands leadership down to them.
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
				withPolicy := func(b *framework.Builder) *framework.Builder { return b.ConnectionStateErrorPolicy(policy) }
				cut, proxy := proxiedClient(t, withPolicy)
				connect := zktest.Shared(t).ConnectString()
				clients := []*framework.Client{cut, startClient(t, withPolicy(builder(t, connect))), startClient(t, withPolicy(builder(t, connect)))}
				w := &termWorker{log: &electionLog{strict: true}, store: newFencedStore(t, obs, base+"/store"), every: 2 * time.Millisecond}
				e := startFaultedElection(t, kind, obs, clients, w, base+"/election")
				oldSession := cut.SessionID()

				proxy.Pause()
				second := waitTerms(t, w.log, 2, 4*testSessionTimeout, "a new leader once the server expires the cut client's session")
				if !isClosed(e.first.lost) {
					t.Errorf("%s was elected while k0's Lost() was open", second.who)
				}
				for i, ci := range faultLayout {
					if c := e.cands[i]; ci == 0 && c.leads() {
						t.Errorf("%s on the cut client still leads when %s is elected", c.id, second.who)
					}
				}
				proxy.Resume()
				q := e.checkMoved(t, second, oldSession, 4*testSessionTimeout)
				e.handDown(t, q, second)
				e.finish(t)
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
