package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/recipes/mutex"
)

// TestInterop_GrantQueueGoAndJava queues Go A (holding), Java B, Go C, Go
// D, Java E, Go F on one lock, each after the one before has its node: the
// lock passes a Go holder's grant to a Java waiter (which sees the delete),
// a Java holder's plain delete to a Go waiter, and a Go holder's grant to
// a Go waiter, in queue order, with the Go holders' fencing tokens rising,
// and no node left.
func TestInterop_GrantQueueGoAndJava(t *testing.T) {
	base := testPath(t)
	path := base + "/lock"
	observer := newClient(t)
	t.Cleanup(func() { deleteTree(t, observer, base) })
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	var mu sync.Mutex
	var order []string
	record := func(who string) {
		mu.Lock()
		order = append(order, who)
		mu.Unlock()
	}
	queued := func(n int) {
		t.Helper()
		eventually(t, 15*time.Second, func() bool { return len(children(t, observer, path)) == n },
			fmt.Sprintf("%d contenders queued", n))
	}

	// A contender holds when its held channel closes, and releases when
	// its release channel is closed; done reports the release.
	type contender struct {
		name    string
		held    chan struct{}
		release chan struct{}
		done    chan error
		token   int64 // Go contenders: the fencing token
	}
	goContender := func(name string) *contender {
		k := &contender{name: name, held: make(chan struct{}), release: make(chan struct{}), done: make(chan error, 1)}
		m := newMutex(t, newClient(t), path)
		go func() {
			h, err := m.Acquire(ctx)
			if err != nil {
				k.done <- err
				return
			}
			record(name)
			if k.token, err = h.FencingToken(); err != nil {
				k.done <- err
				return
			}
			close(k.held)
			<-k.release
			k.done <- h.Release(ctx)
		}()
		return k
	}
	javaContender := func(name string, j *interop.Helper) *contender {
		k := &contender{name: name, held: make(chan struct{}), release: make(chan struct{}), done: make(chan error, 1)}
		go func() {
			ok, err := j.Bool(ctx, "mutex.acquire", path, "60000")
			if err == nil && !ok {
				err = fmt.Errorf("%s timed out", name)
			}
			if err != nil {
				k.done <- err
				return
			}
			record(name)
			close(k.held)
			<-k.release
			_, err = j.Call(ctx, "mutex.release", path)
			k.done <- err
		}()
		return k
	}

	jb, je := startJava(t), startJava(t)
	var queue []*contender
	for i, mk := range []func() *contender{
		func() *contender { return goContender("goA") },
		func() *contender { return javaContender("javaB", jb) },
		func() *contender { return goContender("goC") },
		func() *contender { return goContender("goD") },
		func() *contender { return javaContender("javaE", je) },
		func() *contender { return goContender("goF") },
	} {
		queue = append(queue, mk())
		queued(i + 1)
	}
	var last int64
	for i, k := range queue {
		select {
		case <-k.held:
		case err := <-k.done:
			t.Fatalf("%s ended before it held: %v", k.name, err)
		case <-ctx.Done():
			t.Fatalf("%s never held the lock", k.name)
		}
		if got, want := len(children(t, observer, path)), len(queue)-i; got != want {
			t.Fatalf("%s holds with %d nodes queued, want %d", k.name, got, want)
		}
		if k.token != 0 {
			if k.token <= last {
				t.Fatalf("%s's token %d is not above the last Go holder's %d", k.name, k.token, last)
			}
			last = k.token
		}
		close(k.release)
		if err := <-k.done; err != nil {
			t.Fatalf("%s: %v", k.name, err)
		}
	}
	if want := "[goA javaB goC goD javaE goF]"; fmt.Sprint(order) != want {
		t.Errorf("holders in order %v, want %s", order, want)
	}
	if kids := children(t, observer, path); len(kids) != 0 {
		t.Errorf("nodes left: %q", kids)
	}
}

// TestInterop_GrantChurnGoAndJava runs two Go clients and two Curator
// processes on one lock, Go holders handing over by grant: no two hold at
// once, every contender gets all its turns, and the Go holders' tokens
// rise.
func TestInterop_GrantChurnGoAndJava(t *testing.T) {
	const rounds = 10
	base := testPath(t)
	path := base + "/lock"
	observer := newClient(t)
	t.Cleanup(func() { deleteTree(t, observer, base) })
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	var w witness
	var tokMu sync.Mutex
	var last int64
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for i, c := range []*framework.Client{newClient(t), newClient(t), newClient(t)} {
		id := int32(i + 1)
		m, err := mutex.New(c, path)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				h, err := m.Acquire(ctx)
				if err != nil {
					errs <- fmt.Errorf("go %d acquire: %w", id, err)
					return
				}
				w.enter(id)
				tok, err := h.FencingToken()
				tokMu.Lock()
				if err != nil || tok <= last {
					errs <- fmt.Errorf("go %d token %d (%v) after %d", id, tok, err, last)
				}
				last = tok
				tokMu.Unlock()
				w.leave(id)
				if err := h.Release(ctx); err != nil {
					errs <- fmt.Errorf("go %d release: %w", id, err)
					return
				}
			}
		}()
	}
	for i, j := range []*interop.Helper{startJava(t), startJava(t)} {
		id := int32(10 + i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				ok, err := j.Bool(ctx, "mutex.acquire", path, "60000")
				if err != nil || !ok {
					errs <- fmt.Errorf("java %d acquire = %v, %v", id, ok, err)
					return
				}
				w.enter(id)
				w.leave(id)
				if _, err := j.Call(ctx, "mutex.release", path); err != nil {
					errs <- fmt.Errorf("java %d release: %w", id, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	w.check(t)
	if kids := children(t, observer, path); len(kids) != 0 {
		t.Errorf("nodes left: %q", kids)
	}
}
