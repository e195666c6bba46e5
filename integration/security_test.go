package integration

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"
)

// Issue 19: digest authentication re-applied on every session, and an ACL
// provider used by every create the client and the recipes make.

// securityNoLeaks checks that the test leaves no goroutine behind, after
// every cleanup registered later (clients, proxies, servers).
func securityNoLeaks(t *testing.T) {
	t.Helper()
	zktest.Shared(t)
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
}

// creatorOnly is an ACLProvider as a service would write one: the creator
// (the authenticated identities of its session, ZooKeeper's "auth" scheme)
// may do everything, anyone may read.
type creatorOnly struct{}

func (creatorOnly) DefaultACL() []zk.ACL { return nil }
func (creatorOnly) ForPath(string) []zk.ACL {
	return append(zk.AuthACL(zk.PermAll), zk.WorldACL(zk.PermRead)...)
}

// secStates records a client's states for the tests to wait on.
type secStates struct {
	mu     sync.Mutex
	states []framework.ConnectionState
}

func (l *secStates) listen(s framework.ConnectionState) {
	l.mu.Lock()
	l.states = append(l.states, s)
	l.mu.Unlock()
}

// seen reports whether want came after the first n states.
func (l *secStates) seen(n int, want framework.ConnectionState) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.states[min(n, len(l.states)):] {
		if s == want {
			return true
		}
	}
	return false
}

func (l *secStates) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.states)
}

// digestID is the id a digest ACL names for user:password.
func digestID(userPassword string) string {
	user, _, _ := strings.Cut(userPassword, ":")
	sum := sha1.Sum([]byte(userPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// assertLockedOut checks that a client without the owner's credentials can
// read node (world:anyone may read) but cannot delete it, overwrite it, or
// create a node beside it.
func assertLockedOut(t *testing.T, intruder *framework.Client, node string) {
	t.Helper()
	ctx := t.Context()
	if _, _, err := intruder.GetData().ForPath(ctx, node); err != nil {
		t.Fatalf("read %s without credentials: %v (world may read)", node, err)
	}
	if err := intruder.Delete().ForPath(ctx, node); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("delete %s without the owner's credentials: %v; want zk.ErrNoAuth", node, err)
	}
	if _, err := intruder.SetData().ForPath(ctx, node, []byte("mine")); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("overwrite %s without the owner's credentials: %v; want zk.ErrNoAuth", node, err)
	}
	parent, _ := framework.SplitPath(node)
	if _, err := intruder.Create().WithMode(framework.EphemeralSequential).ForPath(ctx, parent+"/_c_x-lock-", nil); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("create beside %s without the owner's credentials: %v; want zk.ErrNoAuth", node, err)
	}
}

// assertOwnerACL checks that node's ACL names the owner's digest identity
// with every permission, world with read only, and nobody else but the
// owner's other identities (an x509 one over TLS with a client
// certificate). owner must be allowed ADMIN on node: ZooKeeper 3.8 masks
// digest passwords in the ACL it shows to others.
func assertOwnerACL(t *testing.T, owner *framework.Client, node, userPassword string) {
	t.Helper()
	acl, _, err := owner.ZooKeeper().GetACL(node)
	if err != nil {
		t.Fatalf("get ACL of %s: %v", node, err)
	}
	want := map[zk.ACL]bool{
		{Perms: zk.PermAll, Scheme: "digest", ID: digestID(userPassword)}: true,
		{Perms: zk.PermRead, Scheme: "world", ID: "anyone"}:               true,
	}
	found := 0
	for _, a := range acl {
		switch {
		case want[a]:
			found++
		case a.Scheme == "world" || a.Scheme == "digest" || a.Perms != zk.PermAll:
			t.Fatalf("ACL of %s = %v: %v is not the owner's; want %v", node, acl, a, want)
		}
	}
	if found != len(want) {
		t.Fatalf("ACL of %s = %v; want %v", node, acl, want)
	}
}

