package main

import (
	"errors"
	"math/rand/v2"
	"net"
	"strings"

	"github.com/go-curator/curator/zktest"
)

// writeOps are the requests whose replies -lose-replies loses: every write
// a worker sends, the lock node's create and delete and the stock's set.
var writeOps = []int32{
	zktest.OpCreate, zktest.OpCreate2, zktest.OpCreateContainer, zktest.OpCreateTTL,
	zktest.OpDelete, zktest.OpSetData,
}

// faults is a round's fault proxies: for -lose-replies, each worker reaches
// each server through a proxy of its own, which forwards the worker's
// writes, lets the server apply them, and then loses the reply and cuts
// the connection at the given rate. The worker's client sees a connection
// loss and retries a write that is already done. The zero value has no
// proxies; Close closes them all.
type faults struct {
	rate    float64
	seed    uint64
	proxies []*zktest.Proxy
}

// connect returns the connect string worker i of round uses: connect
// itself when rate is 0, and otherwise the addresses of new proxies, one
// per server of connect (a chroot suffix is kept). Each proxy draws from a
// random source of its own, seeded from seed, round, i and the server's
// index, so the same -seed makes the same choices for the same sequence
// of writes.
func (f *faults) connect(connect string, round, i int) (string, error) {
	if f.rate <= 0 {
		return connect, nil
	}
	hosts, chroot := connect, ""
	if j := strings.IndexByte(connect, '/'); j >= 0 {
		hosts, chroot = connect[:j], connect[j:]
	}
	var addrs []string
	for k, host := range strings.Split(hosts, ",") {
		host = strings.TrimSpace(host)
		if _, _, err := net.SplitHostPort(host); err != nil {
			host = net.JoinHostPort(host, "2181") // ZooKeeper's port when none is given
		}
		p, err := zktest.NewProxy(host)
		if err != nil {
			return "", err
		}
		f.proxies = append(f.proxies, p)
		rng := rand.New(rand.NewPCG(f.seed, uint64(round)<<32|uint64(i)<<16|uint64(k)))
		p.SetReplyLoss(f.rate, rng, writeOps...)
		addrs = append(addrs, p.Addr())
	}
	return strings.Join(addrs, ",") + chroot, nil
}

// lost returns how many replies the proxies have lost.
func (f *faults) lost() int {
	n := 0
	for _, p := range f.proxies {
		n += p.LostReplies()
	}
	return n
}

// writes returns how many writes the proxies have forwarded.
func (f *faults) writes() int {
	n := 0
	for _, p := range f.proxies {
		n += p.Requests(writeOps...)
	}
	return n
}

// Close closes every proxy.
func (f *faults) Close() error {
	var errs []error
	for _, p := range f.proxies {
		errs = append(errs, p.Close())
	}
	f.proxies = nil
	return errors.Join(errs...)
}
