// Package docker runs zktest's standalone servers in Docker containers,
// through testcontainers-go: a zookeeper:3.9 container per server, as
// curator-test users get from Testcontainers' ZooKeeper image.
//
// It is a module of its own, so that only the tests that want containers
// add a Docker client to their module graph. A test binary opts in by
// importing it for its side effect, which registers it with zktest:
//
//	import _ "github.com/go-curator/curator/zktest/docker"
//
// From then on [zktest.Start], [zktest.Shared] and [zktest.StartAny] run a
// standalone server in a container when a Docker engine answers within two
// seconds, before they try the local install. ZK_TEST_CONNECT still comes
// first, ZK_TEST_DOCKER=0 turns containers off, and ZK_TEST_VERBOSE lets
// testcontainers log. Ensembles and servers with a zktest.Config always
// come from the local install.
//
// A container's server runs with the local servers' settings: tickTime=500,
// maxSessionTimeout=60000 and znode.container.checkIntervalMs=500. Its
// client port is published on a fixed host port, so that Server.Stop and
// Server.Start keep its address. Server.PID is 0: the process belongs to
// the Docker engine.
package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/go-curator/curator/zktest"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// Image is the image of a container's server.
const Image = "zookeeper:3.9"

// probeTimeout bounds the check for a Docker engine.
const probeTimeout = 2 * time.Second

func init() { zktest.RegisterContainerRuntime(runtime{}) }

// runtime is the zktest.ContainerRuntime of Docker.
type runtime struct{}

func (runtime) String() string { return "docker " + Image }

// Available reports whether a Docker engine answers a ping within two
// seconds. Unless ZK_TEST_VERBOSE is set, it also silences testcontainers'
// default logger, which otherwise prints a banner and every container's
// lifecycle.
func (runtime) Available(ctx context.Context) error {
	if os.Getenv("ZK_TEST_VERBOSE") == "" {
		tclog.SetDefault(tclog.NewNoopLogger())
	}
	return probe(ctx)
}

// probe pings the Docker engine that testcontainers would use.
func probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
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

// Run starts a server in a container whose client port is published on
// hostPort.
func (runtime) Run(ctx context.Context, hostPort int) (zktest.Container, error) {
	clientPort := network.MustParsePort("2181/tcp")
	req := testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:        Image,
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
					clientPort: {{HostPort: strconv.Itoa(hostPort)}},
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
		return nil, err
	}
	return box{ctr}, nil
}

// box is a running or stopped container.
type box struct{ ctr testcontainers.Container }

func (b box) Host(ctx context.Context) (string, error) { return b.ctr.Host(ctx) }

func (b box) Start(ctx context.Context) error { return b.ctr.Start(ctx) }

func (b box) Stop(ctx context.Context, grace time.Duration) error {
	return b.ctr.Stop(ctx, &grace)
}

func (b box) Logs(ctx context.Context) ([]byte, error) {
	r, err := b.ctr.Logs(ctx)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func (b box) Terminate(ctx context.Context) error { return b.ctr.Terminate(ctx) }