func TestSecurity_DigestACLProtectsMutexAcrossSessions(t *testing.T) {
	securityNoLeaks(t)
	srv := zktest.Shared(t)
	const cred = "billing:s3cret"
	proxy, err := zktest.NewProxy(srv.ConnectString())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	var log secStates
	owner := startClient(t, builder(t, proxy.Addr()).
		Authorization("digest", []byte(cred)).
		ACLProvider(creatorOnly{}).
		Listener(log.listen))
	intruder := startClient(t, builder(t, srv.ConnectString()))
	wrongPassword := startClient(t, builder(t, srv.ConnectString()).Authorization("digest", []byte("billing:guess")))
	// A top-level path: the parents get the owner's ACL, and a shared parent
	// such as /it would lock the other tests out.
	base := "/" + unsafeChars.ReplaceAllString(t.Name(), "_")
	m := newMutex(t, owner, base+"/lock")

	// acquire runs one acquire and release of the owner's mutex, checking
	// on the way that the lock node and its parent carry the owner's ACL
	// and that the others are locked out of them.
	acquire := func(round string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		h, err := m.Acquire(ctx)
		if err != nil {
			t.Fatalf("%s: owner acquire: %v", round, err)
		}
		assertOwnerACL(t, owner, h.Node(), cred)
		assertOwnerACL(t, owner, base+"/lock", cred)
		assertLockedOut(t, intruder, h.Node())
		assertLockedOut(t, wrongPassword, h.Node())
		if ok, err := owner.CheckExists().ForPath(ctx, h.Node()); err != nil || ok == nil {
			t.Fatalf("%s: the lock node %s is gone after the others' attempts: %v, %v", round, h.Node(), ok, err)
		}
		if err := h.Release(ctx); err != nil {
			t.Fatalf("%s: owner release: %v", round, err)
		}
	}
	acquire("first session")

	// The server expires the session: go-zookeeper opens the next one.
	n := log.len()
	if err := zktest.ExpireSession(t.Context(), srv.ConnectString(), owner.ZooKeeper()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() bool { return log.seen(n, framework.Lost) && log.seen(n, framework.Reconnected) },
		"Lost and Reconnected after the server expired the session")
	acquire("after the server expired the session")

	// The client's own lease runs out (the network is silent past the
	// session timeout): the client abandons the session and opens a new
	// go-zookeeper connection, which must authenticate too.
	n = log.len()
	old := owner.SessionID()
	proxy.Pause()
	eventually(t, 20*time.Second, func() bool { return log.seen(n, framework.Lost) }, "Lost while the network is silent")
	proxy.Resume()
	eventually(t, 20*time.Second, func() bool { return log.seen(n, framework.Reconnected) && owner.SessionID() != old },
		"Reconnected on a new session after the client's simulated expiry")
	acquire("after the client's simulated expiry")
}

// A super user (the server's DigestAuthenticationProvider.superDigest) is
// the admin who may still delete a stuck holder's node.
func TestSecurity_SuperUserCanDeleteLockNode(t *testing.T) {
	securityNoLeaks(t)
	const super = "super:admin-pw"
	srv := zktest.StartWith(t, zktest.Config{
		ExtraConfig: "DigestAuthenticationProvider.superDigest=" + digestID(super) + "\n",
	})
	owner := startClient(t, builder(t, srv.ConnectString()).
		Authorization("digest", []byte("svc:pw")).
		ACL(zk.AuthACL(zk.PermAll)...))
	admin := startClient(t, builder(t, srv.ConnectString()).Authorization("digest", []byte(super)))
	intruder := startClient(t, builder(t, srv.ConnectString()))
	m := newMutex(t, owner, "/locks/stuck")
	h, err := m.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := intruder.Delete().ForPath(t.Context(), h.Node()); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("delete without credentials: %v; want zk.ErrNoAuth", err)
	}
	if err := admin.Delete().ForPath(t.Context(), h.Node()); err != nil {
		t.Fatalf("the super user's delete: %v", err)
	}
	if stat, err := admin.CheckExists().ForPath(t.Context(), h.Node()); err != nil || stat != nil {
		t.Fatalf("the lock node after the super user's delete: %v, %v; want it gone", stat, err)
	}
}

