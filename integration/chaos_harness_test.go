package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
)

// The chaos suite runs recipe workers on a 3-node ensemble while a seeded
// schedule kills and restarts servers, expires sessions, and cuts, delays
// and resets client connections through fault proxies. Every hold is
// recorded with call and return times and checked with porcupine against a
// model of the recipe, a hold counting as ended when its Lost() fired.
//
// The servers grant a shorter session timeout (chaosMaxSession) than the
// clients ask for (testSessionTimeout), and half the clients use the
// session error policy, under which Lost() waits for Lost: a client that
// timed its loss from the requested timeout would keep trusting a hold the
// server has already given to another. Faults include lost replies (the
// server applies a request, the reply is dropped and the connection cut)
// and held replies.
//
// CHAOS_SEED and CHAOS_DURATION (a Go duration) override the defaults; the
// soak (make chaos) runs it longer.

// chaosMaxSession is the servers' maxSessionTimeout in the chaos suite:
// below testSessionTimeout, so every session is negotiated down.
const chaosMaxSession = 3 * time.Second

func chaosSeed() uint64 {
	if s, err := strconv.ParseUint(os.Getenv("CHAOS_SEED"), 10, 64); err == nil {
		return s
	}
	return 1
}

func chaosDuration(def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv("CHAOS_DURATION")); err == nil {
		return d
	}
	return def
}

// chaosClient is one client whose connections to every server go through
// its own fault proxies.
type chaosClient struct {
	id      int
	c       *framework.Client
	proxies map[string]*zktest.Proxy // server address → proxy

	mu        sync.Mutex
	expiredAt []time.Time // when the suite expired this client's session
}

// expiredDuring returns the earliest time the suite expired the client's
// session within [from, to], or the zero time.
func (cc *chaosClient) expiredDuring(from, to time.Time) time.Time {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for _, at := range cc.expiredAt {
		if !at.Before(from) && !at.After(to) {
			return at
		}
	}
	return time.Time{}
}

type chaos struct {
	t       *testing.T
	cluster *zktest.Cluster
	clients []*chaosClient
	start   time.Time
	faults  map[string]int
	fmu     sync.Mutex

	hmu   sync.Mutex
	holds []*holdRecord
	fence fencedResource
}

