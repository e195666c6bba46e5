package zktest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"
)

// A ContainerRuntime runs standalone ZooKeeper servers in containers.
// zktest itself has none, so that a test that uses only the local install
// adds no container client to its module graph. The module
// github.com/go-curator/curator/zktest/docker registers one (testcontainers-go
// and a Docker engine) when a test binary imports it:
//
//	import _ "github.com/go-curator/curator/zktest/docker"
//
// A runtime serves [Start], [Shared] and [StartAny] for one standalone
// server; ensembles and servers with a [Config] always come from the local
// install.
type ContainerRuntime interface {
	// Available reports, within ctx, whether containers can run now; its
	// error says why not. zktest asks once per process.
	Available(ctx context.Context) error
	// Run starts one standalone server whose client port is published on
	// hostPort of the host, and returns it without waiting for it to serve.
	Run(ctx context.Context, hostPort int) (Container, error)
	// String names the runtime and image, such as "docker zookeeper:3.9".
	String() string
}

// A Container is one server that a [ContainerRuntime] runs.
type Container interface {
	// Host returns the host on which the server's client port is published.
	Host(ctx context.Context) (string, error)
	// Start starts a stopped container again, with the same port and data.
	Start(ctx context.Context) error
	// Stop stops the server, killing it after grace (at once if zero).
	Stop(ctx context.Context, grace time.Duration) error
	// Logs returns the container's log so far.
	Logs(ctx context.Context) ([]byte, error)
	// Terminate removes the container.
	Terminate(ctx context.Context) error
}

var containers struct {
	mu      sync.Mutex
	runtime ContainerRuntime
	asked   bool  // whether runtime's Available was asked
	err     error // its answer
}

// RegisterContainerRuntime makes r the source of containers, tried after
// ZK_TEST_CONNECT and before the local install; a later call replaces it, and
// nil removes it. The zktest/docker package calls it from its init.
func RegisterContainerRuntime(r ContainerRuntime) {
	containers.mu.Lock()
	defer containers.mu.Unlock()
	containers.runtime, containers.asked, containers.err = r, false, nil
}

// containerRuntime returns the registered runtime if it can run containers
// now, or an error that says why not and what to do. ZK_TEST_DOCKER=0 turns
// containers off.
func containerRuntime(ctx context.Context) (ContainerRuntime, error) {
	if v := os.Getenv("ZK_TEST_DOCKER"); v == "0" || v == "false" {
		return nil, errors.New("turned off by ZK_TEST_DOCKER")
	}
	containers.mu.Lock()
	defer containers.mu.Unlock()
	r := containers.runtime
	if r == nil {
		return nil, errors.New(`not linked in (import _ "github.com/go-curator/curator/zktest/docker" in a test to use it)`)
	}
	if !containers.asked {
		containers.asked, containers.err = true, r.Available(ctx)
	}
	if containers.err != nil {
		return nil, containers.err
	}
	return r, nil
}

// startContainer runs one standalone server from r on a fixed host port,
// so that a restart keeps it, and waits until it serves.
func startContainer(ctx context.Context, r ContainerRuntime) (*Cluster, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	ctr, err := r.Run(ctx, ports[0])
	if err != nil {
		return nil, fmt.Errorf("zktest: start %v: %w", r, err)
	}
	b := &containerBackend{ctr: ctr}
	host, err := ctr.Host(ctx)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("zktest: %v host: %w", r, err), b.close())
	}
	s := &Server{ID: 1, addr: net.JoinHostPort(host, strconv.Itoa(ports[0])), b: b}
	c := &Cluster{connect: s.addr, servers: []*Server{s}, source: r.String()}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if err := waitServing(ctx, s.addr, nil); err != nil {
		return nil, errors.Join(fmt.Errorf("%w%s", err, b.logTail()), c.Close())
	}
	return c, nil
}

// containerBackend runs a server in a container. The container is created
// running; stop stops it and start starts it again.
type containerBackend struct {
	ctr     Container
	stopped bool
}

func (b *containerBackend) start(ctx context.Context) (<-chan struct{}, error) {
	if !b.stopped {
		return nil, errors.New("already running")
	}
	if err := b.ctr.Start(ctx); err != nil {
		return nil, err
	}
	b.stopped = false
	return nil, nil // a nil channel: the container's exit is not watched
}

func (b *containerBackend) stop(graceful bool) error {
	if b.stopped {
		return nil
	}
	grace := time.Duration(0)
	if graceful {
		grace = stopTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout+10*time.Second)
	defer cancel()
	if err := b.ctr.Stop(ctx, grace); err != nil {
		return fmt.Errorf("zktest: stop container: %w", err)
	}
	b.stopped = true
	return nil
}

func (b *containerBackend) logTail() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	data, err := b.ctr.Logs(ctx)
	if err != nil {
		return ""
	}
	if len(data) > logTailBytes {
		data = data[len(data)-logTailBytes:]
	}
	return fmt.Sprintf("\n--- tail of the container's log ---\n%s", data)
}

func (b *containerBackend) explain() error { return nil }

// pause is not supported: the harness drives containers only through
// ContainerRuntime, which has no pause.
func (b *containerBackend) pause(pause bool) error {
	if !pause {
		return nil
	}
	return errors.New("a server in a container cannot be paused; use the local install")
}

// pid is 0: the server's process belongs to the container engine, not to us.
func (b *containerBackend) pid() int { return 0 }

func (b *containerBackend) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout+10*time.Second)
	defer cancel()
	return b.ctr.Terminate(ctx)
}
