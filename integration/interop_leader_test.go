package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/recipes/leaderlatch"
	"github.com/go-curator/curator/recipes/leaderselector"
	"github.com/go-curator/curator/zktest"
)

// startJavaLeader starts a Curator leader helper on the shared server.
func startJavaLeader(t testing.TB) *interop.Helper {
	t.Helper()
	return interop.StartLeader(t, zktest.Shared(t).ConnectString())
}

// javaEvent waits until the helper has reported event.
func javaEvent(t testing.TB, j *interop.Helper, event string) {
	t.Helper()
	eventually(t, 15*time.Second, func() bool {
		return slices.ContainsFunc(j.Events(), func(e string) bool { return strings.HasPrefix(e, event+" ") })
	}, fmt.Sprintf("%s reports %q", j, event))
}

// participantWords renders participants as Curator's helper does:
// <id>=<isLeader>, in line order.
func participantWords[P leaderlatch.Participant | leaderselector.Participant](ps []P) string {
	var words []string
	for _, p := range ps {
		switch p := any(p).(type) {
		case leaderlatch.Participant:
			words = append(words, fmt.Sprintf("%s=%v", p.ID, p.IsLeader))
		case leaderselector.Participant:
			words = append(words, fmt.Sprintf("%s=%v", p.ID, p.IsLeader))
		}
	}
	return strings.Join(words, " ")
}

// TestInterop_LeaderLatchAcrossLanguages queues Java, Go, Java, Go
// candidates on one LeaderLatch path. Exactly one of the four leads at
// each step, both libraries list the same participants with each other's
// IDs in line order, and the leadership passes down the line in that
// order as each leader closes.
func TestInterop_LeaderLatchAcrossLanguages(t *testing.T) {
	path := testPath(t)
	obs := newClient(t)
	t.Cleanup(func() { deleteTree(t, obs, path) })
	ja, jc := startJavaLeader(t), startJavaLeader(t)
	ctx := javaCtx(t, 60*time.Second)
	queued := func(n int) {
		t.Helper()
		eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path)) == n }, fmt.Sprintf("%d candidates queued", n))
	}

	if _, err := ja.Call(ctx, "latch.start", "a", path, "java-a"); err != nil {
		t.Fatal(err)
	}
	queued(1)
	gb := startLatch(t, newClient(t), path, leaderlatch.WithID("go-b"))
	queued(2)
	if _, err := jc.Call(ctx, "latch.start", "c", path, "java-c"); err != nil {
		t.Fatal(err)
	}
	queued(3)
	gd := startLatch(t, newClient(t), path, leaderlatch.WithID("go-d"))
	queued(4)

	leaders := func() []string {
		t.Helper()
		var who []string
		if ok, err := ja.Bool(ctx, "latch.has", "a"); err == nil && ok {
			who = append(who, "java-a")
		}
		if gb.HasLeadership() {
			who = append(who, "go-b")
		}
		if ok, err := jc.Bool(ctx, "latch.has", "c"); err == nil && ok {
			who = append(who, "java-c")
		}
		if gd.HasLeadership() {
			who = append(who, "go-d")
		}
		return who
	}
	if ok, err := ja.Bool(ctx, "latch.await", "a", "10000"); !ok || err != nil {
		t.Fatalf("java-a await = %v, %v", ok, err)
	}
	if got := leaders(); !slices.Equal(got, []string{"java-a"}) {
		t.Errorf("leaders = %v, want java-a only", got)
	}
	want := "java-a=true go-b=false java-c=false go-d=false"
	ps, err := gb.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := participantWords(ps); got != want {
		t.Errorf("Go sees %q, want %q", got, want)
	}
	if got, err := jc.Call(ctx, "latch.participants", "c"); err != nil || got != want {
		t.Errorf("Java sees %q, %v; want %q", got, err, want)
	}

	// java-a -> go-b -> java-c -> go-d
	if _, err := ja.Call(ctx, "latch.close", "a"); err != nil {
		t.Fatal(err)
	}
	awaitLatch(t, gb, 10*time.Second)
	if got := leaders(); !slices.Equal(got, []string{"go-b"}) {
		t.Errorf("after java-a closed, leaders = %v, want go-b only", got)
	}
	if got, err := jc.Call(ctx, "latch.leader", "c"); err != nil || got != "go-b=true" {
		t.Errorf("Java's leader = %q, %v; want go-b", got, err)
	}
	if err := gb.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := jc.Bool(ctx, "latch.await", "c", "10000"); !ok || err != nil {
		t.Fatalf("java-c await = %v, %v", ok, err)
	}
	if got := leaders(); !slices.Equal(got, []string{"java-c"}) {
		t.Errorf("after go-b closed, leaders = %v, want java-c only", got)
	}
	if p, err := gd.Leader(ctx); err != nil || p.ID != "java-c" {
		t.Errorf("Go's leader = %+v, %v; want java-c", p, err)
	}
	if _, err := jc.Call(ctx, "latch.close", "c"); err != nil {
		t.Fatal(err)
	}
	awaitLatch(t, gd, 10*time.Second)
	if got := leaders(); !slices.Equal(got, []string{"go-d"}) {
		t.Errorf("after java-c closed, leaders = %v, want go-d only", got)
	}
}