func newChaos(t *testing.T, nClients int) *chaos {
	t.Helper()
	cluster := zktest.StartEnsembleWith(t, zktest.Config{MaxSessionTimeout: chaosMaxSession})
	ch := &chaos{t: t, cluster: cluster, start: time.Now(), faults: map[string]int{}}
	for i := 0; i < nClients; i++ {
		cc := &chaosClient{id: i, proxies: map[string]*zktest.Proxy{}}
		for _, s := range cluster.Servers() {
			p, err := zktest.NewProxy(s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			cc.proxies[s.Addr()] = p
		}
		dial := func(network, addr string, timeout time.Duration) (net.Conn, error) {
			if p := cc.proxies[addr]; p != nil {
				addr = p.Addr()
			}
			return net.DialTimeout(network, addr, timeout)
		}
		b := builder(t, cluster.ConnectString()).Dialer(dial)
		if i%2 == 1 {
			b = b.ConnectionStateErrorPolicy(framework.SessionErrorPolicy)
		}
		cc.c = startClient(t, b)
		if got := cc.c.NegotiatedSessionTimeout(); got != chaosMaxSession {
			t.Fatalf("client %d: negotiated session timeout %v, want the servers' maximum %v", i, got, chaosMaxSession)
		}
		ch.clients = append(ch.clients, cc)
	}
	return ch
}

func (ch *chaos) count(fault string) {
	ch.fmu.Lock()
	ch.faults[fault]++
	ch.fmu.Unlock()
}

// injectFaults runs the seeded fault schedule until ctx ends. At most one
// server is down at a time, so the ensemble keeps its quorum.
func (ch *chaos) injectFaults(ctx context.Context, seed uint64, holding func(cc *chaosClient) bool) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	// pick prefers a client that holds something now: faults on holders are
	// the ones that test the Lost() signal and the fencing.
	pick := func() *chaosClient {
		for _, i := range rng.Perm(len(ch.clients)) {
			if holding(ch.clients[i]) {
				return ch.clients[i]
			}
		}
		return ch.clients[rng.IntN(len(ch.clients))]
	}
	for sleep(time.Duration(500+rng.IntN(1000)) * time.Millisecond) {
		switch f := rng.IntN(8); f {
		case 0, 1: // kill the leader, or a follower, and bring it back
			s, err := ch.cluster.Leader()
			name := "kill leader"
			if f == 1 || err != nil {
				s = ch.cluster.Servers()[rng.IntN(3)]
				name = "kill server"
			}
			if err := s.Kill(); err != nil {
				ch.t.Errorf("%s: %v", name, err)
				return
			}
			ch.count(name)
			sleep(time.Duration(300+rng.IntN(1200)) * time.Millisecond)
			if err := s.Start(); err != nil {
				ch.t.Errorf("restart %v: %v", s, err)
				return
			}
		case 2: // expire a holder's session
			cc := pick()
			cc.mu.Lock()
			cc.expiredAt = append(cc.expiredAt, time.Now())
			cc.mu.Unlock()
			ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if err := zktest.ExpireSession(ectx, ch.cluster.ConnectString(), cc.c.ZooKeeper()); err == nil {
				ch.count("expire session")
			}
			cancel()
		case 3: // cut a holder off past its session timeout
			cc := pick()
			for _, p := range cc.proxies {
				p.Pause()
			}
			ch.count("partition client")
			sleep(testSessionTimeout + time.Duration(rng.IntN(1000))*time.Millisecond)
			for _, p := range cc.proxies {
				p.Resume()
			}
		case 4: // a slow network for a while
			cc := ch.clients[rng.IntN(len(ch.clients))]
			for _, p := range cc.proxies {
				p.SetLatency(time.Duration(5+rng.IntN(40)) * time.Millisecond)
			}
			ch.count("delay client")
			sleep(time.Duration(500+rng.IntN(1500)) * time.Millisecond)
			for _, p := range cc.proxies {
				p.SetLatency(0)
			}
		case 5: // reset a holder's connections
			cc := pick()
			for _, p := range cc.proxies {
				p.Reset()
			}
			ch.count("reset client")
		case 6: // the server applies a holder's next request; its reply is lost
			cc := pick()
			for _, p := range cc.proxies {
				p.LoseNextReply()
			}
			ch.count("lose reply")
		case 7: // hold a holder's replies for a while, up to past its lease
			cc := pick()
			for _, p := range cc.proxies {
				p.HoldReplies()
			}
			ch.count("hold replies")
			sleep(time.Duration(500+rng.IntN(3000)) * time.Millisecond)
			for _, p := range cc.proxies {
				p.ReleaseReplies()
			}
		}
	}
}

// holdRecord is one acquisition: the kind of hold, its times, and what the
// fenced resource made of its writes.
type holdRecord struct {
	id      int
	client  *chaosClient
	kind    string // "write" (exclusive), "read" (shared), "lease"
	token   int64
	acqCall time.Time
	acqRet  time.Time
	relCall time.Time
	relRet  time.Time
	lostAt  atomic.Pointer[time.Time]
}

// record starts tracking a hold: a goroutine notes when lost closes, until
// the returned done function is called at release.
func (ch *chaos) record(cc *chaosClient, kind string, token int64, acqCall, acqRet time.Time,
	lost <-chan struct{}) (h *holdRecord, released func()) {
	ch.hmu.Lock()
	h = &holdRecord{id: len(ch.holds), client: cc, kind: kind, token: token, acqCall: acqCall, acqRet: acqRet}
	ch.holds = append(ch.holds, h)
	ch.hmu.Unlock()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-lost:
			now := time.Now()
			h.lostAt.Store(&now)
		case <-stop:
		}
	}()
	return h, func() { close(stop); <-done }
}

// fencedResource accepts a write only with a token at least as new as the
// newest it has seen, as a store guarded by fencing tokens would.
type fencedResource struct {
	mu       sync.Mutex
	newest   int64
	accepted int
	rejected int
}

func (r *fencedResource) write(token int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if token < r.newest {
		r.rejected++
		return false
	}
	r.newest = token
	r.accepted++
	return true
}

