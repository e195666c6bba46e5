package main

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"
)

// errRefused is the cause of a Start that every server refused: nothing
// listens at any address of the connect string, a definite answer that
// waiting out --timeout would not change. A server that is slow to accept
// or to answer, or one refused address among servers that may still answer,
// is waited for as before.
var errRefused = errors.New("every server refused the connection")

// refusals watches the dials of a client that is starting, and cancels its
// Start as soon as every address the client will try has refused a
// connection: each server's own address, or all the addresses its name
// resolves to. go-zookeeper dials the resolved addresses (TLS clients, the
// names), one at a time, and waits a second after each round; a second dial
// of an address also shows a round is over, should the resolution here
// differ from the client's.
type refusals struct {
	cancel  context.CancelCauseFunc
	servers []server

	mu       sync.Mutex
	refused  map[string]bool // by address: whether its latest dial was refused
	repeated bool            // some address was dialed twice
	last     error           // the latest refusal
}

// server is one server of the connect string: its name and the addresses
// it resolved to here.
type server struct {
	name  string
	addrs []string
}

// newRefusals returns the refusals of the servers ("host:port") that
// cancel ends Start for.
func newRefusals(ctx context.Context, servers []string, cancel context.CancelCauseFunc) *refusals {
	r := &refusals{cancel: cancel, refused: make(map[string]bool)}
	for _, s := range servers {
		srv := server{name: s}
		if host, port, err := net.SplitHostPort(s); err == nil {
			lctx, done := context.WithTimeout(ctx, 3*time.Second)
			ips, _ := net.DefaultResolver.LookupHost(lctx, host)
			done()
			for _, ip := range ips {
				srv.addrs = append(srv.addrs, net.JoinHostPort(ip, port))
			}
		}
		r.servers = append(r.servers, srv)
	}
	return r
}

// dial opens a connection as net.DialTimeout does, and notes its result.
func (r *refusals) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	nc, err := net.DialTimeout(network, addr, timeout)
	r.note(addr, err)
	return nc, err
}

func (r *refusals) note(addr string, err error) {
	refused := errors.Is(err, syscall.ECONNREFUSED)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := r.refused[addr]; seen {
		r.repeated = true
	}
	r.refused[addr] = refused
	if !refused {
		return
	}
	r.last = err
	for _, ok := range r.refused {
		if !ok {
			return // some server took the connection, or may still
		}
	}
	if r.repeated || r.coversAll() {
		r.cancel(errRefused)
	}
}

// coversAll reports whether every server has refused: its own address, or
// all it resolved to. Called with r.mu held.
func (r *refusals) coversAll() bool {
	for _, s := range r.servers {
		all := len(s.addrs) > 0
		for _, a := range s.addrs {
			all = all && r.refused[a]
		}
		if !all && !r.refused[s.name] {
			return false
		}
	}
	return true
}

// err returns the latest refusal.
func (r *refusals) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// hosts returns the "host:port" servers of a connect string
// "host:port[,host:port][/chroot]"; a server without a port gets
// ZooKeeper's 2181, as the client gives it.
func hosts(connect string) []string {
	if i := strings.IndexByte(connect, '/'); i >= 0 {
		connect = connect[:i]
	}
	var out []string
	for _, s := range strings.Split(connect, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(s); err != nil {
			s = net.JoinHostPort(s, "2181")
		}
		out = append(out, s)
	}
	return out
}
