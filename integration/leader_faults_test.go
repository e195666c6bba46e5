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

// The session-expiry and proxy-cut tests run five candidates on three
// clients and fault one client. Its candidates share its session, so the
// fault takes them all: it holds k0 (the first leader) and k1 (next in
// line), the other two clients hold k2 to k4.
var faultLayout = []int{0, 0, 1, 2, 1} // k<i> runs on clients[faultLayout[i]]

// faultedElection is the five candidates, before and after the fault to
// clients[0].
type faultedElection struct {
	obs     *framework.Client
	clients []*framework.Client
	path    string
	w       *termWorker
	cands   []*candidate // k0 to k4
	first   leaderTerm   // k0's term, before the fault
	before  []electionNode
}

// startFaultedElection starts k0 to k4 in queue order and waits until k0
// leads. It checks that the queue is k0 to k4, each on its client's
// session.
func startFaultedElection(t *testing.T, kind leaderKind, obs *framework.Client, clients []*framework.Client, w *termWorker, path string) *faultedElection {
	t.Helper()
	e := &faultedElection{obs: obs, clients: clients, path: path, w: w}
	for i, ci := range faultLayout {
		id := fmt.Sprintf("k%d", i)
		e.cands = append(e.cands, kind.start(t, clients[ci], path, id, w))
		eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path)) == i+1 }, id+" queued")
		if i == 0 {
			e.first = waitTerms(t, w.log, 1, 10*time.Second, "k0 leads")
		}
	}
	e.before = electionNodes(t, obs, path)
	if len(e.before) != len(faultLayout) {
		t.Fatalf("queue before the fault: %v, want k0 to k4", queueIDs(e.before))
	}
	for i, n := range e.before {
		want, sess := fmt.Sprintf("k%d", i), clients[faultLayout[i]].SessionID()
		if n.id != want || n.owner != sess {
			t.Fatalf("queue position %d before the fault is %s on session %#x, want %s on %#x", i, n.id, n.owner, want, sess)
		}
	}
	if e.first.who != "k0" || e.first.node != e.before[0].path {
		t.Fatalf("the first term is %s's on %s, want k0's on %s", e.first.who, e.first.node, e.before[0].path)
	}
	return e
}

// faultedNodes returns the nodes of the faulted client's session before
// the fault: k0's and k1's.
func (e *faultedElection) faultedNodes() []string {
	var out []string
	for i, n := range e.before {
		if faultLayout[i] == 0 {
			out = append(out, n.path)
		}
	}
	return out
}

func (e *faultedElection) candidate(id string) *candidate {
	for _, c := range e.cands {
		if c.id == id {
			return c
		}
	}
	return nil
}

