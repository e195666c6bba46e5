package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/recipes/leaderlatch"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
	"github.com/google/uuid"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Leader fail-over, go-curator's LeaderLatch beside Curator 5.4's, in one
// run on one server:
//
//	go test -run '^$' -bench LeaderFailover -benchtime 1x ./bench
//
// It prints each case's median and 90th percentile for both libraries and
// the ratio of the medians (go-curator / Curator: below 1 is faster), and
// reports them as metrics. Each case runs failoverRounds rounds after
// failoverWarmup rounds that are not counted, each on a fresh path:
//
//   - close: a latch leads, a latch on another client waits behind it; the
//     time from the leader's Close to the waiter's election. Each library
//     times itself in its own process (Curator's close() starts a
//     background delete and returns; go-curator's Close returns after it).
//   - expiry: a bare go-zookeeper session holds the first latch node
//     (Curator's layout), a latch of the library waits behind it; the time
//     from the start of the expiry (zktest.ExpireSession: dial, handshake,
//     closeSession with the holder's credentials) to the waiter's election.
//     The trigger is the same Go code for both; Curator's election is
//     timed by its listener in epoch microseconds and compared with the Go
//     wall clock, on the same machine.
//
// The Java peer is integration/interop's leader helper, run with the JVM's
// full JIT.
//
// Beside them, as a reference on another server, etcd's
// concurrency.Election on one embedded etcd member (see etcdserver.go):
// close is the leader's Resign to the waiter's Campaign returning; expiry
// is the holder's lease revoked by another client (etcd's counterpart of
// expiring a ZooKeeper session) to the waiter's Campaign returning.

const (
	failoverRounds = 20
	failoverWarmup = 5
	// settle lets the waiter set its watch before the leader goes.
	settle = 100 * time.Millisecond
)

func BenchmarkLeaderFailover(b *testing.B) {
	cluster := zktest.Shared(b)
	connect := cluster.ConnectString()
	warmServer(b, connect)
	java := interop.StartLeaderWith(b, connect, interop.LeaderOptions{SessionTimeout: sessionTimeout, FullJIT: true})
	ctx := b.Context()
	etcd, err := startEtcd(ctx, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer etcd.close()
	run := time.Now().Format("150405.000")
	n := failoverWarmup + failoverRounds

	for b.Loop() {
		goClose, err := goCloseFailover(ctx, connect, "/bench-leader/"+run+"/close-go", n)
		if err != nil {
			b.Fatal(err)
		}
		javaClose, err := javaCloseFailover(ctx, java, "/bench-leader/"+run+"/close-java", n)
		if err != nil {
			b.Fatal(err)
		}
		goExpiry, err := expiryFailover(ctx, connect, "/bench-leader/"+run+"/expiry-go", n, goWaiter(connect))
		if err != nil {
			b.Fatal(err)
		}
		javaExpiry, err := expiryFailover(ctx, connect, "/bench-leader/"+run+"/expiry-java", n, javaWaiter(java))
		if err != nil {
			b.Fatal(err)
		}
		etcdClose, err := etcdCloseFailover(ctx, etcd.endpoints, "/bench-leader/"+run+"/close-etcd", n)
		if err != nil {
			b.Fatal(err)
		}
		etcdExpiry, err := etcdExpiryFailover(ctx, etcd.endpoints, "/bench-leader/"+run+"/expiry-etcd", n)
		if err != nil {
			b.Fatal(err)
		}
		var table strings.Builder
		fmt.Fprintf(&table, "\n| fail-over (%d rounds) | go-curator p50 | p90 | Curator 5.4 p50 | p90 | go-curator / Curator (p50) | etcd Election p50 (reference: etcd %s server) | p90 |\n|---|---:|---:|---:|---:|---:|---:|---:|\n", failoverRounds, etcdVersion)
		for _, c := range []struct {
			name              string
			goD, javaD, etcdD []time.Duration
		}{
			{"close", goClose[failoverWarmup:], javaClose[failoverWarmup:], etcdClose[failoverWarmup:]},
			{"expiry", goExpiry[failoverWarmup:], javaExpiry[failoverWarmup:], etcdExpiry[failoverWarmup:]},
		} {
			g50, g90 := quantile(c.goD, 0.5), quantile(c.goD, 0.9)
			j50, j90 := quantile(c.javaD, 0.5), quantile(c.javaD, 0.9)
			e50, e90 := quantile(c.etcdD, 0.5), quantile(c.etcdD, 0.9)
			ratio := float64(g50) / float64(j50)
			fmt.Fprintf(&table, "| %s | %s ms | %s ms | %s ms | %s ms | %.2f× | %s ms | %s ms |\n", c.name, ms(g50), ms(g90), ms(j50), ms(j90), ratio, ms(e50), ms(e90))
			b.ReportMetric(float64(g50)/1e6, c.name+"-go-ms")
			b.ReportMetric(float64(j50)/1e6, c.name+"-curator-ms")
			b.ReportMetric(ratio, c.name+"-ratio")
			b.ReportMetric(float64(e50)/1e6, c.name+"-etcd-ms")
		}
		b.Log(table.String())
	}
}

// quantile returns the q-quantile of ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s)) + 0.5)
	return s[min(max(i-1, 0), len(s)-1)]
}

