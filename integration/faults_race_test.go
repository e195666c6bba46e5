package integration

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
)

// TestFaults_ReconnectWithWatchesHasNoDataRace reconnects a client that
// has watches outstanding, hundreds of times, while requests flow. Under
// -race, go-zookeeper v1.0.4's unsynchronized lastZxid (read by
// sendSetWatches, written by recvLoop; go-zookeeper/zk PR #35) is reported
// here unless the client orders the two (framework's wire gate).
func TestFaults_ReconnectWithWatchesHasNoDataRace(t *testing.T) {
	faultsNoLeaks(t)
	server := fwShared(t)
	// Two proxies to one server: go-zookeeper moves to the next address at
	// once instead of sleeping before it tries the same one again.
	p1, p2 := fwProxy(t, server), fwProxy(t, server)
	c := startClient(t, builder(t, p1.Addr()+","+p2.Addr()).SessionTimeout(20*time.Second))
	base := testPath(t)
	obs := newClient(t)
	if _, err := obs.Create().CreatingParentsIfNeeded().ForPath(t.Context(), base+"/n", nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { obs.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(context.Background(), base) })

	// Watches that never fire, so every reconnect re-registers them.
	for range 4 {
		if _, _, _, err := c.GetData().ForPathW(t.Context(), base+"/n"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for ctx.Err() == nil {
				c.CheckExists().ForPath(ctx, base+"/n")
			}
		})
	}
	// Replies lost at random: each loss cuts the connection at a moment
	// when requests are in flight, as in the counters' chaos loop.
	p1.SetReplyLoss(0.2, rand.New(rand.NewPCG(1, 2)), zktest.OpExists)
	p2.SetReplyLoss(0.2, rand.New(rand.NewPCG(3, 4)), zktest.OpExists)
	<-ctx.Done()
	wg.Wait()
	p1.SetReplyLoss(0, nil)
	p2.SetReplyLoss(0, nil)
	resets := p1.LostReplies() + p2.LostReplies()
	if c.State() == framework.Lost {
		t.Fatalf("the session was lost during %d resets", resets)
	}
	t.Logf("%d resets with watches outstanding", resets)
}
