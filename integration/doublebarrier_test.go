package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/doublebarrier"
	"github.com/go-curator/curator/zktest"
)

func newDoubleBarrier(t testing.TB, c *framework.Client, path string, qty int) *doublebarrier.DoubleBarrier {
	t.Helper()
	b, err := doublebarrier.New(c, path, qty)
	if err != nil {
		t.Fatalf("doublebarrier.New: %v", err)
	}
	return b
}

// dbMembers returns the member nodes under path: every child but ready.
func dbMembers(t testing.TB, c *framework.Client, path string) []string {
	t.Helper()
	var m []string
	for _, k := range children(t, c, path) {
		if k != "ready" {
			m = append(m, k)
		}
	}
	return m
}

// dbAssertClean fails the test if path holds any member node or ready.
func dbAssertClean(t testing.TB, c *framework.Client, path string) {
	t.Helper()
	if kids := children(t, c, path); len(kids) != 0 {
		t.Fatalf("left under %s: %v; want no member and no ready", path, kids)
	}
}

// dbWatchesOf returns the paths the server says session id watches, from
// the "wchc" four-letter word: a session line, then one tab-indented path
// line per watch.
func dbWatchesOf(t testing.TB, cl *zktest.Cluster, id int64) []string {
	t.Helper()
	var paths []string
	in := false
	for _, line := range strings.Split(barrierFourLetter(t, cl, "wchc"), "\n") {
		switch {
		case strings.HasPrefix(line, "0x"):
			in = strings.TrimSpace(line) == fmt.Sprintf("0x%x", id)
		case in && strings.TrimSpace(line) != "":
			paths = append(paths, strings.TrimSpace(line))
		}
	}
	return paths
}

// dbMaxInt32 raises m to v if v is larger.
func dbMaxInt32(m *atomic.Int32, v int32) {
	for {
		old := m.Load()
		if v <= old || m.CompareAndSwap(old, v) {
			return
		}
	}
}

// dbRound counts the members of one round of a double barrier that opens
// at open members and holds all members in the round.
type dbRound struct {
	open, all                                    int32
	arrived, inside, maxInside, entered, leaving atomic.Int32
}