// goCloseFailover times rounds of: a go-curator latch leads, one on
// another client waits, the leader closes, the waiter is elected.
func goCloseFailover(ctx context.Context, connect, base string, rounds int) ([]time.Duration, error) {
	clients, err := newCurators(ctx, connect, 2)
	if err != nil {
		return nil, err
	}
	defer closeCurators(clients)
	var out []time.Duration
	for r := range rounds {
		path := fmt.Sprintf("%s/r%d", base, r)
		leader, err := startedLatch(ctx, clients[0], path)
		if err != nil {
			return nil, err
		}
		if _, err := leader.Await(ctx); err != nil {
			return nil, err
		}
		next, err := startedLatch(ctx, clients[1], path)
		if err != nil {
			return nil, err
		}
		time.Sleep(settle)
		t0 := time.Now()
		if err := leader.Close(ctx); err != nil {
			return nil, err
		}
		if _, err := next.Await(ctx); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
		if err := next.Close(ctx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func startedLatch(ctx context.Context, c *framework.Client, path string) (*leaderlatch.Latch, error) {
	l, err := leaderlatch.New(c, path)
	if err != nil {
		return nil, err
	}
	if err := l.Start(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// javaCloseFailover asks the Curator helper to time the same rounds in
// its own process.
func javaCloseFailover(ctx context.Context, java *interop.Helper, base string, rounds int) ([]time.Duration, error) {
	f, err := java.Fields(ctx, "failover.close", base, strconv.Itoa(rounds))
	if err != nil {
		return nil, err
	}
	var out []time.Duration
	for _, w := range f {
		us, err := strconv.ParseInt(w, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("failover.close answered %q", f)
		}
		out = append(out, time.Duration(us)*time.Microsecond)
	}
	if len(out) != rounds {
		return nil, fmt.Errorf("failover.close answered %d rounds, want %d", len(out), rounds)
	}
	return out, nil
}

// waiter starts a latch of one library at path, behind the holder's node,
// and returns a function that waits for its election and returns when it
// was elected, and one that closes it.
type waiter func(ctx context.Context, path string, round int) (elected func() (time.Time, error), done func(), err error)

func goWaiter(connect string) waiter {
	var client *framework.Client
	return func(ctx context.Context, path string, round int) (func() (time.Time, error), func(), error) {
		if client == nil {
			c, err := newCurator(ctx, connect)
			if err != nil {
				return nil, nil, err
			}
			client = c
			context.AfterFunc(ctx, func() { c.Close() })
		}
		l, err := startedLatch(ctx, client, path)
		if err != nil {
			return nil, nil, err
		}
		elected := func() (time.Time, error) {
			if _, err := l.Await(ctx); err != nil {
				return time.Time{}, err
			}
			return time.Now(), nil
		}
		return elected, func() { l.Close(ctx) }, nil
	}
}

func javaWaiter(java *interop.Helper) waiter {
	return func(ctx context.Context, path string, round int) (func() (time.Time, error), func(), error) {
		name := fmt.Sprintf("expiry-%d", round)
		if _, err := java.Call(ctx, "latch.start", name, path, "b"); err != nil {
			return nil, nil, err
		}
		elected := func() (time.Time, error) {
			prefix := "latch " + name + " leader "
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				for _, e := range java.Events() {
					if us, ok := strings.CutPrefix(e, prefix); ok {
						n, err := strconv.ParseInt(us, 10, 64)
						return time.UnixMicro(n), err
					}
				}
			}
			return time.Time{}, fmt.Errorf("Curator's latch %s was not elected", name)
		}
		return elected, func() { java.Call(ctx, "latch.close", name) }, nil
	}
}

// expiryFailover times rounds of: a bare session holds the first latch
// node at a fresh path, a waiter of one library queues behind it, the
// holder's session is expired on the server, the waiter is elected.
func expiryFailover(ctx context.Context, connect, base string, rounds int, start waiter) ([]time.Duration, error) {
	admin, err := newCurator(ctx, connect)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	var out []time.Duration
	for r := range rounds {
		path := fmt.Sprintf("%s/r%d", base, r)
		if _, err := admin.Create().CreatingParentsIfNeeded().ForPath(ctx, path, nil); err != nil {
			return nil, err
		}
		holder, err := newConn(ctx, connect)
		if err != nil {
			return nil, err
		}
		_, err = holder.Create(path+"/_c_"+uuid.NewString()+"-latch-", []byte("holder"), zk.FlagEphemeralSequential, zk.WorldACL(zk.PermAll))
		if err != nil {
			holder.Close()
			return nil, err
		}
		elected, done, err := start(ctx, path, r)
		if err != nil {
			holder.Close()
			return nil, err
		}
		for {
			kids, err := admin.GetChildren().ForPath(ctx, path)
			if err != nil {
				return nil, err
			}
			if len(kids) == 2 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(settle)
		t0 := time.Now()
		if err := zktest.ExpireSession(ctx, connect, holder); err != nil && !errors.Is(err, zk.ErrSessionExpired) {
			holder.Close()
			return nil, err
		}
		t1, err := elected()
		holder.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, t1.Sub(t0))
		done()
	}
	return out, nil
}

// etcdCloseFailover times rounds of: an etcd Election leads, one on
// another client and session campaigns behind it, the leader resigns, the
// waiter's Campaign returns.
func etcdCloseFailover(ctx context.Context, endpoints []string, base string, rounds int) ([]time.Duration, error) {
	ss, err := newEtcdSessions(ctx, endpoints, 2)
	if err != nil {
		return nil, err
	}
	defer closeEtcdSessions(ss)
	var out []time.Duration
	for r := range rounds {
		pfx := fmt.Sprintf("%s/r%d", base, r)
		leader := concurrency.NewElection(ss[0].sess, pfx)
		if err := leader.Campaign(ctx, "a"); err != nil {
			return nil, err
		}
		elected, err := etcdCampaign(ctx, ss[1], pfx)
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		if err := leader.Resign(ctx); err != nil {
			return nil, err
		}
		t1, next, err := elected()
		if err != nil {
			return nil, err
		}
		out = append(out, t1.Sub(t0))
		if err := next.Resign(ctx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// etcdExpiryFailover times rounds of: a session of its own leads, an
// Election on another client campaigns behind it, another client revokes
// the leader's lease, the waiter's Campaign returns.
func etcdExpiryFailover(ctx context.Context, endpoints []string, base string, rounds int) ([]time.Duration, error) {
	ss, err := newEtcdSessions(ctx, endpoints, 2) // [0] holds, [1] waits
	if err != nil {
		return nil, err
	}
	defer closeEtcdSessions(ss)
	admin, err := newEtcdClient(ctx, endpoints)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	var out []time.Duration
	for r := range rounds {
		pfx := fmt.Sprintf("%s/r%d", base, r)
		holder, err := concurrency.NewSession(ss[0].cli, concurrency.WithTTL(etcdSessionTTL))
		if err != nil {
			return nil, err
		}
		if err := concurrency.NewElection(holder, pfx).Campaign(ctx, "holder"); err != nil {
			holder.Close()
			return nil, err
		}
		elected, err := etcdCampaign(ctx, ss[1], pfx)
		if err != nil {
			holder.Close()
			return nil, err
		}
		t0 := time.Now()
		if _, err := admin.Revoke(ctx, holder.Lease()); err != nil {
			holder.Close()
			return nil, err
		}
		t1, next, err := elected()
		holder.Orphan() // its lease is gone: stop keeping it alive
		if err != nil {
			return nil, err
		}
		out = append(out, t1.Sub(t0))
		if err := next.Resign(ctx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// etcdCampaign starts an Election's Campaign on es at pfx, behind a leader
// that is already there, waits until its key is queued and then settle,
// and returns a function that waits for the Campaign to return.
func etcdCampaign(ctx context.Context, es etcdSession, pfx string) (func() (time.Time, *concurrency.Election, error), error) {
	e := concurrency.NewElection(es.sess, pfx)
	type won struct {
		at  time.Time
		err error
	}
	ch := make(chan won, 1)
	go func() {
		err := e.Campaign(ctx, "b")
		ch <- won{time.Now(), err}
	}()
	for {
		resp, err := es.cli.Get(ctx, pfx+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			return nil, err
		}
		if resp.Count == 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(settle)
	return func() (time.Time, *concurrency.Election, error) {
		w := <-ch
		return w.at, e, w.err
	}, nil
}
