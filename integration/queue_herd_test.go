package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/queue"
	"github.com/go-curator/curator/zktest"
)

// qNotifications returns how many watch notifications the server has sent
// (the sums of mntr's node_{created,deleted,changed,children}_watch_count).
func qNotifications(t *testing.T, srv *zktest.Server) int64 {
	t.Helper()
	out, err := srv.FourLetter("mntr")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && strings.HasPrefix(f[0], "zk_sum_node_") && strings.HasSuffix(f[0], "_watch_count") {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			n += v
		}
	}
	return n
}

// qMntr returns mntr's value of key.
func qMntr(t *testing.T, srv *zktest.Server, key string) int64 {
	t.Helper()
	out, err := srv.FourLetter("mntr")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == key {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	t.Fatalf("no %s in mntr", key)
	return 0
}

// TestQueue_NoHerd puts items one at a time in front of 16 idle consumers
// (16 clients) and counts the watch notifications the server sends per
// put: ours line up, so a put wakes a bounded number of them, where
// consumers that each watch the directory (WithoutLine, Curator's way) are
// all woken, which the test also measures so that the count is known to
// see a herd.
func TestQueue_NoHerd(t *testing.T) {
	t.Parallel()
	const consumers, puts = 16, 4
	cl := zktest.Start(t)
	srv := cl.Servers()[0]
	var cs []*framework.Client
	for range consumers {
		cs = append(cs, startClient(t, builder(t, cl.ConnectString())))
	}
	perPut := func(p string, lined bool, opts ...queue.Option) float64 {
		baseWatches := qMntr(t, srv, "zk_watch_count")
		got := make(chan string, puts*2)
		var qs []*queue.Queue
		for _, c := range cs {
			q, err := queue.New(c, p, append(opts, queue.WithConsumer(func(ctx context.Context, it queue.Item) error {
				got <- string(it.Data)
				return nil
			}))...)
			if err != nil {
				t.Fatal(err)
			}
			if err := q.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			qs = append(qs, q)
		}
		defer func() {
			for _, q := range qs {
				q.Close(context.Background())
			}
		}()
		// Idle, each consumer holds one watch: the line's head on the
		// directory's children, the others on their predecessors (or, not
		// lined, each on the directory's children).
		settled := func() bool {
			if lined && len(children(t, cs[0], p+"-line")) != consumers {
				return false
			}
			return qMntr(t, srv, "zk_watch_count")-baseWatches == consumers
		}
		eventually(t, 10*time.Second, settled, "every consumer idle")
		before := qNotifications(t, srv)
		for i := range puts {
			if err := (qs[0]).Put(t.Context(), []byte(fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
			qRecv(t, got, "the item")
			eventually(t, 10*time.Second, settled, "every consumer idle again")
		}
		return float64(qNotifications(t, srv)-before) / puts
	}
	base := qTestPath(t)
	ours := perPut(base+"/lined", true)
	eventually(t, 10*time.Second, func() bool { return len(children(t, cs[0], base+"/lined-line")) == 0 }, "the line empty after Close")
	locked := perPut(base+"/locked", true, queue.WithLockPath(base+"/locks"))
	eventually(t, 10*time.Second, func() bool { return len(children(t, cs[0], base+"/locked-line")) == 0 }, "the line empty after Close")
	theirs := perPut(base+"/herd", false, queue.WithoutLine())
	t.Logf("watch notifications per put with %d idle consumers: %.1f lined up, %.1f lined up and lock-safe, %.1f each watching the directory",
		consumers, ours, locked, theirs)
	if theirs < consumers {
		t.Fatalf("consumers watching the directory got %.1f notifications per put; want >= %d: the count does not see a herd", theirs, consumers)
	}
	if ours > 4 || locked > 6 {
		t.Fatalf("%.1f (plain) and %.1f (lock-safe) watch notifications per put with %d idle consumers; want <= 4 and <= 6",
			ours, locked, consumers)
	}
}