func TestSecurity_RejectedCredentialsFailStart(t *testing.T) {
	securityNoLeaks(t)
	srv := zktest.Shared(t)
	c, err := builder(t, srv.ConnectString()).
		Authorization("digest", []byte("svc:pw")).
		Authorization("no-such-scheme", []byte("x")).
		Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err = c.Start(ctx)
	if !errors.Is(err, framework.ErrAuthFailed) || !errors.Is(err, zk.ErrAuthFailed) || ctx.Err() != nil {
		t.Fatalf("Start with credentials the server rejects = %v; want ErrAuthFailed, before the ctx ends", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `"no-such-scheme"`) || strings.Count(msg, "framework:") != 1 {
		t.Errorf("error %q should name the scheme and carry one framework: prefix", msg)
	}
	if s := c.State(); s != framework.Closed {
		t.Errorf("state after a failed Start = %v; want CLOSED", s)
	}
}

func TestSecurity_BadInput(t *testing.T) {
	securityNoLeaks(t)
	ok := func() *framework.Builder { return framework.NewBuilder().ConnectString("127.0.0.1:2181") }
	for name, b := range map[string]*framework.Builder{
		"empty scheme":            ok().Authorization("", []byte("a:b")),
		"scheme with a space":     ok().Authorization("di gest", []byte("a:b")),
		"digest without password": ok().Authorization("digest", []byte("user")),
		"digest without user":     ok().Authorization("digest", []byte(":pw")),
		"digest nil":              ok().Authorization("digest", nil),
		"second one bad":          ok().Authorization("digest", []byte("a:b")).Authorization("", nil),
		"ACL with empty scheme":   ok().ACL(zk.ACL{Perms: zk.PermAll}),
		"ACL with bad perms":      ok().ACL(zk.ACL{Perms: 0x40, Scheme: "world", ID: "anyone"}),
	} {
		c, err := b.Build()
		if !errors.Is(err, framework.ErrInvalidArgument) || c != nil {
			t.Errorf("%s: Build = %v, %v; want ErrInvalidArgument", name, c, err)
			continue
		}
		if strings.Count(err.Error(), "framework:") != 1 {
			t.Errorf("%s: %q should carry one framework: prefix", name, err)
		}
	}
	// nil restores the defaults.
	if _, err := ok().ACLProvider(nil).TLSConfig(nil).Build(); err != nil {
		t.Errorf("ACLProvider(nil).TLSConfig(nil): %v; want the defaults", err)
	}
	// A zero or nil client has no provider, and does not panic.
	var nilClient *framework.Client
	if nilClient.ACLProvider() != nil || nilClient.Chroot() != "" {
		t.Error("a nil client should have no ACL provider and no chroot")
	}
}

// recordingACLs gives the nodes under /secret an ACL of their own and
// records the paths it is asked about.
type recordingACLs struct {
	mu    sync.Mutex
	asked []string
}

func (r *recordingACLs) DefaultACL() []zk.ACL {
	return zk.WorldACL(zk.PermRead | zk.PermCreate | zk.PermDelete)
}
func (r *recordingACLs) ForPath(p string) []zk.ACL {
	r.mu.Lock()
	r.asked = append(r.asked, p)
	r.mu.Unlock()
	if strings.HasPrefix(p, "/app/secret") {
		return zk.WorldACL(zk.PermRead | zk.PermCreate | zk.PermDelete | zk.PermAdmin)
	}
	return nil // the default
}

func (r *recordingACLs) wasAsked(p string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.asked {
		if a == p {
			return true
		}
	}
	return false
}

// Every create the client makes asks the provider, with the path below the
// chroot (namespace included), as Curator's ACLProvider is asked: the
// namespace node, parents, the node, a transaction's creates.
func TestSecurity_ACLProviderForEveryCreate(t *testing.T) {
	securityNoLeaks(t)
	srv := zktest.Shared(t)
	ctx := t.Context()
	admin := newClient(t)
	root := "/" + unsafeChars.ReplaceAllString(t.Name(), "_")
	if _, err := admin.Create().ForPath(ctx, root, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // t.Context() has ended by now
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := admin.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, root); err != nil {
			t.Errorf("delete %s: %v", root, err)
		}
	})
	acls := &recordingACLs{}
	c := startClient(t, builder(t, srv.ConnectString()+root).Namespace("app").ACLProvider(acls))
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(ctx, "/secret/a/b", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create().ForPath(ctx, "/open", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Transaction().Create("/secret/tx", nil, framework.Persistent).Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/app", "/app/secret", "/app/secret/a", "/app/secret/a/b", "/app/open", "/app/secret/tx"} {
		if !acls.wasAsked(p) {
			t.Errorf("the provider was not asked about %s (asked: %q)", p, acls.asked)
		}
	}
	want := map[string]int32{
		"/app":            zk.PermRead | zk.PermCreate | zk.PermDelete, // the default
		"/app/open":       zk.PermRead | zk.PermCreate | zk.PermDelete,
		"/app/secret":     zk.PermRead | zk.PermCreate | zk.PermDelete | zk.PermAdmin,
		"/app/secret/a/b": zk.PermRead | zk.PermCreate | zk.PermDelete | zk.PermAdmin,
		"/app/secret/tx":  zk.PermRead | zk.PermCreate | zk.PermDelete | zk.PermAdmin,
	}
	for p, perms := range want {
		acl, _, err := admin.ZooKeeper().GetACL(root + p)
		if err != nil || len(acl) != 1 || acl[0].Perms != perms {
			t.Errorf("ACL of %s%s = %v, %v; want world:anyone with %#x", root, p, acl, err, perms)
		}
	}
	// No write permission: the ACL is enforced.
	if _, err := c.SetData().ForPath(ctx, "/open", []byte("x")); !errors.Is(err, zk.ErrNoAuth) {
		t.Errorf("write to a node whose ACL has no write permission: %v; want zk.ErrNoAuth", err)
	}
	// WithACL wins over the provider.
	if _, err := c.Create().WithACL(zk.WorldACL(zk.PermAll)...).ForPath(ctx, "/explicit", nil); err != nil {
		t.Fatal(err)
	}
	if acls.wasAsked("/app/explicit") {
		t.Error("the provider was asked about a create WithACL")
	}
}
