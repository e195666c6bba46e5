package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/queue"
	"github.com/go-curator/curator/zktest"
)

// The outcomes of one delivery of an item to a consumer.
const (
	outDone    = "done"    // the consumer returned nil
	outAborted = "aborted" // its ctx ended (the session holding the lock was lost) and it returned the cause
	outKilled  = "killed"  // its process "died" mid-item: the network went silent and it never returned
)

// queueDelivery is one delivery of an item.
type queueDelivery struct {
	consumer string
	token    queue.Token
	node     string
	outcome  string
	client   *framework.Client
	session  int64 // the consumer's session when the item came
	// sessionGone is set when the item came again: the consumer's session
	// had ended by then (so the item was not its own any more).
	sessionGone bool
}

// sessionID is c's current session, 0 between connections.
func sessionID(c *framework.Client) int64 {
	if zc := c.ZooKeeper(); zc != nil {
		return zc.SessionID()
	}
	return 0
}

// queueLedger counts every item put and every delivery, by the item's
// payload (unique per item).
type queueLedger struct {
	mu         sync.Mutex
	putOK      map[string]bool // confirmed puts
	putMaybe   map[string]bool // puts whose outcome the producer cannot know (a lost reply)
	putFailed  int
	deliveries map[string][]*queueDelivery
	reports    map[string][]string // what each consumer's error handler was told
	busy       map[string]int      // items mid-consumption, per chaos client
}

func newQueueLedger() *queueLedger {
	return &queueLedger{putOK: map[string]bool{}, putMaybe: map[string]bool{}, deliveries: map[string][]*queueDelivery{},
		reports: map[string][]string{}, busy: map[string]int{}}
}

func (l *queueLedger) put(ids []string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		switch {
		case err == nil:
			l.putOK[id] = true
		case errors.Is(err, framework.ErrIndeterminate):
			l.putMaybe[id] = true
		default:
			l.putFailed++
		}
	}
}

func (l *queueLedger) deliver(consumer string, c *framework.Client, it queue.Item) *queueDelivery {
	sess := sessionID(c)
	l.mu.Lock()
	defer l.mu.Unlock()
	d := &queueDelivery{consumer: consumer, token: it.Token, node: it.Node, client: c, session: sess}
	id := string(it.Data)
	for _, prev := range l.deliveries[id] {
		prev.sessionGone = prev.sessionGone || sessionID(prev.client) != prev.session
	}
	l.deliveries[id] = append(l.deliveries[id], d)
	l.busy[consumer]++
	return d
}

func (l *queueLedger) finish(consumer string, d *queueDelivery, outcome string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d.outcome = outcome
	l.busy[consumer]--
}

func (l *queueLedger) report(consumer string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reports[consumer] = append(l.reports[consumer], err.Error())
}

func (l *queueLedger) isBusy(consumer string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.busy[consumer] > 0
}