// member runs one member through the round: it enters, checks that at
// least open members had arrived, waits inside until all are inside (so
// the round really has all of them inside at once), leaves, and checks
// that every member had started to leave.
func (r *dbRound) member(ctx context.Context, b *doublebarrier.DoubleBarrier) error {
	r.arrived.Add(1)
	if err := b.Enter(ctx); err != nil {
		return fmt.Errorf("Enter: %w", err)
	}
	if got := r.arrived.Load(); got < r.open {
		return fmt.Errorf("entered with %d members arrived; the barrier opens at %d", got, r.open)
	}
	dbMaxInt32(&r.maxInside, r.inside.Add(1))
	r.entered.Add(1)
	for r.entered.Load() < r.all {
		select {
		case <-ctx.Done():
			b.Leave(context.WithoutCancel(ctx))
			return fmt.Errorf("waiting for the others inside: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	r.leaving.Add(1)
	if err := b.Leave(ctx); err != nil {
		return fmt.Errorf("Leave: %w", err)
	}
	if got := r.leaving.Load(); got < r.all {
		return fmt.Errorf("left with %d of %d members leaving", got, r.all)
	}
	r.inside.Add(-1)
	return nil
}

// check fails the test unless all members were inside at once and none is
// inside now.
func (r *dbRound) check(t testing.TB) {
	t.Helper()
	if max, now := r.maxInside.Load(), r.inside.Load(); max != r.all || now != 0 {
		t.Fatalf("inside at once: max %d, final %d; want %d and 0", max, now, r.all)
	}
}

func TestDoubleBarrier_FiveEnterTogetherThenLeave(t *testing.T) {
	const n = 5
	cl := zktest.Shared(t)
	path := testPath(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := &dbRound{open: n, all: n}
	results := make([]chan error, n)
	for i := range n {
		results[i] = make(chan error, 1)
		b := newDoubleBarrier(t, newClient(t), path, n)
		go func() { results[i] <- r.member(ctx, b) }()
		if i < n-1 {
			// Every early member waits on ready before the next one comes.
			barrierWaitRearmed(t, cl, path+"/ready", i+1, results[:i+1])
		}
	}
	for i, ch := range results {
		if err := <-ch; err != nil {
			t.Errorf("member %d: %v", i, err)
		}
	}
	if t.Failed() {
		return
	}
	r.check(t)
	dbAssertClean(t, newClient(t), path)
}

func TestDoubleBarrier_MemberQtyIsThresholdNotCap(t *testing.T) {
	const n, qty = 6, 5
	path := testPath(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// Members wait inside until all six are in, so the sixth finds the
	// barrier open however late it comes, and all six leave together.
	r := &dbRound{open: qty, all: n}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		b := newDoubleBarrier(t, newClient(t), path, qty)
		wg.Go(func() { errs[i] = r.member(ctx, b) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("member %d: %v", i, err)
		}
	}
	if t.Failed() {
		return
	}
	r.check(t)
	dbAssertClean(t, newClient(t), path)
}

func TestDoubleBarrier_WakeUpsDoNotLetOneMemberIn(t *testing.T) {
	const restarts = 3
	cl := zktest.Start(t)
	srv := cl.Servers()[0]
	path := testPath(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	var suspended, reconnected atomic.Int32
	// A session long enough to outlive each restart: the client goes
	// Suspended then Reconnected, never Lost.
	a := startClient(t, builder(t, cl.ConnectString()).SessionTimeout(15*time.Second).
		Listener(func(s framework.ConnectionState) {
			switch s {
			case framework.Suspended:
				suspended.Add(1)
			case framework.Reconnected:
				reconnected.Add(1)
			}
		}))
	ba := newDoubleBarrier(t, a, path, 2)
	entered := make(chan error, 1)
	var arrivedB atomic.Bool
	go func() {
		err := ba.Enter(ctx)
		if err == nil && !arrivedB.Load() {
			err = errors.New("entered before the second member arrived")
		}
		entered <- err
	}()
	waiting := []chan error{entered}
	barrierWaitRearmed(t, cl, path+"/ready", 1, waiting)

	for i := range int32(restarts) {
		if err := srv.Kill(); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, func() bool { return suspended.Load() > i }, "client Suspended")
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, func() bool { return reconnected.Load() > i }, "client Reconnected")
		// Woken by the suspension, the member reads again and watches
		// ready again; it must not have entered.
		barrierWaitRearmed(t, cl, path+"/ready", 1, waiting)
	}
	if got := dbMembers(t, a, path); len(got) != 1 {
		t.Fatalf("members after %d restarts: %v; want the one waiting member", restarts, got)
	}

	arrivedB.Store(true)
	bb := newDoubleBarrier(t, startClient(t, builder(t, cl.ConnectString())), path, 2)
	if err := bb.Enter(ctx); err != nil {
		t.Fatalf("second member Enter: %v", err)
	}
	if err := <-entered; err != nil {
		t.Fatalf("first member Enter: %v", err)
	}
	left := make(chan error, 1)
	go func() { left <- ba.Leave(ctx) }()
	if err := bb.Leave(ctx); err != nil {
		t.Fatalf("second member Leave: %v", err)
	}
	if err := <-left; err != nil {
		t.Fatalf("first member Leave: %v", err)
	}
	dbAssertClean(t, a, path)
}

func TestDoubleBarrier_SessionExpiryWhileEnteringMakesFreshMember(t *testing.T) {
	cl := zktest.Shared(t)
	path := testPath(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	a := newClient(t)
	ba := newDoubleBarrier(t, a, path, 2)
	entered := make(chan error, 1)
	var arrivedB atomic.Bool
	go func() {
		err := ba.Enter(ctx)
		if err == nil && !arrivedB.Load() {
			err = errors.New("entered before the second member arrived")
		}
		entered <- err
	}()
	waiting := []chan error{entered}
	barrierWaitRearmed(t, cl, path+"/ready", 1, waiting)
	old := a.SessionID()
	if err := zktest.ExpireSession(ctx, cl.ConnectString(), a.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	// The member node died with the session; the waiting member makes a
	// fresh one under its new session, and still does not enter.
	eventually(t, 20*time.Second, func() bool {
		id := a.SessionID()
		if id == old {
			return false
		}
		m := dbMembers(t, a, path)
		if len(m) != 1 {
			return false
		}
		stat, err := a.CheckExists().ForPath(ctx, path+"/"+m[0])
		return err == nil && stat != nil && stat.EphemeralOwner == id
	}, "one member node, owned by the new session")
	barrierWaitRearmed(t, cl, path+"/ready", 1, waiting)

	arrivedB.Store(true)
	bb := newDoubleBarrier(t, newClient(t), path, 2)
	if err := bb.Enter(ctx); err != nil {
		t.Fatalf("second member Enter: %v", err)
	}
	if err := <-entered; err != nil {
		t.Fatalf("first member Enter after its session expired: %v", err)
	}
	left := make(chan error, 1)
	go func() { left <- ba.Leave(ctx) }()
	if err := bb.Leave(ctx); err != nil {
		t.Fatalf("second member Leave: %v", err)
	}
	if err := <-left; err != nil {
		t.Fatalf("first member Leave: %v", err)
	}
	dbAssertClean(t, a, path)
}

func TestDoubleBarrier_FailedEnterLeavesNoNode(t *testing.T) {
	cl := zktest.Shared(t)
	path := testPath(t)
	c := newClient(t)
	a := newDoubleBarrier(t, c, path, 3)
	b := newDoubleBarrier(t, newClient(t), path, 3)

	// A timed-out Enter.
	tctx, tcancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer tcancel()
	if err := a.Enter(tctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Enter alone until the deadline = %v; want %v", err, context.DeadlineExceeded)
	}
	if got := children(t, c, path); len(got) != 0 {
		t.Fatalf("after a timed-out Enter, %s holds %v; want nothing", path, got)
	}

	// A cancelled Enter, cancelled while it waits on ready.
	cctx, ccancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- b.Enter(cctx) }()
	barrierWaitRearmed(t, cl, path+"/ready", 1, []chan error{done})
	ccancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Enter = %v; want %v", err, context.Canceled)
	}
	if got := children(t, c, path); len(got) != 0 {
		t.Fatalf("after a cancelled Enter, %s holds %v; want nothing", path, got)
	}

	// Both participants are usable again: a full round of three.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := &dbRound{open: 3, all: 3}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, m := range []*doublebarrier.DoubleBarrier{a, b, newDoubleBarrier(t, newClient(t), path, 3)} {
		wg.Go(func() { errs[i] = r.member(ctx, m) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("member %d after failed Enters: %v", i, err)
		}
	}
	r.check(t)
	dbAssertClean(t, c, path)
}

func TestDoubleBarrier_FullRoundLeavesPathClean(t *testing.T) {
	cl := zktest.Shared(t)
	path := testPath(t)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	members := []*doublebarrier.DoubleBarrier{
		newDoubleBarrier(t, c, path, 3),
		newDoubleBarrier(t, newClient(t), path, 3),
		newDoubleBarrier(t, newClient(t), path, 3),
	}
	for round := range 2 {
		r := &dbRound{open: 3, all: 3}
		var wg sync.WaitGroup
		errs := make([]error, len(members))
		for i, m := range members {
			wg.Go(func() { errs[i] = r.member(ctx, m) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, member %d: %v", round, i, err)
			}
		}
		r.check(t)
		dbAssertClean(t, c, path)
	}

	// With the path clean, a lone member of a new round waits: no ready
	// from the last round lets it in.
	lone := make(chan error, 1)
	lctx, lcancel := context.WithCancel(ctx)
	go func() { lone <- members[0].Enter(lctx) }()
	barrierWaitRearmed(t, cl, path+"/ready", 1, []chan error{lone})
	lcancel()
	if err := <-lone; !errors.Is(err, context.Canceled) {
		t.Fatalf("lone member of a new round = %v; want it to wait until cancelled", err)
	}
	dbAssertClean(t, c, path)
}

func TestDoubleBarrier_CancelledLeaveLetsOthersLeave(t *testing.T) {
	cl := zktest.Shared(t)
	path := testPath(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	clients := []*framework.Client{newClient(t), newClient(t), newClient(t)}
	members := make([]*doublebarrier.DoubleBarrier, len(clients))
	entered := make(chan error, len(clients))
	for i, c := range clients {
		members[i] = newDoubleBarrier(t, c, path, 3)
		go func() { entered <- members[i].Enter(ctx) }()
	}
	for range members {
		if err := <-entered; err != nil {
			t.Fatalf("Enter: %v", err)
		}
	}

	// Member 0 starts to leave, and must wait for the other two.
	lctx, lcancel := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() { left <- members[0].Leave(lctx) }()
	id := clients[0].SessionID()
	eventually(t, 10*time.Second, func() bool {
		for _, p := range dbWatchesOf(t, cl, id) {
			if strings.HasPrefix(p, path+"/") {
				return true
			}
		}
		return false
	}, "leaving member watching another member")
	lcancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Leave = %v; want %v", err, context.Canceled)
	}
	if got := dbMembers(t, clients[1], path); len(got) != 2 {
		t.Fatalf("members after the cancelled Leave: %v; want the other two", got)
	}

	// The other two still leave, and the last one takes ready with it.
	done := make(chan error, 2)
	for _, m := range members[1:] {
		go func() { done <- m.Leave(ctx) }()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("Leave after another member's cancelled Leave: %v", err)
		}
	}
	dbAssertClean(t, clients[1], path)
}

func TestDoubleBarrier_Misuse(t *testing.T) {
	c := newClient(t)
	path := testPath(t)
	ctx := t.Context()
	b := newDoubleBarrier(t, c, path, 1)
	if err := b.Leave(ctx); !errors.Is(err, doublebarrier.ErrNotEntered) {
		t.Fatalf("Leave before Enter = %v; want %v", err, doublebarrier.ErrNotEntered)
	}
	if err := b.Enter(ctx); err != nil {
		t.Fatalf("Enter with memberQty 1: %v", err)
	}
	if err := b.Enter(ctx); !errors.Is(err, doublebarrier.ErrAlreadyEntered) {
		t.Fatalf("second Enter = %v; want %v", err, doublebarrier.ErrAlreadyEntered)
	}
	if got := dbMembers(t, c, path); len(got) != 1 {
		t.Fatalf("members after a rejected second Enter: %v; want one", got)
	}
	if err := b.Leave(ctx); err != nil {
		t.Fatalf("Leave: %v", err)
	}
	if err := b.Leave(ctx); !errors.Is(err, doublebarrier.ErrNotEntered) {
		t.Fatalf("second Leave = %v; want %v", err, doublebarrier.ErrNotEntered)
	}
	dbAssertClean(t, c, path)
}

func TestDoubleBarrier_BadInput(t *testing.T) {
	c := newClient(t)
	if _, err := doublebarrier.New(nil, "/b", 2); !errors.Is(err, framework.ErrNilClient) ||
		!errors.Is(err, doublebarrier.ErrInvalidArgument) {
		t.Fatalf("New(nil) = %v; want %v and %v", err, doublebarrier.ErrInvalidArgument, framework.ErrNilClient)
	}
	for _, qty := range []int{0, -1} {
		if _, err := doublebarrier.New(c, "/b", qty); !errors.Is(err, doublebarrier.ErrInvalidArgument) ||
			!strings.Contains(err.Error(), "memberQty") {
			t.Errorf("New(memberQty %d) = %v; want %v naming memberQty", qty, err, doublebarrier.ErrInvalidArgument)
		}
	}
	for _, p := range []string{"", "rel", "/a/", "/a//b", "/a/./b", "/a\x01b", "/"} {
		if _, err := doublebarrier.New(c, p, 2); !errors.Is(err, framework.ErrInvalidPath) {
			t.Errorf("New(%q) = %v; want %v", p, err, framework.ErrInvalidPath)
		}
	}
	unstarted, err := builder(t, zktest.Shared(t).ConnectString()).Build()
	if err != nil {
		t.Fatal(err)
	}
	defer unstarted.Close()
	path := testPath(t)
	b := newDoubleBarrier(t, unstarted, path, 1)
	if err := b.Enter(t.Context()); !errors.Is(err, framework.ErrNotStarted) {
		t.Fatalf("Enter on an unstarted client = %v; want %v", err, framework.ErrNotStarted)
	}
	if err := b.Leave(t.Context()); !errors.Is(err, framework.ErrNotStarted) {
		t.Fatalf("Leave on an unstarted client = %v; want %v", err, framework.ErrNotStarted)
	}
	dbAssertClean(t, c, path)
}
