package framework

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/go-curator/curator/framework/internal/transport"
	"github.com/go-curator/curator/internal/chans"
	"github.com/go-curator/curator/internal/errtext"
	"github.com/go-curator/curator/internal/goid"
	"github.com/go-curator/curator/internal/queue"
	"github.com/go-curator/curator/retry"
	"github.com/go-zookeeper/zk"
)

// Client is a ZooKeeper client with Curator's connection handling, retry
// loop and fluent operations. It is safe for concurrent use. Build one with
// NewBuilder or NewClient, then Start it; Close it when done.
type Client struct {
	servers           []string
	sessionTimeout    time.Duration
	connectionTimeout time.Duration
	policy            retry.Policy
	ns                string // chroot + "/" + namespace: what every path is put under
	chroot            string // the connect string's chroot, "" or "/a[/b...]"; a prefix of ns
	logger            *slog.Logger
	defaultData       []byte
	errorPolicy       ErrorPolicy
	dialer            zk.Dialer
	connOpts          connOptions // authentication, ACL provider, TLS (security.go)
	obsOpts           obsOptions  // metrics hook (observe.go)

	// The ensemble's timing (Builder.EnsembleTiming); zero when not stated.
	timing ensembleTiming

	ctx    context.Context // ends at Close; background work runs under it
	cancel context.CancelFunc
	wg     sync.WaitGroup // background work: guaranteed deletes, orphan cleanup

	mu         sync.Mutex
	started    bool
	closed     bool
	conn       *zk.Conn
	state      ConnectionState
	sessionID  int64           // the session last reported Connected or Reconnected
	connected  chan struct{}   // closed while the state is connected
	connLoss   chan struct{}   // closed at the next Suspended or Lost
	sessLoss   chan struct{}   // closed at the next Lost
	wire       *wire           // the current connection's negotiated timeout and last contact
	clock      transport.Clock // times the lease; transport.System but in tests
	lostTimer  transport.Timer // Suspended at Start, or the session's lease (see armLease)
	suspendGen int             // guards lostTimer against a stale fire
	listeners  map[*queue.Queue[ConnectionState]]struct{}
	nsReady    bool
	closeOnce  sync.Once
	connErr    error              // the last rejection of a connection (auth, TLS), for Start
	connFail   chan struct{}      // signalled at each connErr
	dials      *dialLog           // the dial errors, logged and kept for Start (dialerr.go)
	reg        watchRegistry      // lasting watches' ZooKeeper watches (watch.go)
	oneShots   oneShots           // the W reads' one-shot watches (oneshot.go)
	pers       persistents        // persistent watches (persistent.go)
	flight     transport.InFlight // requests in flight

	// What checkTiming has logged, once per client.
	warned struct{ noFollowerLease, shortTimeout bool }

	// Set by Build from the Builder's options (create.go, compress.go).
	noContainerParents bool                // Builder.DontUseContainerParents
	compression        CompressionProvider // Builder.CompressionProvider; nil: gzip
	compressAll        bool                // Builder.EnableCompression
	ens                ensemble            // the server list and the ensemble tracker (ensemble.go); guarded by mu
	circuit            *circuit            // Builder.CircuitBreaking (circuit_client.go); guarded by mu
}

func newClient(servers []string, sessionTimeout, connectionTimeout time.Duration, policy retry.Policy,
	ns string, logger *slog.Logger, data []byte, ep ErrorPolicy, dialer zk.Dialer) *Client {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{
		servers: servers, sessionTimeout: sessionTimeout, connectionTimeout: connectionTimeout,
		policy: policy, ns: ns, logger: logger, defaultData: data, errorPolicy: ep, dialer: dialer,
		ctx: ctx, cancel: cancel,
		connected: make(chan struct{}), connLoss: chans.NewClosed(), sessLoss: chans.NewClosed(),
		connFail:  make(chan struct{}, 1),
		clock:     transport.System,
		dials:     newDialLog(),
		listeners: make(map[*queue.Queue[ConnectionState]]struct{}),
	}
	c.pers.c, c.pers.kick = c, make(chan struct{}, 1)
	c.oneShots.pers, c.reg.pers = &c.pers, &c.pers
	return c
}

