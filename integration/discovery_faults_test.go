package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/discovery"
	"github.com/go-curator/curator/zktest"
)

// discoveryFaultSetup is a registering client with three instances, and
// caches of the service: one on the registering client (it loses its
// session with the registrations) and one on an observer client.
type discoveryFaultSetup struct {
	base       string
	owner      *framework.Client
	observer   *framework.Client
	d, od      *discovery.Discovery
	regs       []*discovery.Registration
	ownCache   *discovery.Cache
	otherCache *discovery.Cache
	events     discoveryEvents
}

func setupDiscoveryFault(t *testing.T, owner, observer *framework.Client) *discoveryFaultSetup {
	t.Helper()
	s := &discoveryFaultSetup{base: cachePath(t, observer), owner: owner, observer: observer}
	s.d = newDiscovery(t, owner, s.base)
	s.od = newDiscovery(t, observer, s.base)
	for i := range 3 {
		s.regs = append(s.regs, register(t, s.d, discovery.Instance{Name: "api", ID: fmt.Sprintf("i%d", i),
			Address: "127.0.0.1", Port: 7000 + i, Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}))
	}
	s.ownCache = startDiscoveryCache(t, s.d, "api")
	s.otherCache = startDiscoveryCache(t, s.od, "api")
	s.otherCache.AddListener(s.events.listen)
	s.check(t, "before the fault")
	return s
}

// check waits until the server holds exactly one node per registration,
// owned by the owner's current session, with the registration's data,
// and both caches equal the server.
func (s *discoveryFaultSetup) check(t *testing.T, when string) {
	t.Helper()
	until(t, 30*time.Second, when, func() string {
		if diff := registeredOnce(t.Context(), s.owner, s.observer, s.base, "api", s.regs); diff != "" {
			return diff
		}
		return cacheEqualsServer(t.Context(), s.od, "api", s.ownCache, s.otherCache)
	})
}

// update writes a new payload to every registration, while the client may
// have no session: it must reach the node when it is made again.
func (s *discoveryFaultSetup) update(t *testing.T, round int) {
	t.Helper()
	for i, r := range s.regs {
		in := r.Instance()
		in.Payload = json.RawMessage(fmt.Sprintf(`{"n":%d,"round":%d}`, i, round))
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		err := r.Update(ctx, in)
		cancel()
		if err != nil {
			t.Fatalf("Update %s: %v", r.Path(), err)
		}
	}
}

// lostRecorder waits for a client's Lost and the Reconnected after it.
type lostRecorder struct {
	mu     sync.Mutex
	states []framework.ConnectionState
}

func (r *lostRecorder) listen(s framework.ConnectionState) {
	r.mu.Lock()
	r.states = append(r.states, s)
	r.mu.Unlock()
}

func (r *lostRecorder) sawLost() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.states {
		if s == framework.Lost {
			return true
		}
	}
	return false
}

// TestDiscoveryFaults_SessionExpiry: the server expires the registering
// client's session. The instances are registered again on the new session
// (one node each, owned by it, with the data of an update made while the
// session was gone), and both caches, the registering client's own
// included, equal the server.
func TestDiscoveryFaults_SessionExpiry(t *testing.T) {
	s := setupDiscoveryFault(t, newClient(t), newClient(t))
	old := s.owner.SessionID()
	expire(t, s.owner)
	s.update(t, 1)
	s.check(t, "after the expiry")
	if s.owner.SessionID() == old {
		t.Errorf("the client kept session %#x across its expiry", old)
	}
	s.events.waitFor(t, "NODE_REMOVED i0", "NODE_ADDED i0")
}

// TestDiscoveryFaults_CutPastSessionTimeout: the registering client's
// connection is cut (refused and reset by a proxy) until the client
// declares its session Lost. The server still keeps that session's nodes
// for a while after the client gave up on them; when the connection
// returns, each registration ends as one node owned by the new session,
// and both caches equal the server.
func TestDiscoveryFaults_CutPastSessionTimeout(t *testing.T) {
	proxy := fwProxy(t, fwShared(t))
	var rec lostRecorder
	owner := startClient(t, builder(t, proxy.Addr()).Listener(rec.listen))
	s := setupDiscoveryFault(t, owner, newClient(t))
	old := owner.SessionID()

	proxy.Refuse(true)
	proxy.Reset()
	eventually(t, 30*time.Second, rec.sawLost, "the client declares its session lost")
	s.update(t, 1)
	proxy.Refuse(false)
	s.check(t, "after the cut")
	if owner.SessionID() == old {
		t.Errorf("the client kept session %#x across a cut past its timeout", old)
	}
}

// TestDiscoveryFaults_ServerRestart: the only server is stopped and
// started again. Whether or not the session survives, each registration
// ends as one node owned by the client's current session, and both caches
// equal the server.
func TestDiscoveryFaults_ServerRestart(t *testing.T) {
	cluster := zktest.Start(t)
	srv := fwServer(t, cluster)
	owner := startClient(t, builder(t, cluster.ConnectString()))
	observer := startClient(t, builder(t, cluster.ConnectString()).SessionTimeout(20*time.Second))
	s := setupDiscoveryFault(t, owner, observer)

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	s.update(t, 1)
	s.check(t, "after the restart")

	// And once more with a kill, down past the registering session's timeout.
	var rec lostRecorder
	remove := owner.AddListener(rec.listen)
	defer remove()
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, rec.sawLost, "the client declares its session lost")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	s.update(t, 2)
	s.check(t, "after a kill past the session timeout")
}

// TestDiscoveryFaults_DeletedInstanceComesBack: another client deletes a
// registered instance's node (an operator's mistake, or a cleanup script).
// The registration makes it again with its latest data, and both caches
// see it leave and come back and end equal to the server.
func TestDiscoveryFaults_DeletedInstanceComesBack(t *testing.T) {
	s := setupDiscoveryFault(t, newClient(t), newClient(t))
	if err := s.observer.Delete().ForPath(t.Context(), s.regs[1].Path()); err != nil {
		t.Fatal(err)
	}
	s.events.waitFor(t, "NODE_REMOVED i1", "NODE_ADDED i1")
	s.check(t, "after the delete")
}
