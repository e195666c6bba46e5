package framework

import (
	"context"
	"errors"
	"time"

	"github.com/go-curator/curator/internal/queue"
	"github.com/go-zookeeper/zk"
)

// Metrics is the client's metrics hook: a set of funcs the client, and the
// recipes built on it, call as they work, as net/http/httptrace's
// ClientTrace is. Every func is optional; a nil one is never called, and
// the zero Metrics (no hook at all, the default) costs one comparison per
// operation. Set it with [Builder.Metrics]; an adapter for a metrics
// library fills it (contrib/prometheus does it for Prometheus's client).
// New funcs may be added to the struct: set the fields by name.
//
// The funcs are called synchronously, on the goroutine that did the work,
// and may be called by many goroutines at once: OpDone and Retrying on the
// caller's goroutine of the operation, WatchDelivered on the goroutine of
// a lasting watch or on go-zookeeper's event goroutine (one-shot watches),
// the acquire and hold funcs on the caller's goroutine of the recipe (a
// leader latch's term starts and ends on the latch's own goroutine). They
// must therefore be fast and must not block: a slow func slows the
// operation it reports, and one that blocks stalls it (on the event
// goroutine, it stalls every watch and state change of the client).
// Update a counter, a gauge or a histogram; do not do I/O. StateChanged is the one
// exception: the client changes state under its own lock, so it is called
// after the change, from a goroutine of its own, in order; Close waits for
// its last call (the one that reports Closed), for at most two seconds.
//
// A panic in a func is not recovered: it is a bug in the hook, and it
// crashes the program as any unrecovered panic does, rather than leave the
// metrics silently wrong. net/http's httptrace, gRPC's stats handlers and
// go-redis's hooks do the same.
type Metrics struct {
	// OpDone is called when an operation ends: once per call of a
	// builder's ForPath (or a transaction's Commit), whatever the number
	// of attempts, with the time spent in the retry loop (waiting for a
	// connection, every attempt and every sleep between them).
	OpDone func(OpInfo)
	// Retrying is called each time the retry loop is about to sleep and
	// try an operation again.
	Retrying func(RetryInfo)
	// StateChanged is called after each change of the connection state,
	// and after Close with Closed.
	StateChanged func(StateInfo)
	// WatchDelivered is called for each watch event the client delivers:
	// each event a lasting watch ([Client.Watch]) sends on its channel, and
	// the one event of each one-shot watch (the W reads).
	WatchDelivered func(WatchInfo)
	// AcquireStarted is called when a lock or lease acquire of a recipe
	// starts, before it waits. One AcquireDone of the same Kind follows
	// each call, however the acquire ends, so AcquireStarted calls less
	// AcquireDone calls is the number of acquires waiting now.
	AcquireStarted func(AcquireStartInfo)
	// AcquireDone is called when a lock or lease acquire of a recipe ends,
	// with the time it waited and how it ended. A nested acquire of a
	// reentrant lock (no wait, no I/O) is not reported.
	AcquireDone func(AcquireInfo)
	// HoldStarted is called when a hold or lease is granted, or a leader's
	// term starts. One Released of the same Kind follows each call when
	// the hold ends, so HoldStarted calls less Released calls is the
	// number of holds held now.
	HoldStarted func(HoldStartInfo)
	// Released is called when a hold or lease is released (the last
	// release of a reentrant hold), or a leader's term ends, with the time
	// it was held. A hold the caller never releases is not reported, and
	// counts as held, even once lost: each recipe asks its caller to
	// release a lost hold (a leader latch's term alone ends by itself).
	Released func(HoldInfo)
}

// The operation names of OpInfo and RetryInfo, as ZooKeeper's protocol
// names the requests.
const (
	OpNameCreate      = "create"      // Create().ForPath
	OpNameDelete      = "delete"      // Delete().ForPath
	OpNameExists      = "exists"      // CheckExists().ForPath(W)
	OpNameGetData     = "getData"     // GetData().ForPath(W)
	OpNameSetData     = "setData"     // SetData().ForPath
	OpNameGetChildren = "getChildren" // GetChildren().ForPath(W, Stat), FindProtected
	OpNameSync        = "sync"        // Sync().ForPath
	OpNameMulti       = "multi"       // Transaction().Commit
	OpNameWatch       = "watch"       // a lasting watch's read that sets its watches
	OpNameRetry       = "retry"       // Client.Retry and Client.RetryWrite: the caller's own operation
)

// OpInfo describes one operation that ended.
type OpInfo struct {
	// Op is the operation's name, one of the OpName constants.
	Op string
	// Duration is the time spent in the retry loop.
	Duration time.Duration
	// Err is the error of the last attempt, nil on success: the server's
	// answer (zk.ErrNoNode, zk.ErrNodeExists, ...; a Quietly delete of a
	// missing node reports zk.ErrNoNode and returns nil), or the error that
	// ended the retries (a connection error, ErrConnectionTimeout, the ctx
	// error, ErrClosed).
	Err error
}

