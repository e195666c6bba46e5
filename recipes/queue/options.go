package queue

import (
	"fmt"

	"github.com/go-curator/curator/framework"
)

// ErrorMode says what a lock-safe consumer does with an item whose
// consumer returned an error (Curator's ErrorMode).
type ErrorMode int

const (
	// ErrorModeRequeue puts the item back at the tail of the queue, in one
	// multi with the delete of its node (Curator's REQUEUE, the default).
	ErrorModeRequeue ErrorMode = iota
	// ErrorModeDelete deletes the item anyway (Curator's DELETE).
	ErrorModeDelete
)

// String returns Curator's name of the mode.
func (m ErrorMode) String() string {
	switch m {
	case ErrorModeRequeue:
		return "REQUEUE"
	case ErrorModeDelete:
		return "DELETE"
	}
	return fmt.Sprintf("ErrorMode(%d)", int(m))
}

// DefaultMaxBytes is the largest encoded item node a put writes by
// default: ZooKeeper's default jute.maxbuffer (0xfffff bytes) less 1 KB
// for the rest of the request (path, ACL, header).
const DefaultMaxBytes = 0xfffff - 1024

// Option configures a queue. An option given a bad value returns an error
// matching ErrInvalidArgument, which the constructor returns.
type Option func(*config) error

// config is what the Options set.
type config struct {
	lockPath   string
	linePath   string
	errorMode  ErrorMode
	consumer   Consumer
	onError    func(error)
	maxBytes   int
	noLine     bool
	lineSet    bool
	errModeSet bool
}

// WithLockPath makes the queue lock-safe (Curator's lockPath): a consumer
// creates the EPHEMERAL node lockPath/<item node name> before it reads an
// item, and deletes the item and the lock in one multi only after the
// consumer returned nil. See the package doc for the guarantee.
func WithLockPath(p string) Option {
	return func(c *config) error {
		if err := framework.ValidatePath(p); err != nil {
			return err
		}
		if p == "/" {
			return fmt.Errorf("%w %q: the root cannot be a lock path", framework.ErrInvalidPath, p)
		}
		c.lockPath = p
		return nil
	}
}

// WithErrorMode sets what a lock-safe consumer does with an item whose
// consumer failed: ErrorModeRequeue (the default) or ErrorModeDelete.
// Without WithLockPath a consumed item is already deleted and the mode
// has no effect (as in Curator).
func WithErrorMode(m ErrorMode) Option {
	return func(c *config) error {
		if m != ErrorModeRequeue && m != ErrorModeDelete {
			return fmt.Errorf("unknown error mode %v", m)
		}
		c.errorMode, c.errModeSet = m, true
		return nil
	}
}

// WithConsumer makes the queue consume from Start until Close, calling fn
// for each item on the queue's one consuming goroutine. Without it, take
// items from Items; a queue that does neither only produces.
func WithConsumer(fn Consumer) Option {
	return func(c *config) error {
		if fn == nil {
			return fmt.Errorf("nil consumer")
		}
		c.consumer = fn
		return nil
	}
}

// WithLinePath sets the directory where this queue's idle consumers line
// up (see "No herd" in the package doc). It defaults to the queue's path
// with "-line" appended, a sibling of the queue node, so that neither Java
// consumers nor producers see it. Every Go consumer of one queue must use
// the same line path.
func WithLinePath(p string) Option {
	return func(c *config) error {
		if err := framework.ValidatePath(p); err != nil {
			return err
		}
		if p == "/" {
			return fmt.Errorf("%w %q: the root cannot be a line path", framework.ErrInvalidPath, p)
		}
		c.linePath, c.lineSet = p, true
		return nil
	}
}

// WithoutLine makes idle consumers watch the queue directory themselves,
// as Curator's do, instead of lining up: every put then wakes every idle
// consumer. It exists for comparison and for servers where the line's
// directory cannot be created.
func WithoutLine() Option {
	return func(c *config) error { c.noLine = true; return nil }
}

// WithErrorHandler sets a func told of what a consumer skips or cannot do:
// an item that does not decode (matching ErrBadItem), a failed read or
// write that the consumer retries. It is called on the consuming
// goroutine and must not block. Every such error is also logged with the
// client's logger.
func WithErrorHandler(fn func(error)) Option {
	return func(c *config) error {
		if fn == nil {
			return fmt.Errorf("nil error handler")
		}
		c.onError = fn
		return nil
	}
}

// WithMaxBytes sets the largest encoded item node that a put writes
// (DefaultMaxBytes by default); a larger one returns ErrTooLarge. Raise it
// only with the servers' jute.maxbuffer.
func WithMaxBytes(n int) Option {
	return func(c *config) error {
		if n < 16 {
			return fmt.Errorf("max bytes %d: want at least 16", n)
		}
		c.maxBytes = n
		return nil
	}
}
