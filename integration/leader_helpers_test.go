package integration

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/leaderlatch"
	"github.com/go-curator/curator/recipes/leaderselector"
	"github.com/go-zookeeper/zk"
)

// The leader tests share three pieces:
//   - a fenced store: the resource leaders write to, which keeps the
//     highest fencing token it accepted and refuses lower ones, and keeps
//     the history of accepted writes in ZooKeeper itself, written in the
//     same transaction as each write, so the history is exact even when a
//     write's reply is lost;
//   - an election log: every term as its leader saw it begin, checked as
//     it is logged;
//   - candidates of either recipe, driven the same way: each one writes to
//     the store while its term lasts.

// fencedStore is a node holding the highest accepted token, and a history
// of accepted writes under <path>/history.
type fencedStore struct {
	c       *framework.Client
	path    string
	mu      sync.Mutex
	refused int
}

func newFencedStore(t testing.TB, c *framework.Client, path string) *fencedStore {
	t.Helper()
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(t.Context(), path+"/history", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetData().ForPath(t.Context(), path, []byte("0")); err != nil {
		t.Fatal(err)
	}
	return &fencedStore{c: c, path: path}
}

// write is one fenced write by who with token: refused (false, nil) if the
// store has seen a higher token. An error may mean the write's outcome is
// unknown: the history tells.
func (s *fencedStore) write(ctx context.Context, who string, token int64) (bool, error) {
	for {
		data, stat, err := s.c.GetData().ForPath(ctx, s.path)
		if err != nil {
			return false, err
		}
		top, err := strconv.ParseInt(string(data), 10, 64)
		if err != nil {
			return false, fmt.Errorf("store holds %q: %w", data, err)
		}
		if token < top {
			s.mu.Lock()
			s.refused++
			s.mu.Unlock()
			return false, nil
		}
		_, err = s.c.Transaction().
			SetData(s.path, []byte(strconv.FormatInt(token, 10)), stat.Version).
			Create(s.path+"/history/w-", []byte(fmt.Sprintf("%d %s", token, who)), framework.PersistentSequential).
			Commit(ctx)
		if errors.Is(err, zk.ErrBadVersion) && !errors.Is(err, framework.ErrIndeterminate) {
			continue // another write came first: compare again
		}
		return err == nil, err
	}
}

// storeWrite is one accepted write, from the history.
type storeWrite struct {
	token int64
	who   string
}

// history reads the accepted writes in the order they were accepted.
func (s *fencedStore) history(t testing.TB) []storeWrite {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kids, err := s.c.GetChildren().ForPath(ctx, s.path+"/history")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(kids) // w-<seq10>
	out := make([]storeWrite, 0, len(kids))
	for _, k := range kids {
		data, _, err := s.c.GetData().ForPath(ctx, s.path+"/history/"+k)
		if err != nil {
			t.Fatal(err)
		}
		tok, who, _ := strings.Cut(string(data), " ")
		n, _ := strconv.ParseInt(tok, 10, 64)
		out = append(out, storeWrite{n, who})
	}
	return out
}

// verify checks the history: no accepted write has a token lower than an
// earlier one, each token belongs to one leader, and no two leaders'
// writes interleave (each leader's writes under one token are one run). It
// returns the history.
func (s *fencedStore) verify(t testing.TB) []storeWrite {
	t.Helper()
	h := s.history(t)
	owner := map[int64]string{}
	done := map[int64]bool{} // tokens whose run has ended
	for i, w := range h {
		if o, ok := owner[w.token]; ok && o != w.who {
			t.Errorf("token %d used by %s and by %s", w.token, o, w.who)
		}
		owner[w.token] = w.who
		if i == 0 {
			continue
		}
		prev := h[i-1]
		switch {
		case w.token < prev.token:
			t.Errorf("write %d by %s with token %d accepted after token %d", i, w.who, w.token, prev.token)
		case w.token != prev.token:
			done[prev.token] = true
		}
		if done[w.token] {
			t.Errorf("write %d by %s with token %d interleaves with another leader's writes", i, w.who, w.token)
		}
	}
	return h
}

func (s *fencedStore) refusals() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// leaderTerm is one leadership as its leader saw it begin.
type leaderTerm struct {
	who   string
	node  string
	token int64
	lost  <-chan struct{}
}

// electionLog records the terms of one election. With strict set, each
// new term checks that every term with a lower token (another node's) has
// already ended: the old leader stopped trusting its leadership before the
// new one was elected, so there is at most one leader at any time. Terms
// on excused nodes are spared that check (see excuse).
type electionLog struct {
	strict  bool
	mu      sync.Mutex
	terms   []leaderTerm
	errs    []string
	excused map[string]bool // nodes whose terms a new leader may overlap
}

// excuse spares the terms on nodes from the strict check: the test
// expires their session on the server, which deletes the nodes and elects
// the next candidate before their client can know. The fenced store is
// what stops such a leader.
func (l *electionLog) excuse(nodes ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.excused == nil {
		l.excused = map[string]bool{}
	}
	for _, n := range nodes {
		l.excused[n] = true
	}
}

func (l *electionLog) elected(term leaderTerm) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, old := range l.terms {
		switch {
		case old.node == term.node:
			// The same node leading again (after a Suspended on the
			// same session) may keep its token.
			if term.token < old.token {
				l.errs = append(l.errs, fmt.Sprintf("%s leads again with token %d, lower than its %d", term.who, term.token, old.token))
			}
		case old.token == term.token:
			l.errs = append(l.errs, fmt.Sprintf("%s and %s were elected with the same token %d", old.who, term.who, term.token))
		case old.token < term.token && l.strict && !isClosed(old.lost) && !l.excused[old.node]:
			l.errs = append(l.errs, fmt.Sprintf("%s was elected (token %d) while %s's leadership (token %d) was still trusted", term.who, term.token, old.who, old.token))
		}
	}
	l.terms = append(l.terms, term)
}

