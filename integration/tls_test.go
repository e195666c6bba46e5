package integration

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
)

// Issue 19: TLS to a real ZooKeeper 3.8 on its secureClientPort (Netty),
// with certificates made in the test (PEM stores: no keytool).

// tlsPKI is the certificates of the TLS tests: a CA for the server, one for
// the clients, and one nobody trusts.
type tlsPKI struct {
	serverCA, clientCA, strangerCA *zktest.CA
	serverCert, serverKey          []byte
	client                         tls.Certificate // issued by clientCA
	stranger                       tls.Certificate // issued by strangerCA
}

func newPKI(t *testing.T) *tlsPKI {
	t.Helper()
	var p tlsPKI
	var err error
	for _, ca := range []**zktest.CA{&p.serverCA, &p.clientCA, &p.strangerCA} {
		if *ca, err = zktest.NewCA("zktest CA"); err != nil {
			t.Fatal(err)
		}
	}
	if p.serverCert, p.serverKey, err = p.serverCA.Issue("zookeeper", "127.0.0.1", "localhost"); err != nil {
		t.Fatal(err)
	}
	pair := func(ca *zktest.CA, name string) tls.Certificate {
		certPEM, keyPEM, err := ca.Issue(name, "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	p.client = pair(p.clientCA, "billing")
	p.stranger = pair(p.strangerCA, "stranger")
	return &p
}

// startTLSServer starts a server that serves TLS with p's server
// certificate, and asks clients for certificates as clientAuth says.
func startTLSServer(t *testing.T, p *tlsPKI, clientAuth string) *zktest.Cluster {
	t.Helper()
	cfg := &zktest.TLS{CertPEM: p.serverCert, KeyPEM: p.serverKey, ClientAuth: clientAuth}
	if clientAuth != "none" {
		cfg.ClientCAPEM = p.clientCA.CertPEM
	}
	srv := zktest.StartWith(t, zktest.Config{TLS: cfg})
	if srv.SecureConnectString() == "" {
		t.Fatal("the server has no TLS client port")
	}
	return srv
}

// tlsBuilder is a test client builder for connect, with TLS as cfg says.
func tlsBuilder(t *testing.T, connect string, cfg *tls.Config) *framework.Builder {
	t.Helper()
	return builder(t, connect).TLSConfig(cfg).ConnectionTimeout(2 * time.Second)
}

// useClient checks that c works: a create, a read and a mutex.
func useClient(t *testing.T, c *framework.Client, base string) {
	t.Helper()
	ctx := t.Context()
	if _, err := c.Create().CreatingParentContainersIfNeeded().ForPath(ctx, base+"/n", []byte("over TLS")); err != nil {
		t.Fatalf("create over TLS: %v", err)
	}
	if data, _, err := c.GetData().ForPath(ctx, base+"/n"); err != nil || string(data) != "over TLS" {
		t.Fatalf("read over TLS: %q, %v", data, err)
	}
	h, err := newMutex(t, c, base+"/lock").Acquire(ctx)
	if err != nil {
		t.Fatalf("mutex over TLS: %v", err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, base); err != nil { // a container: the server may reap it first
		t.Fatal(err)
	}
}

// assertStartFails checks that a client built by b fails to start with an
// error matching ErrTLSHandshake that says what is wrong, within the ctx.
func assertStartFails(t *testing.T, b *framework.Builder, says string) error {
	t.Helper()
	c, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close() // a no-op after a failed Start
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err = c.Start(ctx)
	if !errors.Is(err, framework.ErrTLSHandshake) || ctx.Err() != nil {
		t.Fatalf("Start = %v; want ErrTLSHandshake before the ctx ends", err)
	}
	t.Logf("Start: %v", err)
	if msg := err.Error(); !strings.Contains(msg, says) || strings.Count(msg, "framework:") != 1 {
		t.Errorf("Start error %q should say %q, with one framework: prefix", msg, says)
	}
	if s := c.State(); s != framework.Closed {
		t.Errorf("state after a failed Start = %v; want CLOSED", s)
	}
	return err
}

func TestTLS_ServerCertificate(t *testing.T) {
	securityNoLeaks(t)
	p := newPKI(t)
	srv := startTLSServer(t, p, "none")
	base := testPath(t)

	// The server's IP address SAN, through a Dialer of the test's own: TLS
	// runs over the connection the Dialer returns.
	var dials atomic.Int32
	c := startClient(t, tlsBuilder(t, srv.SecureConnectString(), &tls.Config{RootCAs: p.serverCA.Pool()}).
		Dialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
			dials.Add(1)
			return net.DialTimeout(network, addr, timeout)
		}))
	useClient(t, c, base)
	if dials.Load() == 0 {
		t.Error("the Dialer was not used under TLS")
	}

	// A host name: the client checks it against the certificate's DNS SAN.
	port := srv.Servers()[0].SecureAddr()[strings.LastIndexByte(srv.Servers()[0].SecureAddr(), ':')+1:]
	named := startClient(t, tlsBuilder(t, "localhost:"+port, &tls.Config{RootCAs: p.serverCA.Pool()}))
	useClient(t, named, base)

	// A server certificate from a CA the client does not trust.
	err := assertStartFails(t, tlsBuilder(t, srv.SecureConnectString(), &tls.Config{RootCAs: p.strangerCA.Pool()}), "certificate")
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("wrong CA: %v should wrap x509.UnknownAuthorityError", err)
	}
	// A name the certificate does not hold.
	assertStartFails(t, tlsBuilder(t, srv.SecureConnectString(), &tls.Config{RootCAs: p.serverCA.Pool(), ServerName: "zk.example.com"}), "certificate")
	// TLS to the plain port.
	assertStartFails(t, tlsBuilder(t, srv.ConnectString(), &tls.Config{RootCAs: p.serverCA.Pool()}), "TLS")

	// Nothing was left by the clients that did not start.
	plain := startClient(t, builder(t, srv.ConnectString()))
	if stat, err := plain.CheckExists().ForPath(t.Context(), base); err != nil || stat != nil {
		t.Errorf("%s after the failed starts: %v, %v; want no node", base, stat, err)
	}
}