// Failed reports whether the operation failed: it ended in an error that
// is not one of the server's definite answers about the data (no node,
// node exists, bad version, not empty: [ErrNoNode], [ErrNodeExists],
// [ErrBadVersion], [ErrNotEmpty], or go-zookeeper's). Those answers are
// outcomes a caller often expects, as a lock waiter whose predecessor is
// already gone, or a create that finds its node made; a connection loss,
// a session expiry, a timeout, a cancelled ctx, a closed client, a
// refused authorization and any other error are failures. It reports
// false for a success.
func (i OpInfo) Failed() bool {
	if i.Err == nil {
		return false
	}
	for _, f := range retryEnds {
		if errors.Is(i.Err, f) {
			return true // whatever an earlier attempt's answer was
		}
	}
	for _, a := range definiteAnswers {
		if errors.Is(i.Err, a) {
			return false
		}
	}
	return true
}

// definiteAnswers are the errors OpInfo.Failed does not count: the
// framework's sentinels and go-zookeeper's, since an error of the caller's
// own operation (Client.Retry) may hold either alone.
var definiteAnswers = []error{ErrNoNode, ErrNodeExists, ErrBadVersion, ErrNotEmpty,
	zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion, zk.ErrNotEmpty}

// retryEnds are the errors that end the retry loop before an answer:
// OpInfo.Failed counts them even when they carry the last attempt's
// error.
var retryEnds = []error{context.Canceled, context.DeadlineExceeded, ErrClosed, ErrConnectionTimeout}

// RetryInfo describes one retry of an operation.
type RetryInfo struct {
	Op      string        // the operation's name, one of the OpName constants
	Attempt int           // the attempt that failed: 1 for the first
	Sleep   time.Duration // the wait before the next attempt
	Err     error         // the retryable error of the failed attempt
}

// StateInfo describes a change of the connection state.
type StateInfo struct {
	State ConnectionState
	// SessionID is the ID of the session the state is about: the new
	// session for Connected and Reconnected, the lost one for Lost, 0 if
	// there was none yet.
	SessionID int64
}

// WatchInfo describes one delivered watch event.
type WatchInfo struct {
	// Lasting is true for a lasting watch's event, false for a one-shot
	// watch's.
	Lasting bool
	// Type is the event's type: for a lasting watch, its WatchEventType's
	// name ("CREATED", "CHANGED", "DELETED", "CHILDREN_CHANGED", "SYNCED",
	// "RESYNCED", "FAILED"); for a one-shot watch, the same names for
	// ZooKeeper's event types ("CREATED", "CHANGED", "DELETED",
	// "CHILDREN_CHANGED"), or "NOT_WATCHING" when its session ended or the
	// client closed.
	Type string
}

// The recipe kinds of AcquireInfo and HoldInfo.
const (
	KindMutex          = "mutex"          // recipes/mutex
	KindReadLock       = "rwlock-read"    // recipes/rwlock, read side
	KindWriteLock      = "rwlock-write"   // recipes/rwlock, write side
	KindSemaphore      = "semaphorev2"    // recipes/semaphorev2: an acquire call, and each lease (semaphoremutex's too)
	KindLeaderLatch    = "leaderlatch"    // recipes/leaderlatch: Await, and each term as leader
	KindLeaderSelector = "leaderselector" // recipes/leaderselector: Campaign, and each term until released
)

// AcquireOutcome says how a lock or lease acquire ended.
type AcquireOutcome int

// The outcomes of an acquire.
const (
	// OutcomeAcquired: the lock or lease is held.
	OutcomeAcquired AcquireOutcome = iota
	// OutcomeTimeout: the wait's bound passed first (TryAcquire's wait, or
	// the ctx's deadline).
	OutcomeTimeout
	// OutcomeCancelled: the ctx was cancelled first.
	OutcomeCancelled
	// OutcomeError: the acquire failed with another error.
	OutcomeError
)

var outcomeNames = [...]string{"acquired", "timeout", "cancelled", "error"}