func (l *electionLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.terms)
}

func (l *electionLog) last() leaderTerm {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.terms) == 0 {
		return leaderTerm{}
	}
	return l.terms[len(l.terms)-1]
}

// all returns the terms logged so far, in the order they began.
func (l *electionLog) all() []leaderTerm {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]leaderTerm(nil), l.terms...)
}

func (l *electionLog) check(t testing.TB) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.errs {
		t.Error(e)
	}
}

// electionNode is one candidate's node, as another client reads it.
type electionNode struct {
	path  string // the node's full path
	id    string // the candidate's ID, which is the node's data
	owner int64  // the session that made it
}

// electionNodes reads the nodes of the election at path in queue order
// (by sequence number, the same for either recipe's names), leaving out a
// node deleted while it reads.
func electionNodes(t testing.TB, obs *framework.Client, path string) []electionNode {
	t.Helper()
	kids := children(t, obs, path)
	seq := func(k string) string { return k[max(0, len(k)-10):] }
	sort.Slice(kids, func(i, j int) bool { return seq(kids[i]) < seq(kids[j]) })
	var out []electionNode
	for _, k := range kids {
		p := path + "/" + k
		data, st, err := obs.GetData().ForPath(t.Context(), p)
		if err != nil {
			continue
		}
		out = append(out, electionNode{path: p, id: string(data), owner: st.EphemeralOwner})
	}
	return out
}

// leaderKind makes candidates of one recipe.
type leaderKind struct {
	name  string
	start func(t testing.TB, c *framework.Client, path, id string, w *termWorker) *candidate
}

var leaderKinds = []leaderKind{
	{"latch", startLatchCandidate},
	{"selector", startSelectorCandidate},
}

// candidate is one running candidate of either recipe.
type candidate struct {
	id     string
	client *framework.Client
	close  func(ctx context.Context) error
	leads  func() bool
	node   func() string
	done   chan struct{} // its work goroutine has ended
}

// termWorker is what a candidate does with each term: log it, then write
// to the store every few milliseconds while the term lasts.
type termWorker struct {
	log   *electionLog
	store *fencedStore
	every time.Duration
	mu    sync.Mutex
	errs  []error
}

