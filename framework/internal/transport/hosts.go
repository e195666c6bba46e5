package transport

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"
)

// Hosts is the list of servers a client dials: go-zookeeper's
// HostProvider, whose list Update can replace while the client runs (the
// ensemble tracker does when the ensemble's membership changes).
//
// go-zookeeper asks Next for the server of each dial, and calls Connected
// once a session is established on it. Next goes round the list in a
// random order, and says when it has gone round it all since the last
// Connected (go-zookeeper then waits a second before the next round).
//
// Update never touches a connection: the client stays on its server
// whether or not the new list holds it, and the list is dialled from the
// next reconnect on. When the current server is in the new list, the next
// round starts after it, as it would have.
//
// With resolve, Init and Update replace each host name with its
// addresses, as go-zookeeper's DNSHostProvider does; without it the names
// are dialled as given (TLS checks them).
type Hosts struct {
	resolve bool

	mu      sync.Mutex
	servers []string
	cur     int // the server Next returned last; -1 before the first
	last    int // where the current round started; -1 before the first Next
}

// NewHosts returns an empty Hosts; go-zookeeper's Connect calls Init.
func NewHosts(resolve bool) *Hosts { return &Hosts{resolve: resolve, cur: -1, last: -1} }

// ErrNoServers is the error of Init or Update with no server to dial.
var ErrNoServers = errors.New("transport: no servers")

// lookupTimeout bounds the name lookups of Init and Update.
const lookupTimeout = 3 * time.Second

// Init sets the servers ("host:port") of a new connection chain, shuffled.
func (h *Hosts) Init(servers []string) error {
	list, err := h.expand(servers)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.servers, h.cur, h.last = list, -1, -1
	return nil
}

// Update replaces the servers with a shuffled copy of servers, and
// reports whether the set changed. The same set in another order changes
// nothing. On an error (no servers, or none that resolves) the list stays.
func (h *Hosts) Update(servers []string) (bool, error) {
	list, err := h.expand(servers)
	if err != nil {
		return false, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if sameSet(list, h.servers) {
		return false, nil
	}
	var current string
	if h.cur >= 0 && h.cur < len(h.servers) {
		current = h.servers[h.cur]
	}
	h.servers, h.cur, h.last = list, -1, -1
	if i := slices.Index(list, current); i >= 0 {
		// The round goes on after the current server, and ends on it.
		h.cur, h.last = i, i
	}
	return true, nil
}

// Servers returns the servers in the order they are dialled.
func (h *Hosts) Servers() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.servers)
}

// Len returns the number of servers.
func (h *Hosts) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.servers)
}

// Next returns the server to dial next, and whether the list has been gone
// round since the last Connected.
func (h *Hosts) Next() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cur = (h.cur + 1) % len(h.servers)
	round := h.cur == h.last
	if h.last == -1 {
		h.last = h.cur
	}
	return h.servers[h.cur], round
}

// Connected marks the server Next returned last as the one a session was
// established on: a round starts there again.
func (h *Hosts) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = h.cur
}

// expand returns servers shuffled, each name resolved to its addresses
// with resolve, without duplicates.
func (h *Hosts) expand(servers []string) ([]string, error) {
	var list []string
	if !h.resolve {
		list = slices.Clone(servers)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
		defer cancel()
		var errs []error
		for _, s := range servers {
			host, port, err := net.SplitHostPort(s)
			if err != nil {
				return nil, fmt.Errorf("transport: server %q: %w", s, err)
			}
			addrs, err := net.DefaultResolver.LookupHost(ctx, host)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, a := range addrs {
				list = append(list, net.JoinHostPort(a, port))
			}
		}
		if len(list) == 0 && len(errs) > 0 {
			return nil, fmt.Errorf("%w: none of %q resolves: %w", ErrNoServers, servers, errors.Join(errs...))
		}
	}
	slices.Sort(list)
	list = slices.Compact(list)
	if len(list) == 0 {
		return nil, ErrNoServers
	}
	rand.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	return list, nil
}

// sameSet reports whether a and b hold the same servers, each once.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}
