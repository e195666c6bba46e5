package integration

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/recipes/barrier"
	"github.com/go-curator/curator/recipes/doublebarrier"
)

// settle gives a waiter that should stay blocked a chance to return wrongly.
const settle = 300 * time.Millisecond

// TestInterop_BarrierJavaSetsGoWaits: Curator sets the barrier, a Go waiter
// stays blocked until Curator removes it, then returns.
func TestInterop_BarrierJavaSetsGoWaits(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j := startJava(t)
	path := base + "/barrier"
	ctx := t.Context()

	if _, err := j.Call(javaCtx(t, 10*time.Second), "barrier.set", path); err != nil {
		t.Fatalf("Curator barrier.set: %v", err)
	}
	b, err := barrier.New(c, path)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, settle)
	err = b.Wait(short)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Go Wait on Curator's barrier = %v, want a timeout", err)
	}

	done := make(chan error, 1)
	go func() { done <- b.Wait(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("Go Wait returned %v while Curator's barrier was set", err)
	case <-time.After(settle):
	}
	if _, err := j.Call(javaCtx(t, 10*time.Second), "barrier.remove", path); err != nil {
		t.Fatalf("Curator barrier.remove: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Go Wait after Curator's remove = %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Go Wait did not return after Curator removed the barrier")
	}
}

// TestInterop_BarrierGoSetsJavaWaits: Go sets the barrier, a Curator waiter
// stays blocked until Go removes it, then returns true.
func TestInterop_BarrierGoSetsJavaWaits(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j := startJava(t)
	path := base + "/barrier"
	ctx := t.Context()

	b, err := barrier.New(c, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx); err != nil {
		t.Fatalf("Go Set: %v", err)
	}
	passed, err := j.Bool(javaCtx(t, 10*time.Second), "barrier.wait", path, strconv.Itoa(int(settle.Milliseconds())))
	if err != nil || passed {
		t.Fatalf("Curator waitOnBarrier(%v) on Go's barrier = %v, %v; want false", settle, passed, err)
	}

	done := make(chan error, 1)
	go func() {
		passed, err := j.Bool(javaCtx(t, 20*time.Second), "barrier.wait", path, "15000")
		if err == nil && !passed {
			err = errors.New("Curator waitOnBarrier timed out")
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("Curator waitOnBarrier returned (%v) while Go's barrier was set", err)
	case <-time.After(settle):
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatalf("Go Remove: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Curator waitOnBarrier after Go's remove: %v", err)
	}
}

// member is one participant of a mixed double barrier.
type member struct {
	name  string
	enter func(context.Context) error
	leave func(context.Context) error
}

func goMember(t *testing.T, name, path string, qty int) member {
	t.Helper()
	b, err := doublebarrier.New(newClient(t), path, qty)
	if err != nil {
		t.Fatal(err)
	}
	return member{name: name, enter: b.Enter, leave: b.Leave}
}

// javaMember is a Curator member. Its enter is Curator's untimed enter():
// the timed one can let a member in early on a connection event (GH-1290,
// in 5.4 and until its fix), which is Curator's bug, not the one under test.
// The call's ctx still bounds it.
func javaMember(t *testing.T, name, path string, qty int) member {
	t.Helper()
	j := startJava(t)
	call := func(words ...string) func(context.Context) error {
		return func(ctx context.Context) error {
			ok, err := j.Bool(ctx, words...)
			if err == nil && !ok {
				err = fmt.Errorf("Curator %s timed out", words[0])
			}
			return err
		}
	}
	return member{
		name:  name,
		enter: call("dbarrier.enter", path, strconv.Itoa(qty)),
		leave: call("dbarrier.leave", path, strconv.Itoa(qty), "15000"),
	}
}

// TestInterop_DoubleBarrierMixedMembers puts 3 Go and 2 Curator members on a
// double barrier of 5. With four in, no Enter returns; the fifth (Curator)
// lets all five in. With four leaving, no Leave returns; the fifth (Go) lets
// all five out, and the barrier path is left empty.
func TestInterop_DoubleBarrierMixedMembers(t *testing.T) {
	const qty = 5
	observer := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, observer, base) })
	path := base + "/dbarrier"
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()

	members := []member{
		goMember(t, "go1", path, qty),
		javaMember(t, "java1", path, qty),
		goMember(t, "go2", path, qty),
		goMember(t, "go3", path, qty),
		javaMember(t, "java2", path, qty), // enters last
	}
	leaveOrder := []int{0, 1, 4, 2, 3} // go3 leaves last

	memberNodes := func() (n int, ready bool) {
		for _, k := range children(t, observer, path) {
			if k == "ready" {
				ready = true
			} else {
				n++
			}
		}
		return n, ready
	}
	var returned atomic.Int32
	// run starts members' steps one by one (start) and joins them (wait).
	run := func(step func(member) func(context.Context) error) (start func(int), wait func() []error) {
		errs := make([]error, len(members))
		var wg sync.WaitGroup
		start = func(i int) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = step(members[i])(ctx)
				returned.Add(1)
			}()
		}
		return start, func() []error { wg.Wait(); return errs }
	}

	start, wait := run(func(m member) func(context.Context) error { return m.enter })
	for i := range qty - 1 {
		start(i)
	}
	eventually(t, 15*time.Second, func() bool { n, _ := memberNodes(); return n == qty-1 },
		fmt.Sprintf("%d members waiting in Enter", qty-1))
	time.Sleep(settle)
	if n := returned.Load(); n != 0 {
		t.Fatalf("%d Enter calls returned with only %d of %d members in", n, qty-1, qty)
	}
	if _, ready := memberNodes(); ready {
		t.Fatalf("ready exists with only %d of %d members in", qty-1, qty)
	}
	start(qty - 1)
	for i, err := range wait() {
		if err != nil {
			t.Fatalf("%s Enter: %v", members[i].name, err)
		}
	}
	if n, ready := memberNodes(); n != qty || !ready {
		t.Fatalf("inside the barrier: %d member nodes, ready %v; want %d and ready", n, ready, qty)
	}

	returned.Store(0)
	start, wait = run(func(m member) func(context.Context) error { return m.leave })
	for _, i := range leaveOrder[:qty-1] {
		start(i)
	}
	// All but the lowest leaver delete their nodes; the last one keeps its.
	eventually(t, 15*time.Second, func() bool { n, _ := memberNodes(); return n <= 2 },
		"the first leavers gone from the barrier")
	time.Sleep(settle)
	if n := returned.Load(); n != 0 {
		t.Fatalf("%d Leave calls returned while %s was still inside", n, members[leaveOrder[qty-1]].name)
	}
	start(leaveOrder[qty-1])
	for i, err := range wait() {
		if err != nil {
			t.Errorf("%s Leave: %v", members[i].name, err)
		}
	}
	eventually(t, 10*time.Second, func() bool { n, ready := memberNodes(); return n == 0 && !ready },
		"an empty barrier path after everybody left")
}