func TestTLS_ClientCertificateRequired(t *testing.T) {
	securityNoLeaks(t)
	p := newPKI(t)
	srv := startTLSServer(t, p, "need")
	base := testPath(t)
	roots := p.serverCA.Pool()

	c := startClient(t, tlsBuilder(t, srv.SecureConnectString(), &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{p.client}}))
	useClient(t, c, base)

	// No client certificate, and one from a CA the server does not trust.
	assertStartFails(t, tlsBuilder(t, srv.SecureConnectString(), &tls.Config{RootCAs: roots}), "certificate")
	assertStartFails(t, tlsBuilder(t, srv.SecureConnectString(), &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{p.stranger}}), "certificate")

	plain := startClient(t, builder(t, srv.ConnectString()))
	if stat, err := plain.CheckExists().ForPath(t.Context(), base); err != nil || stat != nil {
		t.Errorf("%s after the failed starts: %v, %v; want no node", base, stat, err)
	}
}

// Everything at once, across a server restart: TLS, digest credentials, a
// creator-only ACL and a chroot. The client reconnects over TLS and sends its
// credentials again before its requests.
func TestTLS_WithAuthAndChrootAcrossRestart(t *testing.T) {
	securityNoLeaks(t)
	p := newPKI(t)
	srv := startTLSServer(t, p, "need")
	ctx := t.Context()
	plain := startClient(t, builder(t, srv.ConnectString()))
	if _, err := plain.Create().ForPath(ctx, "/services", nil); err != nil {
		t.Fatal(err)
	}
	var log secStates
	c := startClient(t, tlsBuilder(t, srv.SecureConnectString()+"/services", &tls.Config{RootCAs: p.serverCA.Pool(), Certificates: []tls.Certificate{p.client}}).
		SessionTimeout(20*time.Second).
		Authorization("digest", []byte("billing:pw")).
		ACLProvider(creatorOnly{}).
		Listener(log.listen))
	m := newMutex(t, c, "/locks/stock")
	round := func(name string) {
		t.Helper()
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		h, err := m.Acquire(actx)
		if err != nil {
			t.Fatalf("%s: acquire: %v", name, err)
		}
		if !strings.HasPrefix(h.Node(), "/locks/stock/_c_") {
			t.Errorf("%s: lock node %q; want it relative to the chroot", name, h.Node())
		}
		assertOwnerACL(t, c, "/services"+h.Node(), "billing:pw") // ZooKeeper() sees the whole tree
		assertLockedOut(t, plain, "/services"+h.Node())
		if err := h.Release(actx); err != nil {
			t.Fatalf("%s: release: %v", name, err)
		}
	}
	round("before the restart")
	n := log.len()
	s := srv.Servers()[0]
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() bool { return log.seen(n, framework.Reconnected) }, "Reconnected after the server restart")
	round("after the restart")
}
