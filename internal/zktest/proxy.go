package zktest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Proxy is a TCP fault proxy between clients and one server, on 127.0.0.1.
// Point a client at Addr instead of the server, then add latency, pause
// traffic, reset connections or refuse new ones.
//
// Its methods are safe for concurrent use. Close stops it and joins every
// goroutine it started.
type Proxy struct {
	target string
	ln     net.Listener
	ctx    context.Context // ends at Close; bounds dials to the target
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	latency time.Duration
	gate    chan struct{} // non-nil while paused; closed by Resume
	refuse  bool
	links   map[*link]struct{}
	closed  bool
}

// link is one client connection and its connection to the target.
type link struct {
	client, server net.Conn
	once           sync.Once
	done           chan struct{} // closed when the link is cut
}

// cut closes both connections; reset makes the client see a reset.
func (l *link) cut(reset bool) {
	l.once.Do(func() {
		if tc, ok := l.client.(*net.TCPConn); ok && reset {
			tc.SetLinger(0)
		}
		l.client.Close()
		l.server.Close()
		close(l.done)
	})
}

// NewProxy starts a proxy to target ("host:port") on a free loopback port.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("zktest: proxy listen: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{target: target, ln: ln, ctx: ctx, cancel: cancel, links: make(map[*link]struct{})}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr returns the proxy's address, "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetLatency delays each chunk forwarded in either direction by d, from now
// on. Zero removes the delay.
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	p.latency = d
	p.mu.Unlock()
}

// Pause stops forwarding in both directions. Connections stay open, so a
// client sees silence, as in a network partition. Pausing a paused proxy
// does nothing.
func (p *Proxy) Pause() {
	p.mu.Lock()
	if p.gate == nil {
		p.gate = make(chan struct{})
	}
	p.mu.Unlock()
}

// Resume forwards again, starting with what was held back during the pause.
func (p *Proxy) Resume() {
	p.mu.Lock()
	if p.gate != nil {
		close(p.gate)
		p.gate = nil
	}
	p.mu.Unlock()
}

// Reset closes every current connection; the client sees a connection reset.
// New connections are accepted as before.
func (p *Proxy) Reset() {
	p.mu.Lock()
	links := make([]*link, 0, len(p.links))
	for l := range p.links {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.cut(true)
	}
}

// Refuse makes the proxy reset every new connection at once while on is true.
// Existing connections are not touched.
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	p.refuse = on
	p.mu.Unlock()
}

// Close stops the proxy: it stops accepting, cuts every connection, and
// waits for all its goroutines. It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	err := p.ln.Close()
	p.Reset()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. out of file descriptors; keep serving
			continue
		}
		p.mu.Lock()
		refuse := p.refuse || p.closed
		p.mu.Unlock()
		if refuse {
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			c.Close()
			continue
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

// serve dials the target for client c and forwards between them.
func (p *Proxy) serve(c net.Conn) {
	var d net.Dialer
	s, err := d.DialContext(p.ctx, "tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	l := &link{client: c, server: s, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.cut(true)
		return
	}
	p.links[l] = struct{}{}
	p.mu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { p.pump(l, c, s) })
	p.pump(l, s, c)
	wg.Wait()
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
}

// pump copies from src to dst, honoring pause and latency, until either side
// fails or the link is cut; then it cuts the link.
func (p *Proxy) pump(l *link, src, dst net.Conn) {
	defer l.cut(false)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.hold(l) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// hold waits while the proxy is paused and then for the latency; it reports
// false if the link was cut meanwhile.
func (p *Proxy) hold(l *link) bool {
	for {
		p.mu.Lock()
		gate, latency := p.gate, p.latency
		p.mu.Unlock()
		if gate == nil {
			if latency <= 0 {
				return true
			}
			t := time.NewTimer(latency)
			defer t.Stop()
			select {
			case <-t.C:
				return true
			case <-l.done:
				return false
			}
		}
		select {
		case <-gate:
		case <-l.done:
			return false
		}
	}
}
