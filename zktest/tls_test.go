package zktest

import (
	"strings"
	"testing"
)

func TestConfig_TLSIsChecked(t *testing.T) {
	ca, err := NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.Issue("server", "127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	other, otherKey, err := ca.Issue("other", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		tls  *TLS
		want string // "" for no error
	}{
		"server only":          {&TLS{CertPEM: cert, KeyPEM: key}, ""},
		"client certificates":  {&TLS{CertPEM: cert, KeyPEM: key, ClientCAPEM: ca.CertPEM, ClientAuth: "need"}, ""},
		"no certificate":       {&TLS{KeyPEM: key}, "needs CertPEM and KeyPEM"},
		"key of another cert":  {&TLS{CertPEM: cert, KeyPEM: otherKey}, "not a certificate and its key"},
		"need without CAs":     {&TLS{CertPEM: other, KeyPEM: otherKey, ClientAuth: "need"}, "needs ClientCAPEM"},
		"unknown client auth":  {&TLS{CertPEM: cert, KeyPEM: key, ClientAuth: "maybe"}, "not need, want or none"},
		"CAs that are not PEM": {&TLS{CertPEM: cert, KeyPEM: key, ClientCAPEM: []byte("x"), ClientAuth: "want"}, "no PEM certificate"},
	} {
		_, err := Config{TLS: tc.tls}.zooCfg()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v; want an error saying %q", name, err, tc.want)
		}
	}
}

func TestTLS_ZooCfgServesTLS(t *testing.T) {
	ca, err := NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.Issue("server", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := (&TLS{CertPEM: cert, KeyPEM: key, ClientCAPEM: ca.CertPEM, ClientAuth: "need"}).zooCfg(t.TempDir(), 2281)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
		"secureClientPort=2281", "ssl.keyStore.type=PEM", "ssl.trustStore.type=PEM", "ssl.clientAuth=need",
	} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("zoo.cfg lines %q lack %q", got, line)
		}
	}
}
