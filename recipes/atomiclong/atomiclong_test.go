package atomiclong

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

func policy(t *testing.T) retry.Policy {
	t.Helper()
	p, err := retry.NewNTimes(3, 0)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// unstarted returns a client that was built but never started.
func unstarted(t *testing.T) *framework.Client {
	t.Helper()
	c, err := framework.NewClient("127.0.0.1:1", policy(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestNew_BadInput(t *testing.T) {
	c, p := unstarted(t), policy(t)
	for _, tc := range []struct {
		name   string
		client *framework.Client
		path   string
		policy retry.Policy
		opts   []Option
		want   error
	}{
		{"nil client", nil, "/c", p, nil, framework.ErrNilClient},
		{"empty path", c, "", p, nil, framework.ErrInvalidPath},
		{"relative path", c, "c", p, nil, framework.ErrInvalidPath},
		{"trailing slash", c, "/c/", p, nil, framework.ErrInvalidPath},
		{"dot dot", c, "/a/..", p, nil, framework.ErrInvalidPath},
		{"control character", c, "/a\x01", p, nil, framework.ErrInvalidPath},
		{"root", c, "/", p, nil, framework.ErrInvalidPath},
		{"nil policy", c, "/c", nil, nil, ErrInvalidArgument},
		{"nil option", c, "/c", p, []Option{nil}, ErrInvalidArgument},
		{"bad lock path", c, "/c", p, []Option{WithPromotedLock("lock", time.Second, p)}, framework.ErrInvalidPath},
		{"lock on the counter", c, "/c", p, []Option{WithPromotedLock("/c", time.Second, p)}, ErrInvalidArgument},
		{"negative wait", c, "/c", p, []Option{WithPromotedLock("/l", -time.Second, p)}, ErrInvalidArgument},
		{"nil lock policy", c, "/c", p, []Option{WithPromotedLock("/l", time.Second, nil)}, ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(tc.client, tc.path, tc.policy, tc.opts...)
			if !errors.Is(err, tc.want) || l != nil {
				t.Errorf("New = %v, %v; want nil, %v", l, err, tc.want)
			}
		})
	}
	if _, err := New(c, "/c", p, WithPromotedLock("/l", 0, p)); err != nil {
		t.Errorf("valid promoted lock: %v", err)
	}
}

func TestLong_UnstartedAndNil(t *testing.T) {
	ctx := context.Background()
	l, err := New(unstarted(t), "/c", policy(t))
	if err != nil {
		t.Fatal(err)
	}
	var nl *Long
	for _, tc := range []struct {
		l    *Long
		want error
	}{{l, framework.ErrNotStarted}, {nl, ErrInvalidArgument}} {
		ops := map[string]func() error{
			"Get":           func() error { _, err := tc.l.Get(ctx); return err },
			"Increment":     func() error { _, err := tc.l.Increment(ctx); return err },
			"Decrement":     func() error { _, err := tc.l.Decrement(ctx); return err },
			"Add":           func() error { _, err := tc.l.Add(ctx, 2); return err },
			"Subtract":      func() error { _, err := tc.l.Subtract(ctx, 2); return err },
			"TrySet":        func() error { _, err := tc.l.TrySet(ctx, 2); return err },
			"CompareAndSet": func() error { _, err := tc.l.CompareAndSet(ctx, 0, 2); return err },
			"Initialize":    func() error { _, err := tc.l.Initialize(ctx, 2); return err },
			"ForceSet":      func() error { return tc.l.ForceSet(ctx, 2) },
		}
		for name, op := range ops {
			if err := op(); !errors.Is(err, tc.want) {
				t.Errorf("%s: err = %v, want %v", name, err, tc.want)
			}
		}
	}
}

func TestContention_LastWriteAndYield(t *testing.T) {
	var c contention
	t0 := time.Now()
	if _, _, ok := c.last(t0); ok {
		t.Fatal("last with no write: want none")
	}
	if d, _ := c.pause(); d != 0 {
		t.Fatalf("pause with no write = %v, want 0", d)
	}
	c.won(7, &zk.Stat{Version: 3, Mzxid: 100}, t0, time.Millisecond)
	v, st, ok := c.last(t0.Add(fresh / 2))
	if !ok || v != 7 || st.Version != 3 {
		t.Fatalf("last = %d, %+v, %v; want 7 at version 3", v, st, ok)
	}
	if _, _, ok := c.last(t0.Add(fresh + time.Millisecond)); ok {
		t.Error("last after it went stale: want none")
	}
	// The next write right on top of ours, no other request between.
	c.won(8, &zk.Stat{Version: 4, Mzxid: 101}, t0, time.Millisecond)
	if d, _ := c.pause(); d != 0 {
		t.Errorf("pause without another writer = %v, want 0", d)
	}
	// Another request (a lost race) between our writes, before a streak
	// of yieldStreak wins: no yield.
	c.won(9, &zk.Stat{Version: 5, Mzxid: 103}, t0, time.Millisecond)
	if d, _ := c.pause(); d != 0 {
		t.Errorf("pause after %d wins = %v, want 0", c.streak, d)
	}
	// After the streak: yield once.
	c.streak = yieldStreak
	c.won(10, &zk.Stat{Version: 6, Mzxid: 105}, t0, time.Millisecond)
	if d, v := c.pause(); d <= 0 || v != 6 {
		t.Errorf("pause after another writer's request = %v at version %d, want a few tries at 6", d, v)
	}
	if _, _, ok := c.last(t0); ok {
		t.Error("last after a yield: want none (the yielding operation reads)")
	}
	if d, _ := c.pause(); d != 0 {
		t.Errorf("second pause = %v, want 0", d)
	}
	// A write on top of another writer's (after a read) is not ours to
	// compare: no yield.
	c.won(20, &zk.Stat{Version: 9, Mzxid: 200}, t0, time.Millisecond)
	c.streak = yieldStreak
	c.won(21, &zk.Stat{Version: 11, Mzxid: 300}, t0, time.Millisecond)
	if d, _ := c.pause(); d != 0 {
		t.Errorf("pause after a write on another's = %v, want 0", d)
	}
	// A yield no one took stops the yields for a while.
	c.streak = yieldStreak
	c.won(22, &zk.Stat{Version: 12, Mzxid: 302}, t0, time.Millisecond)
	if d, _ := c.pause(); d <= 0 {
		t.Fatalf("pause = %v, want a yield", d)
	}
	c.unused(t0)
	c.won(23, &zk.Stat{Version: 13, Mzxid: 310}, t0, time.Millisecond)
	c.streak = yieldStreak
	c.won(24, &zk.Stat{Version: 14, Mzxid: 320}, t0.Add(quietAfterYield/2), time.Millisecond)
	if d, _ := c.pause(); d != 0 {
		t.Errorf("pause while quiet after an unused yield = %v, want 0", d)
	}
	c.streak = yieldStreak
	c.won(25, &zk.Stat{Version: 15, Mzxid: 330}, t0.Add(quietAfterYield), time.Millisecond)
	if d, _ := c.pause(); d <= 0 {
		t.Errorf("pause after the quiet time = %v, want a yield", d)
	}
	c.won(26, &zk.Stat{Version: 16, Mzxid: 340}, t0, time.Millisecond)
	c.lost()
	if _, _, ok := c.last(t0); ok || c.streak != 0 {
		t.Errorf("after a lost race: last %v, streak %d; want none and 0", ok, c.streak)
	}
	c.won(1, &zk.Stat{Version: 1, Mzxid: 400}, t0, time.Hour)
	if c.try > maxLatency {
		t.Errorf("try = %v, want at most %v", c.try, maxLatency)
	}
}

func TestContention_Backoff(t *testing.T) {
	var c contention
	c.try = time.Millisecond
	base := min(max(sleepTries*c.try, minSleep), maxSleep)
	for range 100 {
		if d := c.quick(); d < 0 || d > c.try/2 {
			t.Fatalf("quick = %v, want at most half a try", d)
		}
		for s := range 40 {
			w := base * time.Duration(min(1<<s, sleepCap))
			if d := c.sleep(s); d < w/2 || d > w {
				t.Fatalf("sleep(%d) = %v, want in [%v, %v]", s, d, w/2, w)
			}
		}
	}
}

func TestContention_Streaking(t *testing.T) {
	var c contention
	c.try = time.Millisecond
	t0 := time.Now()
	after := t0.Add(100 * time.Millisecond) // 100 tries later
	for _, tc := range []struct {
		name         string
		seen, looked int32
		stat         *zk.Stat
		want         bool
	}{
		{"never wrote", -1, -1, &zk.Stat{Version: 50}, false},
		{"node gone", 5, 5, nil, false},
		{"no one wrote", 5, 5, &zk.Stat{Version: 5}, false},
		{"no one wrote since the last look", 5, 30, &zk.Stat{Version: 30}, false},
		{"a hot streak", 5, 5, &zk.Stat{Version: 30}, true},
		{"a slow writer", 5, 5, &zk.Stat{Version: 20}, false},
		{"a streak long enough to yield", 5, 5 + yieldStreak - 30, &zk.Stat{Version: 5 + yieldStreak}, false},
		{"re-created", 5, 5, &zk.Stat{Version: 0}, false},
	} {
		if got := c.streaking(tc.seen, tc.looked, t0, tc.stat, after); got != tc.want {
			t.Errorf("%s: streaking = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestNew_PromotedLockChoice(t *testing.T) {
	c, p := unstarted(t), policy(t)
	for _, tc := range []struct {
		name     string
		opts     []Option
		lockPath string // "" for none
		bounded  bool   // maxWait and policy given
	}{
		{"default", nil, "/shop/orders" + DefaultLockSuffix, false},
		{"explicit", []Option{WithPromotedLock("/locks/orders", time.Second, p)}, "/locks/orders", true},
		{"without", []Option{WithoutPromotedLock()}, "", false},
		{"without, then explicit", []Option{WithoutPromotedLock(), WithPromotedLock("/l", 0, p)}, "/l", true},
		{"explicit, then without", []Option{WithPromotedLock("/l", 0, p), WithoutPromotedLock()}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := New(c, "/shop/orders", p, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if tc.lockPath == "" {
				if l.lock != nil || l.turns.queued {
					t.Errorf("lock %+v, queued %v; want none", l.lock, l.turns.queued)
				}
				return
			}
			if l.lock == nil || l.lock.path != tc.lockPath || !l.turns.queued {
				t.Fatalf("lock %+v, queued %v; want one at %s", l.lock, l.turns.queued, tc.lockPath)
			}
			if bounded := l.lock.maxWait >= 0 && l.lock.policy != nil; bounded != tc.bounded {
				t.Errorf("maxWait %v, policy %v; want bounded %v", l.lock.maxWait, l.lock.policy, tc.bounded)
			}
		})
	}
}

func TestContention_QueuesAfterStreak(t *testing.T) {
	t0 := time.Now()
	win := func(c *contention, n int, at time.Time) {
		for range n {
			c.won(c.value+1, &zk.Stat{Version: c.version + 1, Mzxid: c.mzxid + 5}, at, time.Millisecond)
		}
	}
	// No promoted lock: the streak never queues.
	var plain contention
	plain.contended(t0)
	win(&plain, 3*queuedStreak, t0)
	if plain.takeQueue() {
		t.Error("a Long without a lock queued")
	}
	// A lone writer with a lock, never contended: it never queues.
	c := contention{queued: true}
	win(&c, 3*queuedStreak, t0)
	if c.takeQueue() {
		t.Error("a writer that met no one queued")
	}
	// A lost race: queue once after queuedStreak wins, then streak again.
	c.lost()
	c.contended(t0)
	win(&c, queuedStreak-1, t0)
	if c.takeQueue() {
		t.Errorf("queued after %d wins, want %d", queuedStreak-1, queuedStreak)
	}
	win(&c, 1, t0)
	if !c.takeQueue() {
		t.Fatalf("did not queue after %d wins since contention", queuedStreak)
	}
	if c.takeQueue() {
		t.Error("takeQueue did not clear the request")
	}
	// A lost race ends the streak.
	win(&c, queuedStreak-1, t0)
	c.lost()
	win(&c, 1, t0)
	if c.takeQueue() {
		t.Error("queued after a lost race cut the streak")
	}
	// Contention older than contendedFor is over.
	win(&c, queuedStreak, t0.Add(contendedFor))
	if c.takeQueue() {
		t.Error("queued after the contention was over")
	}
	// Under the lock, a version other than this Long's last write is
	// another writer's: contention again.
	c.queuedRead(&zk.Stat{Version: c.version}, t0.Add(contendedFor))
	win(&c, queuedStreak, t0.Add(contendedFor))
	if c.takeQueue() {
		t.Error("queued after a read that found only its own write")
	}
	c.queuedRead(&zk.Stat{Version: c.version + 2}, t0.Add(contendedFor))
	win(&c, queuedStreak, t0.Add(contendedFor))
	if !c.takeQueue() {
		t.Error("did not queue after a read under the lock found another's write")
	}
}
