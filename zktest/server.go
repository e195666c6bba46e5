package zktest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// startTimeout bounds how long Start waits for a server to serve clients.
const startTimeout = 60 * time.Second

// stopTimeout bounds a graceful stop before the server is killed.
const stopTimeout = 15 * time.Second

var (
	// ErrNoControl is returned by fault controls of a Cluster that the harness
	// does not run itself (ZK_TEST_CONNECT).
	ErrNoControl = errors.New("zktest: no control over an external server (ZK_TEST_CONNECT); fault control needs the local ZooKeeper install or a container")

	// ErrClosed is returned by Start after the Cluster has been closed.
	ErrClosed = errors.New("zktest: cluster closed")
)

// Server is one ZooKeeper server of a Cluster.
//
// Its methods are safe for concurrent use; Start, Stop and Kill of one Server
// run one at a time.
type Server struct {
	// ID is the server's id: its myid in an ensemble, 1 for a standalone server.
	ID int

	addr       string
	secureAddr string // the TLS client address, "" without Config.TLS (tls.go)
	quorumAddr string // the address followers connect to when it leads; "" but in a local ensemble
	spec       string // its dynamic-config statement, "" but in a reconfigurable cluster (reconfig.go)
	ensemble   bool

	mu     sync.Mutex
	b      backend
	closed bool
}

// backend runs one server: a local JVM or a container.
type backend interface {
	// start launches the server without waiting for it to serve. The
	// returned channel is closed when the server process ends.
	start(ctx context.Context) (exited <-chan struct{}, err error)
	// stop ends the server, gracefully or not. Stopping a stopped server
	// does nothing.
	stop(graceful bool) error
	// logTail returns the end of the server's log, for error messages.
	logTail() string
	// explain returns what the server's log says about why it did not
	// start, as an error that says what to do, or nil.
	explain() error
	// pid returns the process ID of the running server, or 0.
	pid() int
	// pause stops the running server's processes where they are (SIGSTOP),
	// or lets them go on (SIGCONT) when pause is false.
	pause(pause bool) error
	// close ends the server and releases everything it holds.
	close() error
}

// Addr returns the server's client address, "127.0.0.1:port".
func (s *Server) Addr() string { return s.addr }

// QuorumAddr returns the address on which the server, when it leads,
// takes its followers' connections ("127.0.0.1:port"), or "" for a server
// that is not a member of a local ensemble. A test can cut one follower's
// link to the leader there (the follower connects from a port of its own).
func (s *Server) QuorumAddr() string { return s.quorumAddr }

// String returns "server ID (addr)".
func (s *Server) String() string { return fmt.Sprintf("server %d (%s)", s.ID, s.addr) }

// Start restarts a stopped server on the same ports and data directory, and
// waits until it serves clients: a standalone server until it answers srvr,
// an ensemble member until it reports Mode leader or follower (so it waits
// while a quorum is missing). It fails after a minute, with the tail of the
// server's log. Starting a running server is an error.
func (s *Server) Start() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	return s.start(ctx)
}

func (s *Server) start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	exited, err := s.b.start(ctx)
	if err != nil {
		return fmt.Errorf("zktest: start %v: %w%s", s, err, s.b.logTail())
	}
	if err := waitServing(ctx, s.addr, exited); err != nil {
		tail := s.b.logTail()
		if why := s.b.explain(); why != nil {
			err = fmt.Errorf("zktest: start %v: %w; %w", s, why, err)
		}
		return errors.Join(fmt.Errorf("%w%s", err, tail), s.b.stop(false))
	}
	return nil
}

// PID returns the process ID of a running local server, or 0 when it does
// not run (stopped, killed, closed, or exited on its own) or runs in a
// container. While Start, Stop or Kill runs, PID waits for it.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.pid()
}

// Pause freezes the running server (SIGSTOP to its process group): it
// keeps its sockets open but neither reads nor writes, as a server in a
// long GC pause or a stopped VM does. Resume lets it go on. Stop, Kill and
// Close also work on a paused server. Only a local server can be paused;
// pausing a stopped server is an error.
func (s *Server) Pause() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.b.pause(true); err != nil {
		return fmt.Errorf("zktest: pause %v: %w", s, err)
	}
	return nil
}

// Resume lets a paused server go on (SIGCONT). Resuming a server that is
// not paused does nothing.
func (s *Server) Resume() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.b.pause(false); err != nil {
		return fmt.Errorf("zktest: resume %v: %w", s, err)
	}
	return nil
}

// Stop stops the server gracefully (SIGTERM) and waits for it to exit. A
// server that does not exit within 15 s is killed. Stopping a stopped server
// does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.stop(true)
}

// Kill kills the server (SIGKILL) and waits for it to exit. Killing a stopped
// server does nothing.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.stop(false)
}

// FourLetter sends a four-letter word such as "srvr", "wchc", "wchs", "cons"
// or "mntr" to the server and returns its answer.
func (s *Server) FourLetter(cmd string) (string, error) {
	return fourLetter(context.Background(), s.addr, cmd)
}

// Mode returns the server's mode from srvr: "standalone", "leader",
// "follower", or "" while it does not serve.
func (s *Server) Mode() (string, error) {
	answer, err := s.FourLetter("srvr")
	if err != nil {
		return "", err
	}
	return srvrMode(answer), nil
}

func (s *Server) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.b.close()
}

// logTailBytes is how much of a server's log goes into an error.
const logTailBytes = 3000

// tailFile returns the last n bytes of the file at path, formatted for the end
// of an error message, or "" if there is nothing to show.
func tailFile(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-n, 0)
	b, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil || len(b) == 0 {
		return ""
	}
	return fmt.Sprintf("\n--- tail of %s ---\n%s", path, strings.TrimRight(string(b), "\n"))
}