// Start connects to ZooKeeper and waits for the first connection. If ctx
// ends first, Start closes the client and returns the ctx error, wrapping
// the last connection error if there was one (a dial's, such as
// syscall.ECONNREFUSED, or a rejection's): a Start that fails leaves
// nothing running. Start may be called once. Each failed dial is logged at
// Warn (a server that keeps failing, once per 10 s).
//
// A ctx that can never end (context.Background, context.TODO) gives Start
// no way out, so it does not wait forever for servers it cannot reach:
// once the connection timeout (how long an operation waits for a
// connection) has passed and the latest dial failed, Start returns
// ErrConnectionTimeout wrapping that dial's error, and a misspelled
// address fails instead of hanging. To wait for servers that are still
// starting, however long, give a ctx that ends when you want to stop (a
// deadline, signal.NotifyContext, t.Context()). A server that accepts the
// connection but is slow to answer is waited for until ctx ends.
//
// Start also fails when the servers reject the client in a way that
// retrying does not cure: at once when they reject its credentials
// (ErrAuthFailed, see Builder.Authorization), and after the connection
// timeout when the TLS handshake fails (ErrTLSHandshake, see
// Builder.TLSConfig).
func (c *Client) Start(ctx context.Context) error {
	if c == nil {
		return ErrNilClient
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if c.cancel == nil || len(c.servers) == 0 {
		return fmt.Errorf("%w: a zero Client; build one with NewBuilder or NewClient", ErrInvalidArgument)
	}
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return ErrClosed
	case c.started:
		c.mu.Unlock()
		return ErrAlreadyStarted
	}
	c.started = true
	if len(c.servers) > 1 && c.timing.tick == 0 {
		c.logger.Info("framework: no ensemble timing stated (Builder.EnsembleTiming): the session's lease covers no leader stall and no follower cut off from the leader beyond tickTime/2",
			"servers", len(c.servers))
	}
	conn, w, err := c.connect()
	if err != nil {
		c.mu.Unlock()
		c.Close()
		return errtext.Errorf("framework: connect: %w", err)
	}
	c.conn, c.wire = conn, w
	c.armStart(c.connectionTimeout) // Suspended if the first connection takes too long
	c.mu.Unlock()

	if err := c.awaitStart(ctx); err != nil {
		c.Close()
		return errtext.Errorf("framework: start: %w", err)
	}
	c.startTracker(ctx) // Builder.EnsembleTracker (ensemble.go)
	return nil
}

// awaitStart waits for the first connection, as BlockUntilConnected does,
// but ends early on a connection the servers reject in a way retrying does
// not cure: at once for credentials (ErrAuthFailed), and after the
// connection timeout for a TLS handshake (ErrTLSHandshake), since another
// server of an ensemble may still accept the client. Under a ctx that can
// never end it also ends after the connection timeout if the latest dial
// failed.
func (c *Client) awaitStart(ctx context.Context) error {
	timeout := time.NewTimer(c.connectionTimeout)
	defer timeout.Stop()
	endless := ctx.Done() == nil // context.Background, context.TODO
	late := false
	for {
		c.mu.Lock()
		if err := c.checkLocked(); err != nil {
			c.mu.Unlock()
			return err
		}
		if c.state.IsConnected() {
			c.mu.Unlock()
			return nil
		}
		ch, failed := c.connected, c.connErr
		c.mu.Unlock()
		if failed != nil && (late || errors.Is(failed, ErrAuthFailed)) {
			return failed
		}
		if dialErr := c.dials.last(); late && endless && dialErr != nil {
			return fmt.Errorf("%w: no server reached within the connection timeout %v (last connection error: %w)",
				ErrConnectionTimeout, c.connectionTimeout, dialErr)
		}
		select {
		case <-ch:
		case <-c.connFail:
		case <-c.dials.failed:
		case <-timeout.C:
			late = true
		case <-ctx.Done():
			c.mu.Lock()
			failed = c.connErr
			c.mu.Unlock()
			if failed == nil {
				failed = c.dials.last()
			}
			if failed != nil {
				return fmt.Errorf("%w (last connection error: %w)", ctx.Err(), failed)
			}
			return ctx.Err()
		case <-c.ctx.Done():
			return ErrClosed
		}
	}
}

// rejected records a connection the servers rejected (credentials, TLS):
// Start returns it; after Start it is logged, and the client keeps trying.
func (c *Client) rejected(err error) {
	c.mu.Lock()
	c.connErr = err
	started := c.state != Latent
	c.mu.Unlock()
	select {
	case c.connFail <- struct{}{}:
	default:
	}
	if started {
		c.logger.Error("framework: the server rejected the connection; retrying", "err", err)
	}
}