// String returns the outcome's name: "acquired", "timeout", "cancelled",
// "error", or "unknown".
func (o AcquireOutcome) String() string {
	if o >= 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// OutcomeOf returns the outcome of an acquire that returned ok and err:
// acquired for ok, timeout for a wait that ran out (not ok, no error, or a
// deadline), cancelled for a cancelled ctx, error otherwise.
func OutcomeOf(ok bool, err error) AcquireOutcome {
	switch {
	case err == nil && ok:
		return OutcomeAcquired
	case err == nil, errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	case errors.Is(err, context.Canceled):
		return OutcomeCancelled
	}
	return OutcomeError
}

// AcquireStartInfo describes one lock or lease acquire that started.
type AcquireStartInfo struct {
	Kind string // the recipe, one of the Kind constants
}

// AcquireInfo describes one lock or lease acquire that ended.
type AcquireInfo struct {
	Kind     string         // the recipe, one of the Kind constants
	Duration time.Duration  // the time from the call to its end
	Outcome  AcquireOutcome // how it ended
	Err      error          // the error, for OutcomeError and OutcomeCancelled
}

// HoldStartInfo describes one hold or lease that was granted, or one
// leader's term that started.
type HoldStartInfo struct {
	Kind string // the recipe, one of the Kind constants
}

// HoldInfo describes one hold or lease that was released.
type HoldInfo struct {
	Kind     string        // the recipe, one of the Kind constants
	Duration time.Duration // the time from the grant to the release
	// Lost is true if the hold was lost before it was released: a lock's
	// or lease's Lost channel had closed (a connection or session loss, or
	// the client's Close), or a leader's term ended without Release or
	// Close. Duration still runs to the release.
	Lost bool
}

// Metrics sets the client's metrics hook (see [Metrics]); there is none by
// default. The funcs are copied: changing m afterwards does not change the
// client's hook.
func (b *Builder) Metrics(m Metrics) *Builder { b.obs.m = m; return b }

// Metrics returns the hook set with [Builder.Metrics], or the zero Metrics.
// Recipes call its AcquireStarted, AcquireDone, HoldStarted and Released;
// a recipe of your own may too, pairing each start with its end.
func (c *Client) Metrics() Metrics {
	if c == nil {
		return Metrics{}
	}
	return c.obsOpts.m
}

// obsOptions holds the Builder's observability settings, the metrics
// hook, and, in a Client, the delivery of state changes to it.
type obsOptions struct {
	m Metrics

	// Guarded by the Client's mu.
	states *queue.Queue[StateInfo] // to m.StateChanged, made at the first state
	armed  bool                    // the Close report is armed
}

// check reports a bad observability setting when Build runs. Every
// Metrics is valid: its nil funcs are skipped.
func (o *obsOptions) check() error { return nil }

// retryOp is RetryWrite for the framework's own operations: it runs op
// in the retry loop under the name name, and reports the operation and
// its retries to the metrics hook.
func (c *Client) retryOp(ctx context.Context, name string, op func(maybe bool) error) (bool, error) {
	return c.retryLoop(ctx, name, c.policy, op)
}

// retryRead is Retry for the framework's own operations (see retryOp).
func (c *Client) retryRead(ctx context.Context, name string, op func() error) error {
	_, err := c.retryLoop(ctx, name, c.policy, func(bool) error { return op() })
	return err
}

// opDone reports an operation to the hook, if it has OpDone.
func (c *Client) opDone(name string, start time.Time, err error) {
	if f := c.obsOpts.m.OpDone; f != nil {
		f(OpInfo{Op: name, Duration: time.Since(start), Err: err})
	}
}

// observeState reports s to the hook's StateChanged from the client's
// queue, and arms the Close report the first time. Called with c.mu held,
// after the change.
func (c *Client) observeState(s ConnectionState, session int64) {
	c.armCloseReport()
	if q := c.obsOpts.states; q != nil {
		q.Post(StateInfo{State: s, SessionID: session})
	}
}

// armCloseReport arranges, once, for Close to log "closed" and report
// Closed to the hook, and makes the hook's state queue. Close waits for
// both, since the client's WaitGroup counts them. Called with c.mu held,
// while the client is not closed.
func (c *Client) armCloseReport() {
	o := &c.obsOpts
	if o.armed || c.closed || c.ctx == nil {
		return
	}
	o.armed = true
	if f := o.m.StateChanged; f != nil {
		o.states = queue.New(f)
	}
	c.wg.Add(1)
	context.AfterFunc(c.ctx, func() {
		defer c.wg.Done()
		c.mu.Lock()
		id, q := c.sessionID, o.states
		c.mu.Unlock()
		c.logger.Info("framework: closed", "session", sessionHex(id))
		if q == nil {
			return
		}
		q.Post(StateInfo{State: Closed, SessionID: id})
		q.Finish()
		// As for listeners: a StateChanged that does not return (or that
		// called Close) is not waited for past the bound.
		bound := time.NewTimer(listenerJoinBound)
		defer bound.Stop()
		select {
		case <-q.Done():
		case <-bound.C:
			c.logger.Warn("framework: close: the metrics hook's StateChanged did not return; not waiting for it")
		}
	})
}

// watchDelivered reports a delivered watch event to the hook.
func (c *Client) watchDelivered(lasting bool, typ string) {
	if f := c.obsOpts.m.WatchDelivered; f != nil {
		f(WatchInfo{Lasting: lasting, Type: typ})
	}
}
