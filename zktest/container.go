package zktest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// containerImage is the image of a Docker-backed server.
const containerImage = "zookeeper:3.9"

// dockerProbeTimeout bounds the check for a Docker engine.
const dockerProbeTimeout = 2 * time.Second

var (
	dockerOnce sync.Once
	dockerErr  error
)

// dockerAvailable reports, once per process, whether a Docker engine answers
// a ping within two seconds. ZK_TEST_DOCKER=0 turns Docker off. Unless
// ZK_TEST_VERBOSE is set, it also silences testcontainers' default logger,
// which otherwise prints a banner and every container's lifecycle.
func dockerAvailable(ctx context.Context) error {
	if v := os.Getenv("ZK_TEST_DOCKER"); v == "0" || v == "false" {
		return errors.New("turned off by ZK_TEST_DOCKER")
	}
	dockerOnce.Do(func() {
		if os.Getenv("ZK_TEST_VERBOSE") == "" {
			tclog.SetDefault(tclog.NewNoopLogger())
		}
		dockerErr = probeDocker(ctx)
	})
	return dockerErr
}

// probeDocker pings the Docker engine that testcontainers would use.
func probeDocker(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dockerProbeTimeout)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Errorf("no Docker engine: %w", err)
	}
	defer cli.Close()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return fmt.Errorf("no Docker engine: %w", err)
	}
	return nil
}

// startContainer runs one standalone server in a container whose client
// port is published on a fixed host port, so that a restart keeps it.
func startContainer(ctx context.Context) (*Cluster, error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	clientPort := network.MustParsePort("2181/tcp")
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        containerImage,
			ExposedPorts: []string{clientPort.String()},
			Env: map[string]string{
				"ZOO_TICK_TIME":              "500",
				"ZOO_MAX_CLIENT_CNXNS":       "0",
				"ZOO_4LW_COMMANDS_WHITELIST": "*",
				"ZOO_ADMINSERVER_ENABLED":    "false",
				"ZOO_CFG_EXTRA":              "maxSessionTimeout=60000",
				"JVMFLAGS":                   "-Xmx256m -Dznode.container.checkIntervalMs=500",
			},
			HostConfigModifier: func(hc *container.HostConfig) {
				hc.PortBindings = network.PortMap{
					clientPort: {{HostPort: strconv.Itoa(ports[0])}},
				}
			},
		},
		Started: true,
		Logger:  tclog.Default(),
	}
	ctr, err := testcontainers.GenericContainer(ctx, req)
	if err != nil {
		if ctr != nil {
			err = errors.Join(err, ctr.Terminate(context.WithoutCancel(ctx)))
		}
		return nil, fmt.Errorf("zktest: start %s: %w", containerImage, err)
	}
	b := &containerBackend{ctr: ctr}
	host, err := ctr.Host(ctx)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("zktest: %s host: %w", containerImage, err), b.close())
	}
	s := &Server{ID: 1, addr: net.JoinHostPort(host, strconv.Itoa(ports[0])), b: b}
	c := &Cluster{connect: s.addr, servers: []*Server{s}, source: "docker " + containerImage}
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
	ctr     testcontainers.Container
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
	timeout := time.Duration(0)
	if graceful {
		timeout = stopTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout+10*time.Second)
	defer cancel()
	if err := b.ctr.Stop(ctx, &timeout); err != nil {
		return fmt.Errorf("zktest: stop container: %w", err)
	}
	b.stopped = true
	return nil
}

func (b *containerBackend) logTail() string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := b.ctr.Logs(ctx)
	if err != nil {
		return ""
	}
	defer r.Close()
	data, _ := io.ReadAll(r)
	if len(data) > logTailBytes {
		data = data[len(data)-logTailBytes:]
	}
	return fmt.Sprintf("\n--- tail of the container's log ---\n%s", data)
}

func (b *containerBackend) explain() error { return nil }

// pid is 0: the server's process belongs to the Docker engine, not to us.
func (b *containerBackend) pid() int { return 0 }

func (b *containerBackend) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout+10*time.Second)
	defer cancel()
	return b.ctr.Terminate(ctx)
}