// connect opens a go-zookeeper connection whose session events go to
// onEvent, with a new wire to watch its bytes. It does not wait for the
// connection. Called with c.mu held, so the events wait until the caller
// has stored the connection.
func (c *Client) connect() (*zk.Conn, *wire, error) {
	ready := make(chan struct{})
	var conn *zk.Conn
	dial := c.dialer
	if dial == nil {
		dial = net.DialTimeout
	}
	dial = c.dials.wrap(dial, c.logger)
	w := transport.NewWire(c.clock)
	w.SetTiming(c.timing.tick, c.timing.syncLimit)
	// The timeout a handshake's bound derives from: the negotiated one once
	// a server granted one (carried over from the previous wire when
	// renewSession replaces it), as the Java client does, else the
	// requested one.
	granted := c.sessionTimeout
	if c.wire != nil {
		if t := c.wire.Negotiated(); t > 0 {
			granted = t
		}
	}
	hosts := c.newHosts() // the servers, which the ensemble tracker may replace (ensemble.go)
	handshake := func() time.Duration {
		t := w.Negotiated()
		if t <= 0 {
			t = granted
		}
		return t / time.Duration(max(hosts.Len(), 1))
	}
	tlsCfg := c.connOpts.tls
	conn, _, err := zk.Connect(c.servers, c.sessionTimeout,
		zk.WithHostProvider(hosts),
		zk.WithLogger(slogAdapter{c.logger}),
		zk.WithLogInfo(false),
		// The layers, from the socket up: the Dialer's connection, TLS, the
		// credentials (authConn), then the wire, which reads ZooKeeper's
		// frames in the clear.
		zk.WithDialer(func(network, addr string, timeout time.Duration) (net.Conn, error) {
			nc, err := dial(network, addr, timeout)
			if err != nil {
				return nil, err
			}
			handshake := handshake() // this connection's bound, at dial time
			if tlsCfg != nil {
				// Bounded as the connect handshake is (see wireConn), and by
				// the connection timeout: a server that accepts and stays
				// silent must not hold the client from the next one.
				if nc, err = transport.DialTLS(nc, addr, tlsCfg, max(timeout, min(handshake, c.connectionTimeout))); err != nil {
					err = rejection(err)
					c.rejected(err)
					return nil, err
				}
			}
			if len(c.connOpts.auths) > 0 || tlsCfg != nil {
				nc = transport.Authenticate(nc, c.connOpts.auths, tlsCfg != nil, func(err error) { c.rejected(rejection(err)) })
			}
			return w.Wrap(nc, handshake), nil
		}),
		zk.WithEventCallback(func(ev zk.Event) {
			<-ready // Connect may call back before it returns conn
			c.onEvent(conn, ev)
		}))
	if err != nil {
		return nil, nil, err
	}
	close(ready)
	return conn, w, nil
}

// wire is the transport's view of the client's connection chain.
type wire = transport.Wire

// zkConn returns the current go-zookeeper connection. Operations take it
// once per attempt: renewSession replaces it after a simulated expiry.
func (c *Client) zkConn() *zk.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

// Close closes the connection, ends the session, stops listeners and
// background work, and waits for them. It is idempotent; after it every
// operation returns ErrClosed, and State reports Closed.
//
// Close first closes the connection, so that requests in flight and
// retries asleep return at once, and then joins background work
// (guaranteed deletes, orphan cleanup). It may be called from a listener:
// it never waits for the listener it is called from, and it waits at most
// 2 seconds for a listener that does not return.
func (c *Client) Close() error {
	if c == nil {
		return ErrNilClient
	}
	if c.cancel == nil { // a zero Client: nothing was ever started
		c.mu.Lock()
		c.closed, c.state = true, Closed
		c.mu.Unlock()
		return nil
	}
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.state = Closed
		conn := c.conn
		c.disarm()
		c.stopCircuit()
		closeIfOpen(c.connLoss)
		closeIfOpen(c.sessLoss)
		ls := make([]*queue.Queue[ConnectionState], 0, len(c.listeners))
		for l := range c.listeners {
			ls = append(ls, l)
			l.Stop()
		}
		c.listeners = nil
		c.mu.Unlock()

		c.cancel()
		if conn != nil {
			conn.Close()
		}
		c.wg.Wait()
		c.joinListeners(ls)
	})
	return nil
}

// listenerJoinBound is how long Close waits for listeners still running.
const listenerJoinBound = 2 * time.Second

// joinListeners waits for the listeners' goroutines, except the caller's
// own (Close called from a listener), for at most listenerJoinBound.
func (c *Client) joinListeners(ls []*queue.Queue[ConnectionState]) {
	me := goid.Get()
	deadline := time.NewTimer(listenerJoinBound)
	defer deadline.Stop()
	for _, l := range ls {
		if l.GoroutineID() == me {
			continue
		}
		select {
		case <-l.Done():
		case <-deadline.C:
			c.logger.Warn("framework: close: a connection state listener did not return; not waiting for it")
			return
		}
	}
}

