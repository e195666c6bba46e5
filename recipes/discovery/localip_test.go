package discovery

import (
	"net"
	"testing"
)

// TestUsableLocal is Curator's default LocalIpFilter: no loopback, and no
// link-local address unless on a point-to-point interface.
func TestUsableLocal(t *testing.T) {
	for _, tc := range []struct {
		ip   string
		p2p  bool
		want bool
	}{
		{"10.0.0.7", false, true},
		{"192.0.2.2", true, true},
		{"127.0.0.1", false, false},
		{"127.0.1.1", true, false},
		{"::1", false, false},
		{"169.254.3.4", false, false},
		{"169.254.3.4", true, true},
		{"fe80::1", false, false},
		{"fe80::1", true, true},
		{"fd00::2", false, true},
		{"0.0.0.0", false, false},
	} {
		if got := usableLocal(net.ParseIP(tc.ip), tc.p2p); got != tc.want {
			t.Errorf("usableLocal(%s, point-to-point %v) = %v, want %v", tc.ip, tc.p2p, got, tc.want)
		}
	}
	if usableLocal(nil, false) {
		t.Error("usableLocal(nil) = true")
	}
}
