package zktest

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// TLS makes each local server of a Config also serve clients over TLS, on a
// second port, its secureClientPort ([Cluster.SecureConnectString],
// [Server.SecureAddr]), beside the plain client port, which the harness
// keeps for its own checks. The servers then run Netty's connection
// factory (serverCnxnFactory=NettyServerCnxnFactory, whose jars Debian's
// package has), and read their key and certificates as PEM files
// (ssl.keyStore.type=PEM, ZooKeeper 3.6 and later): no keytool needed. [CA]
// makes the certificates.
type TLS struct {
	// CertPEM is the servers' certificate chain and KeyPEM its private key
	// (PKCS #8), both PEM-encoded, as [CA.Issue] returns them. Required.
	CertPEM, KeyPEM []byte
	// ClientCAPEM holds the PEM certificates of the CAs whose client
	// certificates the servers accept (ssl.trustStore). Required when
	// ClientAuth is "need" or "want".
	ClientCAPEM []byte
	// ClientAuth is ZooKeeper's ssl.clientAuth: "need" (a client must show
	// a certificate from ClientCAPEM), "want", or "none". Empty means
	// "none" here (ZooKeeper's own default is "need").
	ClientAuth string
}

// check returns what is wrong with t.
func (t *TLS) check() error {
	if t == nil {
		return nil
	}
	if len(t.CertPEM) == 0 || len(t.KeyPEM) == 0 {
		return errors.New("zktest: Config.TLS needs CertPEM and KeyPEM (see CA.Issue)")
	}
	if _, err := tls.X509KeyPair(t.CertPEM, t.KeyPEM); err != nil {
		return fmt.Errorf("zktest: Config.TLS: CertPEM and KeyPEM are not a certificate and its key: %w", err)
	}
	switch t.ClientAuth {
	case "", "none":
	case "need", "want":
		if len(t.ClientCAPEM) == 0 {
			return fmt.Errorf("zktest: Config.TLS: ClientAuth %q needs ClientCAPEM", t.ClientAuth)
		}
	default:
		return fmt.Errorf("zktest: Config.TLS: ClientAuth %q is not need, want or none", t.ClientAuth)
	}
	if len(t.ClientCAPEM) > 0 && !x509.NewCertPool().AppendCertsFromPEM(t.ClientCAPEM) {
		return errors.New("zktest: Config.TLS: ClientCAPEM holds no PEM certificate")
	}
	return nil
}

// zooCfg writes t's PEM files into dir and returns the zoo.cfg lines that
// serve TLS on port.
func (t *TLS) zooCfg(dir string, port int) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("zktest: %w", err)
	}
	keyStore := filepath.Join(dir, "server.pem")
	pemKeyStore := append(append(append([]byte(nil), t.KeyPEM...), '\n'), t.CertPEM...)
	if err := os.WriteFile(keyStore, pemKeyStore, 0o600); err != nil {
		return "", fmt.Errorf("zktest: %w", err)
	}
	clientAuth := t.ClientAuth
	if clientAuth == "" {
		clientAuth = "none"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n")
	fmt.Fprintf(&b, "secureClientPort=%d\nsecureClientPortAddress=127.0.0.1\n", port)
	fmt.Fprintf(&b, "ssl.keyStore.location=%s\nssl.keyStore.type=PEM\n", keyStore)
	fmt.Fprintf(&b, "ssl.clientAuth=%s\n", clientAuth)
	if len(t.ClientCAPEM) > 0 {
		trustStore := filepath.Join(dir, "client-ca.pem")
		if err := os.WriteFile(trustStore, t.ClientCAPEM, 0o600); err != nil {
			return "", fmt.Errorf("zktest: %w", err)
		}
		fmt.Fprintf(&b, "ssl.trustStore.location=%s\nssl.trustStore.type=PEM\n", trustStore)
	}
	return b.String(), nil
}

// CA is a certificate authority for tests: it issues server and client
// certificates for TLS between clients and local servers.
type CA struct {
	cert *x509.Certificate
	key  crypto.Signer
	// CertPEM is the CA's certificate, PEM-encoded: what a client or a
	// server that trusts this CA is given.
	CertPEM []byte
}

// NewCA returns a new self-signed CA named name, valid for a day.
func NewCA(name string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("zktest: CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"zktest"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("zktest: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("zktest: CA certificate: %w", err)
	}
	return &CA{cert: cert, key: key, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Pool returns a pool that holds the CA's certificate, for
// tls.Config.RootCAs (a client that trusts the CA).
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Issue returns a certificate signed by the CA, for a server or a client,
// and its private key (PKCS #8), both PEM-encoded; tls.X509KeyPair turns
// them into a client's tls.Certificate, and [TLS] takes them for a server.
// hosts are the DNS names and IP addresses it is valid for; the servers'
// need "127.0.0.1" (and "localhost", for a connect string that says so).
func (ca *CA) Issue(name string, hosts ...string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("zktest: key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name, Organization: []string{"zktest"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("zktest: certificate: %w", err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("zktest: key: %w", err)
	}
	var chain bytes.Buffer
	pem.Encode(&chain, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	return chain.Bytes(), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), nil
}

// serial returns a random certificate serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// SecureConnectString returns the servers' TLS client addresses,
// "127.0.0.1:p1,127.0.0.1:p2,...", or "" for a Cluster started without
// Config.TLS.
func (c *Cluster) SecureConnectString() string { return c.secureConnect }

// SecureAddr returns the server's TLS client address, "127.0.0.1:port", or
// "" for a server started without Config.TLS.
func (s *Server) SecureAddr() string { return s.secureAddr }

// waitListening waits until every address of addrs accepts TCP
// connections, or ctx ends.
func waitListening(ctx context.Context, addrs []string) error {
	var d net.Dialer
	for _, addr := range addrs {
		for {
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err == nil {
				conn.Close()
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("zktest: the TLS client port %s does not accept connections: %w", addr, err)
			case <-time.After(pollInterval):
			}
		}
	}
	return nil
}