// State returns the current connection state.
func (c *Client) State() ConnectionState {
	if c == nil {
		return Latent
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// SessionID returns the ID of the current session, 0 before the first.
func (c *Client) SessionID() int64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// Namespace returns the namespace without its leading "/", or "".
func (c *Client) Namespace() string {
	if c == nil || len(c.ns) <= len(c.chroot) {
		return ""
	}
	return c.ns[len(c.chroot)+1:]
}

// Chroot returns the connect string's chroot ("/services" for
// "zk1:2181,zk2:2181/services"), or "".
func (c *Client) Chroot() string {
	if c == nil {
		return ""
	}
	return c.chroot
}

// RetryPolicy returns the client's retry policy (nil for a nil client).
func (c *Client) RetryPolicy() retry.Policy {
	if c == nil {
		return nil
	}
	return c.policy
}

// SessionTimeout returns the session timeout the client asked for; see
// NegotiatedSessionTimeout for the one the server granted.
func (c *Client) SessionTimeout() time.Duration {
	if c == nil {
		return 0
	}
	return c.sessionTimeout
}

// ConnectionTimeout returns how long an operation waits for a connection.
func (c *Client) ConnectionTimeout() time.Duration {
	if c == nil {
		return 0
	}
	return c.connectionTimeout
}

// DefaultData returns a copy of the data recipes write when given none.
func (c *Client) DefaultData() []byte {
	if c == nil {
		return nil
	}
	return append([]byte(nil), c.defaultData...)
}

// ErrorPolicy returns the client's connection state error policy.
func (c *Client) ErrorPolicy() ErrorPolicy {
	if c == nil {
		return StandardErrorPolicy
	}
	return c.errorPolicy
}

// Logger returns the client's logger; a nil client's logs nothing.
func (c *Client) Logger() *slog.Logger {
	if c == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.logger
}

// ZooKeeper returns the underlying go-zookeeper connection, or nil before
// Start. Operations on it bypass the chroot, the namespace, the ACL
// provider and the retry loop (the credentials of Authorization and TLS
// apply: they belong to the connection). The
// client replaces the connection when it reports Lost after a whole session
// timeout without a connection (its old session may still live on the
// server, so it is abandoned); call ZooKeeper again after Reconnected rather
// than keeping the result.
func (c *Client) ZooKeeper() *zk.Conn {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn
}

// Check returns nil if the client can run operations now or after a
// reconnect, and ErrNilClient, ErrNotStarted or ErrClosed otherwise.
func (c *Client) Check() error {
	if c == nil {
		return ErrNilClient
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return ErrClosed
	case !c.started:
		return ErrNotStarted
	}
	return nil
}

// BlockUntilConnected waits until the client is connected. It returns the
// ctx error if ctx ends first, and ErrClosed if the client closes.
func (c *Client) BlockUntilConnected(ctx context.Context) error {
	if c == nil {
		return ErrNilClient
	}
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	for {
		c.mu.Lock()
		if err := c.checkLocked(); err != nil {
			c.mu.Unlock()
			return err
		}
		if c.state.IsConnected() {
			c.mu.Unlock()
			return nil
		}
		ch := c.connected
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.ctx.Done():
			return ErrClosed
		}
	}
}

func (c *Client) checkLocked() error {
	switch {
	case c.closed:
		return ErrClosed
	case !c.started:
		return ErrNotStarted
	}
	return nil
}

// AddListener adds a connection state listener and returns a function that
// removes it. Each listener runs on its own goroutine and receives every
// state change (under Builder.CircuitBreaking, every state its circuit
// passes on) in order from an unbounded queue: a slow listener delays
// only itself and never loses a state. After remove returns no new state is
// delivered, though a call already running finishes.
func (c *Client) AddListener(fn Listener) (remove func()) {
	if c == nil || fn == nil {
		return func() {}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.listeners == nil {
		return func() {}
	}
	l := queue.New(fn)
	c.listeners[l] = struct{}{}
	return func() {
		c.mu.Lock()
		delete(c.listeners, l)
		c.mu.Unlock()
		l.Stop()
	}
}

// LossSignal returns a channel that closes when trust in the current
// connection ends under policy p: at the next Suspended or Lost for
// StandardErrorPolicy, at the next Lost for SessionErrorPolicy, and at
// Close for both. If that trust has already ended (the client is not
// connected now), the channel is already closed. Locks take it at the
// moment they are acquired, as their Lost() signal. Before Start, and for
// a nil client, it is closed: there is nothing to trust yet.
func (c *Client) LossSignal(p ErrorPolicy) <-chan struct{} {
	if c == nil {
		return chans.Closed()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.connLoss
	if p == SessionErrorPolicy {
		ch = c.sessLoss
	}
	if ch == nil { // a zero Client
		return chans.Closed()
	}
	return ch
}

// NegotiatedSessionTimeout returns the session timeout the server granted
// in the current connection's handshake (the server clamps the requested
// one to its limits, by default [2, 20] × tickTime), or 0 before the first
// handshake. The client's loss timing uses it.
func (c *Client) NegotiatedSessionTimeout() time.Duration {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wire == nil {
		return 0
	}
	return c.wire.Negotiated()
}

type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Printf(format string, args ...any) {
	a.l.Debug(fmt.Sprintf("zk: "+format, args...))
}