// undone lists the confirmed items no consumer finished.
func (l *queueLedger) undone() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for id := range l.putOK {
		if !slices0(l.deliveries[id], func(d *queueDelivery) bool { return d.outcome == outDone }) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func slices0(ds []*queueDelivery, f func(*queueDelivery) bool) bool {
	for _, d := range ds {
		if f(d) {
			return true
		}
	}
	return false
}

// mortalConsumer builds a client whose connections go through proxies of
// its own, outside the chaos schedule, so that the test can kill it: its
// network goes silent for good, as a crashed host's does.
func mortalConsumer(t *testing.T, ch *chaos) (*framework.Client, []*zktest.Proxy) {
	t.Helper()
	proxies := map[string]*zktest.Proxy{}
	var list []*zktest.Proxy
	for _, s := range ch.cluster.Servers() {
		p, err := zktest.NewProxy(s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		proxies[s.Addr()] = p
		list = append(list, p)
	}
	dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
		if p := proxies[addr]; p != nil {
			addr = p.Addr()
		}
		return net.DialTimeout(network, addr, timeout)
	}
	return startClient(t, builder(t, ch.cluster.ConnectString()).Dialer(dial)), list
}

// TestChaos_QueueLockSafeUnderFaults runs 2 producers and 4 lock-safe
// consumers on one queue of a 3-node ensemble, each on a client behind
// fault proxies, under consumer kills (2 more consumers die mid-item: their
// network goes silent and they never return), lost replies (a producer's
// and a consumer's), a session expiry of a consumer holding an item, a
// kill of the leader, then the seeded fault schedule. Every item is
// counted: none of those whose put returned nil is lost; an item is
// delivered more than once only after a delivery whose consumer died
// mid-item (killed; or its session ended before the item was deleted:
// the consumer aborted, or it was done but its session was gone when the
// item came again, or the queue reported the item left for redelivery),
// and every delivery of one item has the same Token.
func TestChaos_QueueLockSafeUnderFaults(t *testing.T) {
	faultsNoLeaks(t)
	duration := chaosDuration(5 * time.Second) // the seeded schedule, after the scripted faults
	ch := newChaos(t, 6)
	p := testPath(t)
	lockPath := p + "-locks"
	led := newQueueLedger()
	seed := chaosSeed()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	// Consumers: chaos clients 2-5, and two mortal ones.
	var queues []*queue.Queue
	closeAll := func() {
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(t.Context()), 20*time.Second)
		defer ccancel()
		for _, q := range queues {
			if err := q.Close(cctx); err != nil {
				t.Errorf("close a consumer: %v", err)
			}
		}
		queues = nil
	}
	defer closeAll()
	consumer := func(c *framework.Client, name string, dieAt int, die func()) {
		var n atomic.Int32
		q, err := queue.New(c, p, queue.WithLockPath(lockPath),
			queue.WithErrorHandler(func(err error) { led.report(name, err) }),
			queue.WithConsumer(func(ctx context.Context, it queue.Item) error {
				d := led.deliver(name, c, it)
				if int(n.Add(1)) == dieAt {
					led.finish(name, d, outKilled)
					die()
					<-ctx.Done() // dead: never returns of its own
					return context.Cause(ctx)
				}
				select {
				case <-time.After(time.Duration(2+rand.IntN(8)) * time.Millisecond): // the work
				case <-ctx.Done():
					led.finish(name, d, outAborted)
					return context.Cause(ctx)
				}
				led.finish(name, d, outDone)
				return nil
			}))
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		queues = append(queues, q)
	}
	for _, cc := range ch.clients[2:] {
		consumer(cc.c, fmt.Sprintf("client-%d", cc.id), 0, nil)
	}
	var kills atomic.Int32
	var mortalProxies [][]*zktest.Proxy
	for i, dieAt := range []int{3, 12} {
		c, proxies := mortalConsumer(t, ch)
		mortalProxies = append(mortalProxies, proxies)
		consumer(c, fmt.Sprintf("mortal-%d", i), dieAt, func() {
			for _, p := range proxies {
				p.Pause()
			}
			kills.Add(1)
		})
	}

	// Producers: chaos clients 0 and 1, one item or a node of 3 at a time.
	var pwg sync.WaitGroup
	for _, cc := range ch.clients[:2] {
		q, err := queue.New(cc.c, p)
		if err != nil {
			t.Fatal(err)
		}
		pwg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(cc.id)))
			for n := 0; ctx.Err() == nil; n++ {
				pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
				var err error
				var ids []string
				if rng.IntN(4) == 0 {
					var items [][]byte
					for k := range 3 {
						id := fmt.Sprintf("p%d-%d.%d", cc.id, n, k)
						ids, items = append(ids, id), append(items, []byte(id))
					}
					err = q.PutMulti(pctx, items)
				} else {
					id := fmt.Sprintf("p%d-%d", cc.id, n)
					ids = []string{id}
					err = q.Put(pctx, []byte(id))
				}
				pcancel()
				if ctx.Err() != nil && err != nil {
					led.put(ids, framework.ErrIndeterminate) // cut short by the end: may or may not be in
					return
				}
				led.put(ids, err)
				time.Sleep(time.Duration(5+rng.IntN(10)) * time.Millisecond)
			}
		})
	}

	// The scripted faults, each once, then the seeded schedule.
	busyClient := func() *chaosClient {
		for range 100 {
			for _, cc := range ch.clients[2:] {
				if led.isBusy(fmt.Sprintf("client-%d", cc.id)) {
					return cc
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		return ch.clients[2]
	}
	step := func(d time.Duration) {
		select {
		case <-time.After(d):
		case <-t.Context().Done():
		}
	}
	step(500 * time.Millisecond)
	for _, px := range ch.clients[0].proxies {
		px.LoseNextReply()
	}
	ch.count("lose reply (producer)")
	step(500 * time.Millisecond)
	for _, px := range busyClient().proxies {
		px.LoseNextReply()
	}
	ch.count("lose reply (consumer)")
	step(500 * time.Millisecond)
	cc := busyClient()
	ectx, ecancel := context.WithTimeout(t.Context(), 5*time.Second)
	if err := zktest.ExpireSession(ectx, ch.cluster.ConnectString(), cc.c.ZooKeeper()); err != nil {
		t.Errorf("expire a consumer's session: %v", err)
	} else {
		ch.count("expire session (busy consumer)")
	}
	ecancel()
	step(500 * time.Millisecond)
	leader, err := ch.cluster.Leader()
	if err != nil {
		t.Fatalf("no leader: %v", err)
	}
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	ch.count("kill leader (scripted)")
	step(time.Second)
	if err := leader.Start(); err != nil {
		t.Fatal(err)
	}
	fctx, fcancel := context.WithTimeout(ctx, duration)
	ch.injectFaults(fctx, seed, func(cc *chaosClient) bool { return led.isBusy(fmt.Sprintf("client-%d", cc.id)) })
	fcancel()
	cancel() // the producers stop
	pwg.Wait()

	// Every confirmed item gets done, and the queue and its locks empty.
	obs := newClient(t)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		undone, left := led.undone(), queueLeft(t, obs, p, lockPath)
		if len(undone) == 0 && len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s after the faults: %d confirmed items never done (lost) %.300q; %d nodes left %.300q",
				len(undone), undone, len(left), left)
		}
	}
	closeAll()
	for _, ps := range mortalProxies {
		for _, px := range ps {
			px.Close()
		}
	}

	// Count.
	led.mu.Lock()
	defer led.mu.Unlock()
	var delivered, doneN, dups, dupKilled, dupAborted, dupLeft int
	for id, ds := range led.deliveries {
		delivered += len(ds)
		done := 0
		for i, d := range ds {
			if d.token != ds[0].token {
				t.Errorf("item %s delivered with tokens %+v and %+v", id, ds[0].token, d.token)
			}
			if d.outcome == outDone {
				done++
			}
			if i == len(ds)-1 {
				continue
			}
			// An earlier delivery must have died mid-item.
			switch d.outcome {
			case outKilled:
				dupKilled++
			case outAborted:
				dupAborted++
			case outDone:
				if !leftFor(led.reports[d.consumer], d.node) && !d.sessionGone {
					var later []string
					for _, o := range ds[i+1:] {
						later = append(later, o.consumer+":"+o.outcome)
					}
					t.Errorf("item %s: done by %s (node %s), then delivered again to %v while its session lasted, and its consumer was told of no failed finish; it was told %.1500q",
						id, d.consumer, d.node, later, led.reports[d.consumer])
				}
				dupLeft++
			default:
				t.Errorf("item %s: delivery to %s still running (outcome %q), and delivered again", id, d.consumer, d.outcome)
			}
		}
		if len(ds) > 1 {
			dups++
		}
		if done > 0 {
			doneN++
		}
		if !led.putOK[id] && !led.putMaybe[id] {
			t.Errorf("item %s delivered, but no producer put it", id)
		}
	}
	if k := kills.Load(); k != 2 {
		t.Errorf("%d consumer kills, want 2 (did the mortal consumers get their items?)", k)
	}
	maybeIn := 0
	for id := range led.putMaybe {
		if len(led.deliveries[id]) > 0 {
			maybeIn++
		}
	}
	t.Logf("queue chaos: puts confirmed %d, indeterminate %d (of which delivered %d), failed %d; items done %d, deliveries %d; lost 0; "+
		"items delivered more than once %d (after a killed consumer %d, after a session loss mid-item %d, done but its session ended before the ack %d); consumer kills %d",
		len(led.putOK), len(led.putMaybe), maybeIn, led.putFailed, doneN, delivered, dups, dupKilled, dupAborted, dupLeft, kills.Load())
	ch.fmu.Lock()
	t.Logf("queue chaos: faults injected %v", ch.faults)
	ch.fmu.Unlock()
	if len(led.putOK) < 100 {
		t.Fatalf("only %d confirmed puts: no progress", len(led.putOK))
	}
}

// leftFor reports whether a consumer's error handler was told that the
// item node's finish failed or that it was left for redelivery.
func leftFor(reports []string, node string) bool {
	for _, r := range reports {
		if strings.Contains(r, "/"+node+":") && (strings.Contains(r, "left for redelivery") || strings.Contains(r, "finish")) {
			return true
		}
	}
	return false
}
