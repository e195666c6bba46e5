package integration

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/atomiclong"
	"github.com/go-curator/curator/recipes/sharedcount"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// The counter fault tests lose the reply to a write the server applied
// (the proxy drops it and resets the connection), so that the client's
// retry meets its own first attempt. A counter must then report a definite
// outcome only if it knows it: never a lost race for a write it made,
// which would make its caller apply the change a second time.

// lostReplyClient starts a client behind its own fault proxy, and an
// observer client that talks to the server directly.
func lostReplyClient(t *testing.T) (c *framework.Client, p *zktest.Proxy, obs *framework.Client) {
	t.Helper()
	c, p = proxiedClient(t, func(b *framework.Builder) *framework.Builder { return b })
	return c, p, newClient(t)
}

// struck fails the test unless the proxy has lost exactly want replies:
// a fault that never struck would make the test prove nothing.
func struck(t *testing.T, p *zktest.Proxy, want int) {
	t.Helper()
	if got := p.LostReplies(); got != want {
		t.Fatalf("the proxy lost %d replies, want %d: the fault did not strike", got, want)
	}
}

// readLong reads an atomiclong's value as Curator stores it (8 bytes,
// big-endian), -1 if the node is missing.
func readLong(t *testing.T, obs *framework.Client, path string) int64 {
	t.Helper()
	data, _, err := obs.GetData().ForPath(t.Context(), path)
	if err != nil {
		if errors.Is(err, zk.ErrNoNode) {
			return -1
		}
		t.Fatalf("read %s: %v", path, err)
	}
	if len(data) != 8 {
		t.Fatalf("%s holds %d bytes, want 8", path, len(data))
	}
	return int64(binary.BigEndian.Uint64(data))
}

// checkIncrementFromZero checks one Increment from 0 whose write's reply
// was lost: a definite success with the counter at exactly 1, or an
// indeterminate error with the counter at 0 or 1. Never 2.
func checkIncrementFromZero(t *testing.T, res atomiclong.Result, err error, now int64) {
	t.Helper()
	switch {
	case err == nil:
		if !res.Succeeded || res.PreValue != 0 || res.PostValue != 1 || now != 1 {
			t.Fatalf("Increment from 0 = succeeded %v, %d -> %d, no error; counter now %d: want a success 0 -> 1 and the counter at 1",
				res.Succeeded, res.PreValue, res.PostValue, now)
		}
	case errors.Is(err, atomiclong.ErrIndeterminate):
		if !errors.Is(err, framework.ErrIndeterminate) {
			t.Errorf("error %v matches atomiclong.ErrIndeterminate but not framework.ErrIndeterminate", err)
		}
		if res.Succeeded || res.PreValue != 0 || res.PostValue != 1 {
			t.Errorf("indeterminate Increment: Result = succeeded %v, %d -> %d; want not succeeded, 0 -> 1 (the write that may have happened)",
				res.Succeeded, res.PreValue, res.PostValue)
		}
		if now != 0 && now != 1 {
			t.Fatalf("indeterminate Increment from 0 left the counter at %d: want 0 or 1", now)
		}
		t.Logf("Increment reported an indeterminate outcome (%v); the counter is %d", err, now)
	default:
		t.Fatalf("Increment from 0 with a lost reply: %v; want success or an error matching ErrIndeterminate", err)
	}
}