func (w *termWorker) run(ctx context.Context, term leaderTerm) {
	w.log.elected(term)
	if w.store == nil {
		select {
		case <-term.lost:
		case <-ctx.Done():
		}
		return
	}
	tick := time.NewTicker(w.every)
	defer tick.Stop()
	for {
		select {
		case <-term.lost:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if isClosed(term.lost) {
			return
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := w.store.write(wctx, term.who, term.token)
		cancel()
		if err != nil && !isClosed(term.lost) && ctx.Err() == nil && !framework.IsRetryable(err) && !errors.Is(err, framework.ErrIndeterminate) {
			w.mu.Lock()
			w.errs = append(w.errs, fmt.Errorf("%s: write: %w", term.who, err))
			w.mu.Unlock()
		}
	}
}

func (w *termWorker) check(t testing.TB) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, err := range w.errs {
		t.Error(err)
	}
	w.log.check(t)
}

// startLatchCandidate starts a latch whose goroutine awaits each term and
// works it. The cleanup closes the latch and waits for the goroutine.
func startLatchCandidate(t testing.TB, c *framework.Client, path, id string, w *termWorker) *candidate {
	t.Helper()
	l := newLatch(t, c, path, leaderlatch.WithID(id))
	if err := l.Start(t.Context()); err != nil {
		t.Fatalf("%s: Start: %v", id, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			ld, err := l.Await(ctx)
			if err != nil {
				return
			}
			tok, _ := ld.FencingToken()
			w.run(ctx, leaderTerm{who: id, node: ld.Node(), token: tok, lost: ld.Lost()})
			select { // wait for the term to end before awaiting the next
			case <-ld.Lost():
			case <-ctx.Done():
				return
			}
		}
	}()
	cd := &candidate{
		id: id, client: c, done: done, leads: l.HasLeadership, node: l.Node,
		close: func(cctx context.Context) error {
			err := l.Close(cctx)
			cancel()
			<-done
			return err
		},
	}
	t.Cleanup(func() { cd.close(context.Background()) })
	return cd
}

// startSelectorCandidate starts a selector with AutoRequeue whose function
// works each term.
func startSelectorCandidate(t testing.TB, c *framework.Client, path, id string, w *termWorker) *candidate {
	t.Helper()
	var node sync.Map
	s, err := leaderselector.New(c, path, func(ctx context.Context, ld *leaderselector.Leadership) error {
		tok, err := ld.FencingToken()
		if err != nil {
			return err
		}
		node.Store("n", ld.Node())
		w.run(ctx, leaderTerm{who: id, node: ld.Node(), token: tok, lost: ld.Lost()})
		return nil
	}, leaderselector.WithID(id), leaderselector.WithAutoRequeue())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatalf("%s: Start: %v", id, err)
	}
	done := make(chan struct{})
	var once sync.Once
	var closeErr error
	cd := &candidate{
		id: id, client: c, done: done, leads: s.HasLeadership,
		node: func() string {
			n, _ := node.Load("n")
			s, _ := n.(string)
			return s
		},
		close: func(cctx context.Context) error {
			once.Do(func() {
				closeErr = s.Close(cctx)
				close(done)
			})
			return closeErr
		},
	}
	t.Cleanup(func() { cd.close(context.Background()) })
	return cd
}

// leaderGoroutines returns the stacks of running goroutines that belong to
// the leader recipes.
func leaderGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "recipes/leaderlatch.") || strings.Contains(g, "recipes/leaderselector.") {
			out = append(out, g)
		}
	}
	return out
}

// noLeaderGoroutines fails the test if any goroutine of the leader recipes
// is still running after a short grace.
func noLeaderGoroutines(t testing.TB) {
	t.Helper()
	var left []string
	for range 100 {
		if left = leaderGoroutines(); len(left) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("%d leader goroutines left after Close:\n%s", len(left), strings.Join(left, "\n\n"))
}
