package discovery

import "net"

// localAddress is the address an instance registered with none gets, as
// Curator's ServiceInstance.builder() gives it: the first of the host's
// addresses that passes Curator's default LocalIpFilter (not loopback,
// and not link-local unless on a point-to-point interface), interfaces in
// the system's order. Unlike Java, whose order of an interface's addresses
// varies, an IPv4 address is preferred to an IPv6 one. With no such
// address it is "", written as null, as Curator writes it.
// It is looked up at each call, as Curator's builder() does.
func localAddress() string {
	ifs, err := net.Interfaces()
	if err != nil {
		return ""
	}
	var v6 string
	for _, nif := range ifs {
		if nif.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := nif.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ip := addrIP(a)
			if !usableLocal(ip, nif.Flags&net.FlagPointToPoint != 0) {
				continue
			}
			if ip.To4() != nil {
				return ip.String()
			}
			if v6 == "" {
				v6 = ip.String()
			}
		}
	}
	return v6
}

// usableLocal is Curator's default LocalIpFilter.
func usableLocal(ip net.IP, pointToPoint bool) bool {
	if ip == nil || ip.IsLoopback() || ip.IsUnspecified() {
		return false
	}
	return pointToPoint || !ip.IsLinkLocalUnicast()
}

func addrIP(a net.Addr) net.IP {
	switch v := a.(type) {
	case *net.IPNet:
		return v.IP
	case *net.IPAddr:
		return v.IP
	}
	return nil
}