// checkMoved checks the election once the fault to clients[0] (whose
// session was oldSession) has elected second, and the faulted client is
// back on a new session. Every candidate on the faulted client loses what
// it had: the old leader's Lost() closes, no term begins on a node of the
// old session, and both candidates join again at the back of the queue
// on the new session, while the other candidates keep their nodes. The
// new leader is a candidate of another client (the first in line, k2), or
// one that joined again; it is the only candidate leading. checkMoved
// returns the queue, k2 first.
func (e *faultedElection) checkMoved(t *testing.T, second leaderTerm, oldSession int64, d time.Duration) []electionNode {
	t.Helper()
	old := map[string]bool{}
	for _, n := range e.faultedNodes() {
		old[n] = true
	}
	switch {
	case old[second.node]:
		t.Errorf("after the fault %s was elected on %s, a node of the faulted session", second.who, second.node)
	case second.who != "k2":
		t.Errorf("after the fault %s was elected, want k2 (the first in line on another client)", second.who)
	}
	if second.token <= e.first.token {
		t.Errorf("%s was elected with token %d, not above k0's %d", second.who, second.token, e.first.token)
	}
	eventually(t, d, func() bool { return isClosed(e.first.lost) }, "k0's Lost() closes")

	var q []electionNode
	var newSession int64
	back := func() bool {
		newSession = e.clients[0].SessionID()
		if newSession == 0 || newSession == oldSession {
			return false
		}
		q = electionNodes(t, e.obs, e.path)
		if len(q) != len(faultLayout) {
			return false
		}
		for _, n := range q {
			if n.owner == oldSession {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(d)
	for !back() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: the faulted client's candidates join again on a new session (session %#x, was %#x; queue %v)",
				d, newSession, oldSession, queueIDs(q))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i, n := range q[:3] {
		if was := e.before[2+i]; n.id != was.id || n.path != was.path {
			t.Errorf("queue position %d after the fault is %s on %s, want %s on its node from before, %s", i, n.id, n.path, was.id, was.path)
		}
	}
	if ids := []string{q[3].id, q[4].id}; !(ids[0] == "k0" && ids[1] == "k1" || ids[0] == "k1" && ids[1] == "k0") {
		t.Errorf("the back of the queue after the fault is %v, want k0 and k1", ids)
	}
	for _, n := range q[3:] {
		if n.owner != newSession {
			t.Errorf("%s joined again on session %#x, not its client's new session %#x", n.id, n.owner, newSession)
		}
	}
	terms := e.w.log.all()
	for _, tm := range terms[1:] {
		if old[tm.node] {
			t.Errorf("%s was elected (token %d) on %s, a node of the faulted session", tm.who, tm.token, tm.node)
		}
	}
	if len(terms) != 2 {
		t.Errorf("%d terms by the time the faulted client is back, want 2 (k0's, %s's): %v", len(terms), second.who, termIDs(terms))
	}
	if ls := leadersOf(e.cands); len(ls) != 1 || ls[0].id != second.who {
		t.Errorf("once the faulted client is back the candidates leading are %v, want only %s", candIDs(ls), second.who)
	}
	return q
}

// handDown closes the leaders in turn, from term (q[0]'s): leadership
// passes down q in queue order, each term with a higher token, each time
// with exactly one candidate leading, and the candidates that joined again
// lead on their new nodes.
func (e *faultedElection) handDown(t *testing.T, q []electionNode, term leaderTerm) {
	t.Helper()
	n0 := e.w.log.count()
	for i, n := range q {
		if i > 0 {
			next := waitTerms(t, e.w.log, n0+i, 15*time.Second, n.id+" is elected")
			if next.who != n.id || next.node != n.path {
				t.Errorf("after %s closed %s was elected on %s, want %s on %s (queue order)", term.who, next.who, next.node, n.id, n.path)
			}
			if next.token <= term.token {
				t.Errorf("%s was elected with token %d, not above %s's %d", next.who, next.token, term.who, term.token)
			}
			term = next
		}
		if ls := leadersOf(e.cands); len(ls) != 1 || ls[0].id != term.who {
			t.Fatalf("during %s's term the candidates leading are %v, want only %s", term.who, candIDs(ls), term.who)
		}
		time.Sleep(20 * time.Millisecond) // let it write
		if err := e.candidate(term.who).close(t.Context()); err != nil {
			t.Fatalf("close %s: %v", term.who, err)
		}
	}
}

// finish closes every candidate and checks the workers, the log, the
// fenced store's history and that no node is left.
func (e *faultedElection) finish(t *testing.T) {
	t.Helper()
	for _, c := range e.cands {
		c.close(t.Context())
	}
	e.w.check(t)
	h := e.w.store.verify(t)
	if len(h) == 0 {
		t.Error("no write was accepted")
	}
	eventually(t, 10*time.Second, func() bool { return len(children(t, e.obs, e.path)) == 0 }, "every node is gone after Close")
	t.Logf("%d terms, %d writes accepted, %d stale writes refused", e.w.log.count(), len(h), e.w.store.refusals())
}

func queueIDs(q []electionNode) []string {
	var out []string
	for _, n := range q {
		out = append(out, fmt.Sprintf("%s@%#x", n.id, n.owner))
	}
	return out
}

func termIDs(ts []leaderTerm) []string {
	var out []string
	for _, tm := range ts {
		out = append(out, fmt.Sprintf("%s:%d", tm.who, tm.token))
	}
	return out
}

func candIDs(cs []*candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.id)
	}
	return out
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
