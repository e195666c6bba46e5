package framework

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-curator/curator/retry"
)

func TestParseConnectString(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"127.0.0.1:2181", []string{"127.0.0.1:2181"}},
		{"localhost", []string{"localhost:2181"}},
		{"a:1,b:2,c", []string{"a:1", "b:2", "c:2181"}},
		{" a:1 , b:2 ", []string{"a:1", "b:2"}},
		{"[::1]:2181", []string{"[::1]:2181"}},
		{"zk.example.com:65535", []string{"zk.example.com:65535"}},
		{"a:1/", []string{"a:1"}},
	} {
		got, chroot, err := parseConnectString(tc.in)
		if err != nil || !slices.Equal(got, tc.want) || chroot != "" {
			t.Errorf("parseConnectString(%q) = %q, %q, %v; want %q and no chroot", tc.in, got, chroot, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in     string
		want   []string
		chroot string
	}{
		{"a:1/services", []string{"a:1"}, "/services"},
		{"a:1,b:2/app/prod", []string{"a:1", "b:2"}, "/app/prod"},
		{"a,b:2/x", []string{"a:2181", "b:2"}, "/x"},
	} {
		got, chroot, err := parseConnectString(tc.in)
		if err != nil || !slices.Equal(got, tc.want) || chroot != tc.chroot {
			t.Errorf("parseConnectString(%q) = %q, %q, %v; want %q, %q", tc.in, got, chroot, err, tc.want, tc.chroot)
		}
	}

	for _, in := range []string{
		"", "   ", ",", "a:1,", ",a:1", "a:1,,b:2", // empty entries
		"a:1/chroot/", "a:1/app,b:2", "a:1//x", "a:1/a/../b", "/x", // bad chroot suffixes
		"::1", "a:b:c", // bad host:port
		"a:", "a:port", "a:0", "a:-1", "a:65536", "a:99999999999", // bad ports
		":2181", // no host
	} {
		if got, _, err := parseConnectString(in); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("parseConnectString(%q) = %q, %v; want ErrInvalidArgument", in, got, err)
		}
	}
}

func TestBuildValidates(t *testing.T) {
	ok := func() *Builder { return NewBuilder().ConnectString("127.0.0.1:2181") }
	for _, tc := range []struct {
		name string
		b    *Builder
		want error
	}{
		{"no connect string", NewBuilder(), ErrInvalidArgument},
		{"bad connect string", NewBuilder().ConnectString("a:1/x/"), ErrInvalidArgument},
		{"zero session timeout", ok().SessionTimeout(0), ErrInvalidArgument},
		{"negative session timeout", ok().SessionTimeout(-time.Second), ErrInvalidArgument},
		{"zero connection timeout", ok().ConnectionTimeout(0), ErrInvalidArgument},
		{"negative connection timeout", ok().ConnectionTimeout(-1), ErrInvalidArgument},
		{"unknown error policy", ok().ConnectionStateErrorPolicy(ErrorPolicy(7)), ErrInvalidArgument},
		{"negative error policy", ok().ConnectionStateErrorPolicy(ErrorPolicy(-1)), ErrInvalidArgument},
		{"nil listener", ok().Listener(nil), ErrInvalidArgument},
		{"namespace with leading /", ok().Namespace("/shop"), ErrInvalidPath},
		{"namespace with trailing /", ok().Namespace("shop/"), ErrInvalidPath},
		{"namespace with ..", ok().Namespace("shop/.."), ErrInvalidPath},
		{"namespace with NUL", ok().Namespace("sh\x00op"), ErrInvalidPath},
	} {
		c, err := tc.b.Build()
		if !errors.Is(err, tc.want) || c != nil {
			t.Errorf("%s: Build() = %v, %v; want nil, %v", tc.name, c, err, tc.want)
		}
	}
}