// ends returns the interval in which the hold ended: the Release call, or
// the moment Lost() fired if earlier. If the suite expired the holder's
// session during the hold, the server may have ended it any time after
// that, so the interval starts there.
func (h *holdRecord) ends() (from, to time.Time, lost bool) {
	from, to = h.relCall, h.relRet
	if l := h.lostAt.Load(); l != nil && l.Before(h.relRet) {
		lost = true
		if l.Before(h.relCall) {
			from, to = *l, *l
		}
	}
	if at := h.client.expiredDuring(h.acqRet, to); !at.IsZero() {
		from = at
	}
	return from, to, lost
}

type lockInput struct {
	acquire bool
	kind    string
}

// checkHistory checks the holds with porcupine against a model in which
// at most max "lease" holds, or one "write" and no "read", or any number of
// "read" holds exist at once.
func (ch *chaos) checkHistory(max int) (lostCount int) {
	ch.t.Helper()
	ch.hmu.Lock()
	defer ch.hmu.Unlock()
	ns := func(t time.Time) int64 { return t.Sub(ch.start).Nanoseconds() }
	var ops []porcupine.Operation
	for _, h := range ch.holds {
		from, to, lost := h.ends()
		if lost {
			lostCount++
		}
		ops = append(ops,
			porcupine.Operation{ClientId: h.client.id, Input: lockInput{true, h.kind}, Call: ns(h.acqCall), Return: ns(h.acqRet)},
			porcupine.Operation{ClientId: h.client.id, Input: lockInput{false, h.kind}, Call: ns(from), Return: ns(to)})
	}
	type state struct{ writers, readers, leases int }
	model := porcupine.Model{
		Init: func() any { return state{} },
		Step: func(s, in, _ any) (bool, any) {
			st, op := s.(state), in.(lockInput)
			d := -1
			if op.acquire {
				d = 1
			}
			switch op.kind {
			case "write":
				st.writers += d
			case "read":
				st.readers += d
			case "lease":
				st.leases += d
			}
			ok := st.writers >= 0 && st.readers >= 0 && st.leases >= 0 &&
				st.writers <= 1 && (st.writers == 0 || st.readers == 0) && st.leases <= max
			return ok, st
		},
		Equal: func(a, b any) bool { return a == b },
	}
	res := porcupine.CheckOperationsTimeout(model, ops, time.Minute)
	if res != porcupine.Ok {
		for _, h := range ch.holds {
			from, to, lost := h.ends()
			ch.t.Logf("hold %d client %d %s token %d: acquired [%v, %v], ended [%v, %v] lost=%v", h.id, h.client.id,
				h.kind, h.token, ns(h.acqCall)/1e6, ns(h.acqRet)/1e6, ns(from)/1e6, ns(to)/1e6, lost)
		}
		ch.t.Fatalf("porcupine: the history of %d holds is %v against the model", len(ch.holds), res)
	}
	return lostCount
}

// checkTokens checks that a hold that ended before another began has the
// smaller fencing token, for exclusive holds.
func (ch *chaos) checkTokens() {
	ch.t.Helper()
	ch.hmu.Lock()
	defer ch.hmu.Unlock()
	hs := append([]*holdRecord(nil), ch.holds...)
	sort.Slice(hs, func(i, j int) bool { return hs[i].acqRet.Before(hs[j].acqRet) })
	for i, a := range hs {
		_, aEnd, _ := a.ends()
		for _, b := range hs[i+1:] {
			if a.kind == "write" && b.kind == "write" && aEnd.Before(b.acqCall) && a.token >= b.token {
				ch.t.Fatalf("hold %d (token %d) ended before hold %d (token %d) began, but its token is not smaller",
					a.id, a.token, b.id, b.token)
			}
		}
	}
}

func (ch *chaos) report(acquired int, errs map[string]int, lost int) string {
	ch.fmu.Lock()
	defer ch.fmu.Unlock()
	faults := 0
	for _, n := range ch.faults {
		faults += n
	}
	return fmt.Sprintf("acquisitions %d, faults injected %d %v, Lost signals %d, fenced writes accepted %d, stale writes rejected %d, failed acquires %v",
		acquired, faults, ch.faults, lost, ch.fence.accepted, ch.fence.rejected, errs)
}
