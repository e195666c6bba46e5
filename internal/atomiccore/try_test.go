package atomiccore

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestContention_LastWriteAndYield(t *testing.T) {
	var c contention[int64]
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
	var c contention[int64]
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
	var c contention[int64]
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

func TestContention_QueuesAfterStreak(t *testing.T) {
	t0 := time.Now()
	win := func(c *contention[int64], n int, at time.Time) {
		for range n {
			c.won(c.value+1, &zk.Stat{Version: c.version + 1, Mzxid: c.mzxid + 1}, at, time.Millisecond)
		}
	}
	// No promoted lock: the streak never queues.
	var plain contention[int64]
	plain.contended(t0)
	win(&plain, 3*queuedStreak, t0)
	if plain.takeQueue() {
		t.Error("a Long without a lock queued")
	}
	// A lone writer with a lock, never contended: it never queues.
	c := contention[int64]{queued: true}
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

func TestContention_HolderWaitsOutAStreak(t *testing.T) {
	var c contention[int64]
	t0 := time.Now()
	c.won(5, &zk.Stat{Version: 10, Mzxid: 50}, t0, time.Millisecond)
	for _, tc := range []struct {
		stat *zk.Stat
		want bool
	}{
		{nil, false},                   // the node is gone
		{&zk.Stat{Version: 10}, false}, // our own write
		{&zk.Stat{Version: 11}, false}, // one write by another: no streak
		{&zk.Stat{Version: 12}, true},  // two: a streak under way
		{&zk.Stat{Version: 40}, true},
	} {
		if got := c.queuedRead(tc.stat, t0); got != tc.want {
			t.Errorf("queuedRead(%+v) = %v, want %v", tc.stat, got, tc.want)
		}
	}
}

func TestContention_GapKeepsAStreakContended(t *testing.T) {
	t0 := time.Now()
	c := contention[int64]{queued: true}
	c.contended(t0)
	late := t0.Add(2 * contendedFor) // a streak slowed by a stall
	for i := range queuedStreak {
		// No other request between our writes: the contention is old.
		c.won(int64(i), &zk.Stat{Version: int32(i), Mzxid: int64(100 + i)}, late, time.Millisecond)
	}
	if c.takeQueue() {
		t.Fatal("queued on contention older than contendedFor")
	}
	// Another writer's request (a lost write) between two of ours.
	c.won(99, &zk.Stat{Version: queuedStreak, Mzxid: 100 + queuedStreak + 1}, late, time.Millisecond)
	if !c.takeQueue() {
		t.Error("a streak past queuedStreak that sees another writer's request did not queue")
	}
}

func TestContention_GapsAloneAreNoContention(t *testing.T) {
	t0 := time.Now()
	c := contention[int64]{queued: true} // never contended
	for i := range 3 * queuedStreak {
		c.won(int64(i), &zk.Stat{Version: int32(i), Mzxid: int64(100 + 7*i)}, t0, time.Millisecond)
	}
	if c.takeQueue() {
		t.Error("a lone writer on a busy server (gaps, no lost race) queued")
	}
}
