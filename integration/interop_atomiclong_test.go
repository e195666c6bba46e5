package integration

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/recipes/atomiclong"
	"github.com/go-curator/curator/retry"
)

// TestInterop_AtomicLongOptimistic has two Go clients and two Curator
// processes increment one counter at once with few optimistic tries. Some
// increments may fail; the final value equals the successful ones from
// both sides, and each success saw post == pre + 1.
func TestInterop_AtomicLongOptimistic(t *testing.T) {
	testAtomicLongMixed(t, false)
}

// TestInterop_AtomicLongPromotedLock does the same with the promoted lock on
// a lock path both sides share (Curator's InterProcessMutex and Go's mutex
// on one path). A promoted try can still lose to an optimistic writer, so
// failures are allowed here too; the counter must still add up.
func TestInterop_AtomicLongPromotedLock(t *testing.T) {
	testAtomicLongMixed(t, true)
}

func testAtomicLongMixed(t *testing.T, promoted bool) {
	const rounds = 25
	observer := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, observer, base) })
	path, lockPath := base+"/counter", base+"/counter-lock"
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	type tally struct {
		mu        sync.Mutex
		succeeded map[string]int
		failed    map[string]int
		posts     map[int64]string
	}
	tl := tally{succeeded: map[string]int{}, failed: map[string]int{}, posts: map[int64]string{}}
	note := func(who string, ok bool, pre, post int64) error {
		tl.mu.Lock()
		defer tl.mu.Unlock()
		if !ok {
			tl.failed[who]++
			return nil
		}
		tl.succeeded[who]++
		if post != pre+1 {
			return fmt.Errorf("%s: increment from %d to %d", who, pre, post)
		}
		if other, dup := tl.posts[post]; dup {
			return fmt.Errorf("%s and %s both wrote %d", who, other, post)
		}
		tl.posts[post] = who
		return nil
	}

	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 2 {
		who := fmt.Sprintf("go%d", i+1)
		policy, err := retry.NewNTimes(3, 5*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		var opts []atomiclong.Option
		if promoted {
			lockPolicy, _ := retry.NewNTimes(10, 10*time.Millisecond)
			opts = append(opts, atomiclong.WithPromotedLock(lockPath, 10*time.Second, lockPolicy))
		}
		l, err := atomiclong.New(newClient(t), path, policy, opts...)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				r, err := l.Increment(ctx)
				if err == nil {
					err = note(who, r.Succeeded, r.PreValue, r.PostValue)
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", who, err)
					return
				}
			}
		}()
	}
	for i := range 2 {
		who := fmt.Sprintf("java%d", i+1)
		j := startJava(t)
		words := []string{"along.increment", path}
		if promoted {
			words = append(words, lockPath)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				err := javaIncrement(ctx, j, words, func(ok bool, pre, post int64) error { return note(who, ok, pre, post) })
				if err != nil {
					errs <- fmt.Errorf("%s: %w", who, err)
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

	total := 0
	for _, n := range tl.succeeded {
		total += n
	}
	t.Logf("succeeded %v, failed %v", tl.succeeded, tl.failed)
	for _, who := range []string{"go1", "go2", "java1", "java2"} {
		if tl.succeeded[who] == 0 {
			t.Errorf("%s made no successful increment", who)
		}
	}

	check, err := atomiclong.New(observer, path, mustNTimes(t))
	if err != nil {
		t.Fatal(err)
	}
	r, err := check.Get(ctx)
	if err != nil {
		t.Fatalf("Go Get: %v", err)
	}
	if r.PostValue != int64(total) {
		t.Errorf("counter = %d, successful increments = %d", r.PostValue, total)
	}
	jv, err := startJava(t).Fields(ctx, "along.get", path)
	if err != nil || len(jv) != 2 || jv[0] != "true" || jv[1] != strconv.Itoa(total) {
		t.Errorf("Curator reads the counter as %q, %v; want true %d", jv, err, total)
	}
	if promoted {
		if kids := children(t, observer, lockPath); len(kids) != 0 {
			t.Errorf("nodes left under the promoted lock %s: %q", lockPath, kids)
		}
	}
}

func javaIncrement(ctx context.Context, j *interop.Helper, words []string, note func(ok bool, pre, post int64) error) error {
	f, err := j.Fields(ctx, words...)
	if err != nil {
		return err
	}
	if len(f) != 3 {
		return fmt.Errorf("along.increment reply %q", f)
	}
	pre, err1 := strconv.ParseInt(f[1], 10, 64)
	post, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("along.increment reply %q", f)
	}
	return note(f[0] == "true", pre, post)
}

func mustNTimes(t testing.TB) retry.Policy {
	t.Helper()
	p, err := retry.NewNTimes(3, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