func TestFaults_CountersIncrementLostSetDataReply(t *testing.T) {
	faultsNoLeaks(t)
	c, p, obs := lostReplyClient(t)
	path := counterPath(t) + "/orders"
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	policy, err := retry.NewNTimes(10, 0)
	if err != nil {
		t.Fatal(err)
	}
	seed, err := atomiclong.New(obs, path, policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := seed.ForceSet(ctx, 0); err != nil {
		t.Fatalf("ForceSet 0: %v", err)
	}
	l, err := atomiclong.New(c, path, policy)
	if err != nil {
		t.Fatal(err)
	}

	p.LoseNextReply(zktest.OpSetData)
	res, err := l.Increment(ctx)
	struck(t, p, 1)
	checkIncrementFromZero(t, res, err, readLong(t, obs, path))
}

// TestFaults_CountersIncrementLostCreateReply: the counter's node is
// missing, so Increment creates it with 1, and the create's reply is lost.
func TestFaults_CountersIncrementLostCreateReply(t *testing.T) {
	faultsNoLeaks(t)
	c, p, obs := lostReplyClient(t)
	base := counterPath(t)
	path := base + "/orders"
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// The parent exists, so that the counter's create is the first create.
	if _, err := obs.Create().CreatingParentContainersIfNeeded().ForPath(ctx, base+"/keep", nil); err != nil {
		t.Fatal(err)
	}
	policy, err := retry.NewNTimes(10, 0)
	if err != nil {
		t.Fatal(err)
	}
	l, err := atomiclong.New(c, path, policy)
	if err != nil {
		t.Fatal(err)
	}

	p.LoseNextReply(zktest.OpCreate, zktest.OpCreate2)
	res, err := l.Increment(ctx)
	struck(t, p, 1)
	now := readLong(t, obs, path)
	if now == -1 {
		now = 0 // a missing node reads as 0
	}
	checkIncrementFromZero(t, res, err, now)
}

// TestFaults_CountersTrySetCountLostReply: a TrySetCount whose write the
// server applied and whose reply was lost never returns false without an
// error, so that the caller's compare-and-set loop, which tries again on
// false, applies its increment once at most. A blind SetCount with a lost
// reply ends with the value it wrote.
func TestFaults_CountersTrySetCountLostReply(t *testing.T) {
	faultsNoLeaks(t)
	c, p, obs := lostReplyClient(t)
	path := counterPath(t) + "/count"
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cnt := startSharedCount(t, c, path, 0)

	p.LoseNextReply(zktest.OpSetData)
	first, firstErr, tries := true, error(nil), 0
	for tries < 10 { // a caller's increment loop: again on false, stop on true or an error
		tries++
		prev := cnt.VersionedValue()
		ok, err := cnt.TrySetCount(ctx, prev, prev.Value+1)
		if first {
			first, firstErr = false, err
			if !ok && err == nil && readCount(t, obs, path) == prev.Value+1 {
				t.Errorf("TrySetCount(%d -> %d) returned false and no error for a write it applied", prev.Value, prev.Value+1)
			}
		}
		if ok || err != nil {
			break
		}
	}
	struck(t, p, 1)
	switch now := readCount(t, obs, path); {
	case errors.Is(firstErr, sharedcount.ErrIndeterminate):
		if !errors.Is(firstErr, framework.ErrIndeterminate) {
			t.Errorf("error %v matches sharedcount.ErrIndeterminate but not framework.ErrIndeterminate", firstErr)
		}
		if now != 0 && now != 1 {
			t.Fatalf("after an indeterminate TrySetCount 0 -> 1 the count is %d, want 0 or 1", now)
		}
		t.Logf("TrySetCount reported an indeterminate outcome (%v); the count is %d", firstErr, now)
	case firstErr != nil:
		t.Fatalf("TrySetCount with a lost reply: %v; want true or an error matching ErrIndeterminate", firstErr)
	case now != 1:
		t.Fatalf("the caller's increment loop made %d tries and left the count at %d: the increment was applied %d times",
			tries, now, now)
	}

	// A blind set is absolute: its retry writes the same value again.
	p.LoseNextReply(zktest.OpSetData)
	err := cnt.SetCount(ctx, 42)
	struck(t, p, 2)
	if err != nil && !errors.Is(err, sharedcount.ErrIndeterminate) {
		t.Fatalf("SetCount(42) with a lost reply: %v; want nil or an error matching ErrIndeterminate", err)
	}
	if now := readCount(t, obs, path); err == nil && now != 42 {
		t.Fatalf("SetCount(42) succeeded but the count is %d", now)
	}
}

// readCount reads a shared count as Curator stores it (4 bytes,
// big-endian).
func readCount(t *testing.T, obs *framework.Client, path string) int32 {
	t.Helper()
	data, _, err := obs.GetData().ForPath(t.Context(), path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if len(data) != 4 {
		t.Fatalf("%s holds %d bytes, want 4", path, len(data))
	}
	return int32(binary.BigEndian.Uint32(data))
}
