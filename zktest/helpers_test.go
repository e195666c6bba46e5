package zktest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestMain(m *testing.M) { Main(m) }

// nopLogger silences go-zookeeper.
type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// testConn is a go-zookeeper connection and the session states it reported.
type testConn struct {
	*zk.Conn

	mu     sync.Mutex
	states []zk.State
	next   int           // states before next have been consumed by waitState
	notify chan struct{} // signalled after each new state
}

// connect opens a go-zookeeper connection to servers (a connect string),
// with go-zookeeper's options opts, and waits for its session. t.Cleanup
// closes it.
func connect(t *testing.T, servers string, sessionTimeout time.Duration, opts ...func(*zk.Conn)) *testConn {
	t.Helper()
	c := &testConn{notify: make(chan struct{}, 1)}
	record := func(e zk.Event) {
		if e.Type != zk.EventSession {
			return
		}
		c.mu.Lock()
		c.states = append(c.states, e.State)
		c.mu.Unlock()
		select {
		case c.notify <- struct{}{}:
		default:
		}
	}
	apply := func(c *zk.Conn) {
		for _, o := range opts {
			o(c)
		}
	}
	conn, _, err := zk.Connect(strings.Split(servers, ","), sessionTimeout,
		zk.WithLogger(nopLogger{}), zk.WithEventCallback(record), apply)
	if err != nil {
		t.Fatalf("zk.Connect(%s): %v", servers, err)
	}
	c.Conn = conn
	t.Cleanup(conn.Close)
	c.waitState(t, zk.StateHasSession)
	return c
}

// waitState waits until the client reports want, after the states consumed
// by earlier calls. The bound only keeps a broken test from hanging.
func (c *testConn) waitState(t *testing.T, want zk.State) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		for c.next < len(c.states) {
			s := c.states[c.next]
			c.next++
			if s == want {
				c.mu.Unlock()
				return
			}
		}
		seen := append([]zk.State(nil), c.states...)
		c.mu.Unlock()
		select {
		case <-c.notify:
		case <-timeout:
			t.Fatalf("session state %v never came; saw %v", want, seen)
		}
	}
}

// needControl skips a test that needs fault control when the cluster is an
// external server.
func needControl(t *testing.T, c *Cluster) {
	t.Helper()
	if len(c.Servers()) == 0 {
		t.Skipf("needs fault control; %v is external", c)
	}
}

// testCtx returns a context for one step of a test.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// paths counts the paths uniquePath has made.
var paths atomic.Int64

// uniquePath returns a path on the shared server for this run of the
// calling test, so that -count=N runs do not meet each other's nodes.
func uniquePath(t *testing.T) string {
	return fmt.Sprintf("/%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), paths.Add(1))
}
