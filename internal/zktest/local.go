package zktest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// defaultJarDir is where Debian's zookeeper package puts its jars.
const defaultJarDir = "/usr/share/java"

// serverJars are the jars, in defaultJarDir, that a server needs. The first
// two are required; a missing one of the others is left out.
var serverJars = []string{
	"zookeeper.jar", "zookeeper-jute.jar",
	"slf4j-api.jar", "metrics-core.jar", "commons-cli.jar", "commons-io.jar", "snappy-java.jar",
	"netty-buffer.jar", "netty-common.jar", "netty-handler.jar", "netty-transport.jar",
	"netty-resolver.jar", "netty-codec.jar",
	"netty-transport-native-epoll.jar", "netty-transport-native-unix-common.jar",
}

// loggingJars are slf4j bindings in order of preference. Without one, slf4j
// logs nothing and says so once.
var loggingJars = []string{"slf4j-simple.jar", "slf4j-nop.jar"}

// jvmFlags start a small JVM fast; the properties make containers reaped
// quickly and keep the server off ports and files the tests do not use.
var jvmFlags = []string{
	"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
	"-Djava.net.preferIPv4Stack=true",
	"-Dznode.container.checkIntervalMs=500",
	"-Dzookeeper.jmx.log4j.disable=true",
	"-Dzookeeper.admin.enableServer=false",
	"-Dorg.slf4j.simpleLogger.showDateTime=true",
	"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
}

// install is an installed ZooKeeper: a java binary and a classpath.
type install struct {
	java      string
	classpath string
}

// findInstall locates java and the server's jars: every jar in ZK_TEST_JARS
// when it is set (a release's lib/ directory), else serverJars in
// /usr/share/java.
func findInstall() (install, error) {
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	java, err := exec.LookPath(java)
	if err != nil {
		return install{}, fmt.Errorf("zktest: no java for a local ZooKeeper (apt-get install zookeeper): %w", err)
	}
	if dir := os.Getenv("ZK_TEST_JARS"); dir != "" {
		jars, err := filepath.Glob(filepath.Join(dir, "*.jar"))
		if err != nil || len(jars) == 0 {
			return install{}, fmt.Errorf("zktest: no jars in ZK_TEST_JARS=%s", dir)
		}
		return install{java: java, classpath: strings.Join(jars, ":")}, nil
	}
	var jars []string
	for i, name := range serverJars {
		path := filepath.Join(defaultJarDir, name)
		if _, err := os.Stat(path); err != nil {
			if i < 2 {
				return install{}, fmt.Errorf("zktest: no local ZooKeeper (apt-get install zookeeper): %w", err)
			}
			continue
		}
		jars = append(jars, path)
	}
	for _, name := range loggingJars {
		path := filepath.Join(defaultJarDir, name)
		if _, err := os.Stat(path); err == nil {
			jars = append(jars, path)
			break
		}
	}
	return install{java: java, classpath: strings.Join(jars, ":")}, nil
}

// StartLocal starts n servers from the local ZooKeeper install, on free
// loopback ports in a new temporary directory, and waits until every one
// serves clients. One server runs standalone (ZooKeeperServerMain); more form
// an ensemble (QuorumPeerMain). The caller must Close the Cluster.
func StartLocal(ctx context.Context, n int) (*Cluster, error) {
	return StartLocalWith(ctx, n, Config{})
}

// StartLocalWith is [StartLocal] with cfg in every server's zoo.cfg. An
// invalid cfg is an error before anything starts.
func StartLocalWith(ctx context.Context, n int, cfg Config) (*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("zktest: StartLocal(%d): need at least one server", n)
	}
	zooCfg, err := cfg.zooCfg()
	if err != nil {
		return nil, err
	}
	inst, err := findInstall()
	if err != nil {
		return nil, err
	}
	// Another process may take a port between our probe and the server's
	// bind; try again on fresh ports.
	for attempt := 1; ; attempt++ {
		c, err := startLocal(ctx, inst, n, zooCfg)
		if err == nil || attempt == 3 || !strings.Contains(err.Error(), "Address already in use") {
			return c, err
		}
	}
}

// sweepOnce makes each process clean up after dead ones once.
var sweepOnce sync.Once

// startLocal starts n servers whose zoo.cfg holds timing, from Config.zooCfg.
func startLocal(ctx context.Context, inst install, n int, timing string) (*Cluster, error) {
	sweepOnce.Do(sweepStale)
	dir, err := os.MkdirTemp("", "zktest-*")
	if err != nil {
		return nil, fmt.Errorf("zktest: %w", err)
	}
	c := &Cluster{source: "local ZooKeeper", dir: dir}
	owner := []byte(strconv.Itoa(os.Getpid()) + "\n")
	if err := os.WriteFile(filepath.Join(dir, ownerFile), owner, 0o644); err != nil {
		return nil, errors.Join(fmt.Errorf("zktest: %w", err), c.Close())
	}
	ports, err := freePorts(3 * n)
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "initLimit=10\nsyncLimit=5\n")
	fmt.Fprintf(&cfg, "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n")
	fmt.Fprintf(&cfg, "4lw.commands.whitelist=*\nmaxClientCnxns=0\n")
	for i := 1; n > 1 && i <= n; i++ {
		fmt.Fprintf(&cfg, "server.%d=127.0.0.1:%d:%d\n", i, ports[3*i-2], ports[3*i-1])
	}
	main := "org.apache.zookeeper.server.ZooKeeperServerMain"
	if n > 1 {
		main = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
	}
	var addrs []string
	for i := 1; i <= n; i++ {
		sdir := filepath.Join(dir, "s"+strconv.Itoa(i))
		data := filepath.Join(sdir, "data")
		if err := os.MkdirAll(data, 0o755); err != nil {
			return nil, errors.Join(fmt.Errorf("zktest: %w", err), c.Close())
		}
		conf := fmt.Sprintf("%sdataDir=%s\nclientPort=%d\n%s", cfg.String(), data, ports[3*i-3], timing)
		cfgPath := filepath.Join(sdir, "zoo.cfg")
		err := os.WriteFile(cfgPath, []byte(conf), 0o644)
		if err == nil && n > 1 {
			err = os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(i)+"\n"), 0o644)
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("zktest: %w", err), c.Close())
		}
		args := append(append([]string{}, jvmFlags...), "-cp", inst.classpath, main, cfgPath)
		s := &Server{
			ID:       i,
			addr:     net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[3*i-3])),
			ensemble: n > 1,
			b:        &process{java: inst.java, args: args, dir: sdir, logPath: filepath.Join(sdir, "server.log")},
		}
		c.servers = append(c.servers, s)
		addrs = append(addrs, s.addr)
	}
	c.connect = strings.Join(addrs, ",")

	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, s := range c.servers {
		wg.Go(func() { errs[i] = s.start(ctx) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// freePorts returns n distinct free TCP ports on 127.0.0.1. They are free
// when probed; nothing holds them afterwards.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("zktest: find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