// TestInterop_LeaderSelectorAcrossLanguages queues Java, Go, Java, Go
// selectors on one path (an InterProcessMutex underneath). Each library
// sees the other's participant IDs in line order, the leadership passes
// down the line as each leader's work returns, and a Go observer reports
// the four leaders in that order.
func TestInterop_LeaderSelectorAcrossLanguages(t *testing.T) {
	path := testPath(t)
	obs := newClient(t)
	t.Cleanup(func() { deleteTree(t, obs, path) })
	ja, jc := startJavaLeader(t), startJavaLeader(t)
	ctx := javaCtx(t, 60*time.Second)
	queued := func(n int) {
		t.Helper()
		eventually(t, 10*time.Second, func() bool { return len(children(t, obs, path)) == n }, fmt.Sprintf("%d candidates queued", n))
	}
	octx, stop := context.WithCancel(ctx)
	observed := newElection(t, obs, path).Observe(octx)
	var (
		orderMu sync.Mutex
		order   []string
	)
	collected := make(chan struct{})
	go func() { // a receiver that keeps up sees every leader
		defer close(collected)
		for info := range observed {
			orderMu.Lock()
			order = append(order, info.ID)
			orderMu.Unlock()
		}
	}()

	type goSel struct {
		s       *leaderselector.Selector
		leading chan struct{}
		done    chan struct{}
	}
	goSelector := func(id string) *goSel {
		g := &goSel{leading: make(chan struct{}, 1), done: make(chan struct{})}
		g.s = newSelector(t, newClient(t), path, func(ctx context.Context, _ *leaderselector.Leadership) error {
			g.leading <- struct{}{}
			select {
			case <-g.done:
			case <-ctx.Done():
			}
			return nil
		}, leaderselector.WithID(id))
		startSelector(t, g.s)
		return g
	}

	if _, err := ja.Call(ctx, "selector.start", "a", path, "java-a"); err != nil {
		t.Fatal(err)
	}
	javaEvent(t, ja, "selector a leader")
	gb := goSelector("go-b")
	queued(2)
	if _, err := jc.Call(ctx, "selector.start", "c", path, "java-c"); err != nil {
		t.Fatal(err)
	}
	queued(3)
	gd := goSelector("go-d")
	queued(4)

	want := "java-a=true go-b=false java-c=false go-d=false"
	ps, err := gd.s.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := participantWords(ps); got != want {
		t.Errorf("Go sees %q, want %q", got, want)
	}
	if got, err := jc.Call(ctx, "selector.participants", "c"); err != nil || got != want {
		t.Errorf("Java sees %q, %v; want %q", got, err, want)
	}

	// java-a -> go-b -> java-c -> go-d
	if ok, err := ja.Bool(ctx, "selector.release", "a"); !ok || err != nil {
		t.Fatalf("release java-a = %v, %v", ok, err)
	}
	recv(t, gb.leading, 10*time.Second, "go-b leads after java-a")
	if ok, err := jc.Bool(ctx, "selector.has", "c"); ok || err != nil {
		t.Errorf("java-c reports leading while go-b leads (%v)", err)
	}
	if got, err := jc.Call(ctx, "selector.leader", "c"); err != nil || got != "go-b=true" {
		t.Errorf("Java's leader = %q, %v; want go-b", got, err)
	}
	close(gb.done)
	javaEvent(t, jc, "selector c leader")
	if gd.s.HasLeadership() {
		t.Error("go-d leads while java-c does")
	}
	if ok, err := jc.Bool(ctx, "selector.release", "c"); !ok || err != nil {
		t.Fatalf("release java-c = %v, %v", ok, err)
	}
	recv(t, gd.leading, 10*time.Second, "go-d leads after java-c")
	eventually(t, 10*time.Second, func() bool {
		orderMu.Lock()
		defer orderMu.Unlock()
		return len(order) >= 4
	}, "the observer reports four leaders")
	stop()
	<-collected
	if want := []string{"java-a", "go-b", "java-c", "go-d"}; !slices.Equal(order, want) {
		t.Errorf("observed leaders %v, want %v", order, want)
	}
	close(gd.done)
	if err := gd.s.Close(ctx); err != nil {
		t.Error(err)
	}
}