func TestBuildDefaultsAndSettings(t *testing.T) {
	c, err := NewBuilder().ConnectString("127.0.0.1:1").Build()
	if err != nil {
		t.Fatal(err)
	}
	if c.SessionTimeout() != DefaultSessionTimeout || c.ConnectionTimeout() != DefaultConnectionTimeout {
		t.Errorf("timeouts %v, %v; want Curator's defaults", c.SessionTimeout(), c.ConnectionTimeout())
	}
	if c.RetryPolicy() == nil || c.ErrorPolicy() != SessionErrorPolicy || c.Namespace() != "" {
		t.Errorf("defaults: policy %v, error policy %v, namespace %q", c.RetryPolicy(), c.ErrorPolicy(), c.Namespace())
	}
	if len(c.DefaultData()) == 0 || c.Logger() == nil {
		t.Errorf("default data %q, logger %v", c.DefaultData(), c.Logger())
	}
	// Built, not started: no connection, no I/O, ErrNotStarted.
	if c.ZooKeeper() != nil || c.State() != Latent || !errors.Is(c.Check(), ErrNotStarted) {
		t.Errorf("unstarted client: conn %v, state %v, check %v", c.ZooKeeper(), c.State(), c.Check())
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close of an unstarted client: %v", err)
	}

	policy, err := retry.NewNTimes(2, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("me")
	b := NewBuilder().ConnectString("a:1,b:2").SessionTimeout(3 * time.Second).ConnectionTimeout(time.Second).
		RetryPolicy(policy).Namespace("shop/eu").DefaultData(data).ConnectionStateErrorPolicy(SessionErrorPolicy)
	data[0] = 'X' // the builder keeps its own copy
	c, err = b.Build()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.SessionTimeout() != 3*time.Second || c.ConnectionTimeout() != time.Second || c.RetryPolicy() != policy ||
		c.Namespace() != "shop/eu" || string(c.DefaultData()) != "me" || c.ErrorPolicy() != SessionErrorPolicy {
		t.Errorf("settings not kept: %v %v %v %q %q %v", c.SessionTimeout(), c.ConnectionTimeout(), c.RetryPolicy(),
			c.Namespace(), c.DefaultData(), c.ErrorPolicy())
	}
	c.DefaultData()[0] = 'X' // callers get a copy
	if string(c.DefaultData()) != "me" {
		t.Errorf("DefaultData shares its bytes with callers")
	}
	if !slices.Equal(c.servers, []string{"a:1", "b:2"}) || c.ns != "/shop/eu" {
		t.Errorf("servers %q, namespace %q", c.servers, c.ns)
	}
}

func TestNewClient(t *testing.T) {
	policy, err := retry.NewOneTime(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient("127.0.0.1:2181", policy)
	if err != nil || c.RetryPolicy() != policy {
		t.Fatalf("NewClient = %v, %v", c, err)
	}
	c.Close()
	if _, err := NewClient("", policy); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewClient with no servers = %v, want ErrInvalidArgument", err)
	}
}

func TestConnectionStates(t *testing.T) {
	for _, tc := range []struct {
		s         ConnectionState
		name      string
		connected bool
		std, sess bool
	}{
		{Latent, "LATENT", false, false, false},
		{Connected, "CONNECTED", true, false, false},
		{Suspended, "SUSPENDED", false, true, false},
		{Reconnected, "RECONNECTED", true, false, false},
		{Lost, "LOST", false, true, true},
		{ReadOnly, "READ_ONLY", true, false, false},
		{ConnectionState(99), "UNKNOWN", false, false, false},
		{ConnectionState(-1), "UNKNOWN", false, false, false},
	} {
		if tc.s.String() != tc.name || tc.s.IsConnected() != tc.connected ||
			StandardErrorPolicy.IsError(tc.s) != tc.std || SessionErrorPolicy.IsError(tc.s) != tc.sess {
			t.Errorf("%d: %q connected %v standard %v session %v", tc.s, tc.s, tc.s.IsConnected(),
				StandardErrorPolicy.IsError(tc.s), SessionErrorPolicy.IsError(tc.s))
		}
	}
}
