package zktest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Proxy is a TCP fault proxy between clients and one server, on 127.0.0.1.
// Point a client at Addr instead of the server, then add latency, pause
// traffic, reset connections or refuse new ones. It follows ZooKeeper's
// framing, so it can also lose the reply to a request the server applied
// ([Proxy.LoseNextReply], [Proxy.SetReplyLoss]) and hold replies while
// requests flow ([Proxy.HoldReplies]).
//
// Its methods are safe for concurrent use. Close stops it and joins every
// goroutine it started.
type Proxy struct {
	target string
	ln     net.Listener
	ctx    context.Context // ends at Close; bounds dials to the target
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	latency   time.Duration
	gate      chan struct{} // non-nil while paused; closed by Resume
	replyGate chan struct{} // non-nil while replies are held; closed by ReleaseReplies
	refuse    bool
	links     map[*link]struct{}
	closed    bool

	// Lost replies: a one-shot fault, a rate, and the count of replies lost.
	loseNext    bool
	loseNextOps []int32
	lossRate    float64
	lossRNG     *rand.Rand
	lossOps     []int32
	lost        int

	requests map[int32]int // requests forwarded, by opcode
}

// link is one client connection and its connection to the target. Three
// goroutines serve it: one forwards requests, one reads what the server
// sends into down, and one forwards down to the client.
type link struct {
	client, server net.Conn
	once           sync.Once
	done           chan struct{} // closed when the link is cut

	lose map[int32]struct{} // xids whose replies are to be lost; guarded by Proxy.mu

	mu    sync.Mutex
	down  []byte        // read from the server, not yet forwarded
	ended bool          // nothing follows down: the server side ended or a reply was lost
	reset bool          // with ended: reset the client once down is forwarded
	wake  chan struct{} // one slot: down or ended changed
}

// push queues data read from the server for the client; end says nothing
// follows it, and reset that the client is then reset.
func (l *link) push(data []byte, end, reset bool) {
	if len(data) == 0 && !end {
		return
	}
	l.mu.Lock()
	l.down = append(l.down, data...)
	l.ended, l.reset = end, reset
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// pending reports whether push queued anything that take has not returned.
func (l *link) pending() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.down) > 0 || l.ended
}

// take returns and clears what push queued.
func (l *link) take() (data []byte, end, reset bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	data, l.down = l.down, nil
	return data, l.ended, l.reset
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
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.accept()
	}()
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
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
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
	l := &link{client: c, server: s, done: make(chan struct{}), wake: make(chan struct{}, 1)}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.cut(true)
		return
	}
	p.links[l] = struct{}{}
	p.mu.Unlock()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		p.forwardRequests(l)
	}()
	go func() {
		defer wg.Done()
		p.readReplies(l)
	}()
	p.forwardReplies(l)
	wg.Wait()
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
}

// bufSize is how much one read from a connection takes at most.
const bufSize = 32 << 10

// forwardRequests copies from the client to the server, honoring pause and
// latency, until either side fails or the link is cut; then it cuts the
// link. It shows each request to noteRequest before forwarding it.
func (p *Proxy) forwardRequests(l *link) {
	defer l.cut(false)
	f := framer{peek: 8}
	note := func(header []byte) bool {
		p.noteRequest(l, xidOf(header), opcodeOf(header))
		return true
	}
	buf := make([]byte, bufSize)
	var out []byte
	for {
		n, err := l.client.Read(buf)
		out, _ = f.scan(out[:0], buf[:n], note)
		if err != nil {
			out = f.flush(out)
		}
		if len(out) > 0 {
			if !p.hold(l, false) {
				return
			}
			if _, werr := l.server.Write(out); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// readReplies reads what the server sends into l.down, until the server
// side fails or a reply is lost. It never blocks on the client, so replies
// can be held.
func (p *Proxy) readReplies(l *link) {
	f := framer{peek: 4}
	keep := func(header []byte) bool { return !p.dropReply(l, xidOf(header)) }
	buf := make([]byte, bufSize)
	var out []byte
	for {
		n, err := l.server.Read(buf)
		var lost bool
		out, lost = f.scan(out[:0], buf[:n], keep)
		if err != nil && !lost {
			out = f.flush(out)
		}
		l.push(out, err != nil || lost, lost)
		if err != nil || lost {
			return
		}
	}
}

// forwardReplies copies l.down to the client, honoring pause, latency and
// held replies, until the server side ended, the client fails or the link is
// cut; then it cuts the link, with a reset after a lost reply.
func (p *Proxy) forwardReplies(l *link) {
	defer l.cut(false)
	for {
		select {
		case <-l.wake:
		case <-l.done:
			return
		}
		if !l.pending() {
			continue // taken with an earlier wake
		}
		if !p.hold(l, true) {
			return
		}
		data, end, reset := l.take()
		if len(data) > 0 {
			if _, err := l.client.Write(data); err != nil {
				return
			}
		}
		if end {
			if reset {
				l.cut(true)
			}
			return
		}
	}
}

// hold waits while the proxy is paused (and, for replies, while replies are
// held) and then for the latency; it reports false if the link was cut
// meanwhile.
func (p *Proxy) hold(l *link, replies bool) bool {
	for {
		p.mu.Lock()
		gate, latency := p.gate, p.latency
		if gate == nil && replies {
			gate = p.replyGate
		}
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
