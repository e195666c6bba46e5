package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
)

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
