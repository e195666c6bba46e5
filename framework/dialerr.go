package framework

import (
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// dialLogEvery is how often a server that keeps failing to dial is logged
// again: the first failure at once, then at most one line per interval,
// with the number of attempts that failed since the previous line.
// go-zookeeper tries each server about once a second while it has no
// connection, so a server down for an hour logs 360 lines, not 3,600.
const dialLogEvery = 10 * time.Second

// dialLog keeps the dial errors of the client's connections: the latest,
// for Start's error, and a rate-limited Warn line per server, so that a
// refused address shows in the log and in the error rather than only as a
// timeout. The zero value is ready to use.
type dialLog struct {
	mu      sync.Mutex
	err     error                   // the latest dial's error, nil once a dial succeeds
	servers map[string]*serverDials // by address
	failed  chan struct{}           // signalled at each failure, for Start; cap 1
}

// serverDials is one server's failures since its last Warn line.
type serverDials struct {
	logged time.Time // when the last line was written
	missed int       // failures since then
	total  int       // failures since the last successful dial
}

func newDialLog() *dialLog {
	return &dialLog{servers: make(map[string]*serverDials), failed: make(chan struct{}, 1)}
}

// wrap returns dial, reporting each of its results to d.
func (d *dialLog) wrap(dial zk.Dialer, logger *slog.Logger) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		nc, err := dial(network, addr, timeout)
		if err != nil {
			d.fail(addr, err, logger)
		} else {
			d.succeed(addr, logger)
		}
		return nc, err
	}
}

func (d *dialLog) fail(addr string, err error, logger *slog.Logger) {
	d.mu.Lock()
	d.err = err
	s := d.servers[addr]
	if s == nil {
		s = &serverDials{}
		d.servers[addr] = s
	}
	s.missed++
	s.total++
	now := time.Now()
	var missed, total int
	if s.logged.IsZero() || now.Sub(s.logged) >= dialLogEvery {
		missed, total = s.missed, s.total
		s.logged, s.missed = now, 0
	}
	d.mu.Unlock()
	select {
	case d.failed <- struct{}{}:
	default:
	}
	if missed > 0 {
		logger.Warn("framework: cannot connect to server; retrying", "server", addr, "err", err,
			"failed_attempts", missed, "failed_since_last_success", total)
	}
}

func (d *dialLog) succeed(addr string, logger *slog.Logger) {
	d.mu.Lock()
	d.err = nil
	s := d.servers[addr]
	delete(d.servers, addr)
	d.mu.Unlock()
	if s != nil {
		logger.Info("framework: server reachable again", "server", addr, "failed_attempts", s.total)
	}
}

// last returns the latest dial's error, or nil if it succeeded (or there
// was none).
func (d *dialLog) last() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}
