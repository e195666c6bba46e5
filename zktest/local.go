package zktest

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	// jarsFrom says where the jars come from, for messages:
	// "ZK_TEST_JARS=dir" or defaultJarDir.
	jarsFrom string
}

// serverMain is the class that every ZooKeeper server jar holds; findInstall
// looks for it to tell a ZooKeeper install from other jars.
const serverMain = "org/apache/zookeeper/server/ZooKeeperServerMain.class"

// installHint is what to do when there is no usable ZooKeeper install.
const installHint = "apt-get install zookeeper (Debian, Ubuntu), or set ZK_TEST_JARS to the lib/ directory of a ZooKeeper release"

// jarsHint is what to do when ZK_TEST_JARS holds no ZooKeeper.
const jarsHint = "point ZK_TEST_JARS at the lib/ directory of a ZooKeeper release, or unset it to use Debian's package in " + defaultJarDir + " (apt-get install zookeeper)"

// findInstall locates the server's jars, every jar in ZK_TEST_JARS when it
// is set (a release's lib/ directory), else serverJars in /usr/share/java,
// and java. Its errors say what is missing and what to do.
func findInstall() (install, error) {
	var jars []string
	from := defaultJarDir
	if dir := os.Getenv("ZK_TEST_JARS"); dir != "" {
		from = "ZK_TEST_JARS=" + dir
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return install{}, fmt.Errorf("zktest: no local ZooKeeper: %s is not a directory: %s", from, jarsHint)
		}
		jars, _ = filepath.Glob(filepath.Join(dir, "*.jar"))
		if len(jars) == 0 {
			return install{}, fmt.Errorf("zktest: no local ZooKeeper: %s holds no .jar files: %s", from, jarsHint)
		}
	} else {
		for i, name := range serverJars {
			path := filepath.Join(defaultJarDir, name)
			if _, err := os.Stat(path); err != nil {
				if i < 2 {
					return install{}, fmt.Errorf("zktest: no local ZooKeeper: %s is missing: %s", path, installHint)
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
	}
	if !anyJarHolds(jars, serverMain) {
		hint := installHint
		if from != defaultJarDir {
			hint = jarsHint
		}
		return install{}, fmt.Errorf("zktest: no local ZooKeeper: none of the %d jars of %s holds %s, so they are not a ZooKeeper server: %s",
			len(jars), from, strings.TrimSuffix(strings.ReplaceAll(serverMain, "/", "."), ".class"), hint)
	}
	java, err := findJava()
	if err != nil {
		return install{}, err
	}
	return install{java: java, classpath: strings.Join(jars, ":"), jarsFrom: from}, nil
}

// findJava returns the java binary: $JAVA_HOME/bin/java when JAVA_HOME is
// set, else java on PATH.
func findJava() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java, err := exec.LookPath(filepath.Join(home, "bin", "java"))
		if err != nil {
			return "", fmt.Errorf("zktest: no Java for a local ZooKeeper: JAVA_HOME=%s has no bin/java (%v): set JAVA_HOME to a Java runtime, or unset it to use java from PATH", home, err)
		}
		return java, nil
	}
	java, err := exec.LookPath("java")
	if err != nil {
		return "", errors.New("zktest: no Java for a local ZooKeeper: no java on PATH and JAVA_HOME is not set: install a Java runtime (apt-get install default-jre-headless), or set JAVA_HOME to one")
	}
	return java, nil
}

// anyJarHolds reports whether one of jars holds the file name. A jar that
// cannot be read does not hold it.
func anyJarHolds(jars []string, name string) bool {
	for _, jar := range jars {
		r, err := zip.OpenReader(jar)
		if err != nil {
			continue
		}
		_, err = fs.Stat(r, name)
		r.Close()
		if err == nil {
			return true
		}
	}
	return false
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
//
// Every error says what is missing or wrong and what to do: no java, no
// ZooKeeper jars, a port in use. A server that did not start is killed, its
// process reaped and the temporary directory removed before the error
// returns, and no step outlives ctx.
func StartLocalWith(ctx context.Context, n int, cfg Config) (*Cluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("zktest: StartLocal(%d): need at least one server", n)
	}
	zooCfg, err := cfg.zooCfg()
	if err != nil {
		return nil, err
	}
	fixedPort, err := cfg.clientPort(n)
	if err != nil {
		return nil, err
	}
	if cfg.Reconfig && cfg.TLS != nil {
		return nil, errors.New("zktest: Config.Reconfig with Config.TLS is not supported")
	}
	inst, err := findInstall()
	if err != nil {
		return nil, err
	}
	// Another process may take a port between our probe and the server's
	// bind; try again on fresh ports, unless cfg fixed the port.
	const attempts = 3
	for attempt := 1; ; attempt++ {
		c, err := startLocal(ctx, inst, n, zooCfg, fixedPort, cfg.TLS, cfg.Reconfig)
		var inUse *portInUseError
		if err == nil || fixedPort != 0 || !errors.As(err, &inUse) || ctx.Err() != nil {
			return c, err
		}
		if attempt == attempts {
			return nil, fmt.Errorf("zktest: other processes took the ports the harness had found free, %d times in a row: %w", attempts, err)
		}
	}
}

// sweepOnce makes each process clean up after dead ones once.
var sweepOnce sync.Once

// startLocal starts n servers whose zoo.cfg holds timing, from
// Config.zooCfg, and, when fixedPort is not 0, the standalone server's
// clientPort=fixedPort, and serve TLS clients as tlsCfg says when it is not
// nil; reconfig makes them a reconfigurable quorum, even of one (reconfig.go).
func startLocal(ctx context.Context, inst install, n int, timing string, fixedPort int, tlsCfg *TLS, reconfig bool) (*Cluster, error) {
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
	ports, err := freePorts(4 * n) // client, quorum, election, and TLS client
	if err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if fixedPort != 0 {
		ports[0] = fixedPort
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "initLimit=10\nsyncLimit=5\n")
	fmt.Fprintf(&cfg, "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n")
	fmt.Fprintf(&cfg, "4lw.commands.whitelist=*\nmaxClientCnxns=0\n")
	quorum := n > 1 || reconfig
	var static string // what a server that joins later shares (reconfig.go)
	if reconfig {
		cfg.WriteString(reconfigCfg())
		static = cfg.String() + timing
	}
	for i := 1; quorum && i <= n; i++ {
		if reconfig {
			fmt.Fprintln(&cfg, serverSpec(i, ports[3*i-2], ports[3*i-1], "participant", ports[3*i-3]))
			continue
		}
		fmt.Fprintf(&cfg, "server.%d=127.0.0.1:%d:%d\n", i, ports[3*i-2], ports[3*i-1])
	}
	main := "org.apache.zookeeper.server.ZooKeeperServerMain"
	if quorum {
		main = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
	}
	var addrs, secureAddrs []string
	for i := 1; i <= n; i++ {
		sdir := filepath.Join(dir, "s"+strconv.Itoa(i))
		data := filepath.Join(sdir, "data")
		if err := os.MkdirAll(data, 0o755); err != nil {
			return nil, errors.Join(fmt.Errorf("zktest: %w", err), c.Close())
		}
		conf := fmt.Sprintf("%sdataDir=%s\nclientPort=%d\n%s", cfg.String(), data, ports[3*i-3], timing)
		secureAddr := ""
		if tlsCfg != nil {
			secure, err := tlsCfg.zooCfg(filepath.Join(sdir, "tls"), ports[3*n+i-1])
			if err != nil {
				return nil, errors.Join(err, c.Close())
			}
			conf += secure
			secureAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[3*n+i-1]))
			secureAddrs = append(secureAddrs, secureAddr)
		}
		cfgPath := filepath.Join(sdir, "zoo.cfg")
		err := os.WriteFile(cfgPath, []byte(conf), 0o644)
		if err == nil && quorum {
			err = os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(i)+"\n"), 0o644)
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("zktest: %w", err), c.Close())
		}
		args := append(append([]string{}, jvmFlags...), "-cp", inst.classpath, main, cfgPath)
		quorumAddr := ""
		if quorum {
			quorumAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[3*i-2]))
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[3*i-3]))
		s := &Server{
			ID:         i,
			addr:       addr,
			secureAddr: secureAddr,
			ensemble:   quorum,
			quorumAddr: quorumAddr,
			b: &process{
				java: inst.java, args: args, dir: sdir, logPath: filepath.Join(sdir, "server.log"),
				addr: addr, jarsFrom: inst.jarsFrom, fixedPort: fixedPort != 0,
			},
		}
		if reconfig {
			s.spec = serverSpec(i, ports[3*i-2], ports[3*i-1], "participant", ports[3*i-3])
			c.rc = &reconfigState{static: static, cmd: args[: len(args)-1 : len(args)-1], java: inst.java, from: inst.jarsFrom}
		}
		c.servers = append(c.servers, s)
		addrs = append(addrs, s.addr)
	}
	c.connect = strings.Join(addrs, ",")
	c.secureConnect = strings.Join(secureAddrs, ",")

	// The first server that fails stops the others' wait: an ensemble
	// member would otherwise wait for a quorum until ctx ends.
	startCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, s := range c.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = s.start(startCtx); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		if ctx.Err() == nil {
			// Leave out the servers that were only cancelled.
			var failed []error
			for _, e := range errs {
				if e != nil && !errors.Is(e, context.Canceled) {
					failed = append(failed, e)
				}
			}
			if len(failed) > 0 {
				err = errors.Join(failed...)
			}
		}
		return nil, errors.Join(err, c.Close())
	}
	if err := waitListening(ctx, secureAddrs); err != nil {
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

// portInUseError says that a server could not bind a port.
type portInUseError struct {
	addr  string // "host:port", or "" when the log does not say
	fixed bool   // the port came from Config.ExtraConfig
}

func (e *portInUseError) Error() string {
	where := "one of its ports"
	if e.addr != "" {
		where = "port " + e.addr
	}
	if e.fixed {
		return where + " is in use by another process (clientPort in Config.ExtraConfig): free it or choose another port"
	}
	return where + " is in use by another process (the harness found it free, then another process took it)"
}

// logAddr matches a socket address as Java prints one: "/127.0.0.1:2181"
// or "localhost/127.0.0.1:2181".
var logAddr = regexp.MustCompile(`/(\d+\.\d+\.\d+\.\d+:\d+)`)

// missingClass matches the JVM's report of a class it could not load.
var missingClass = regexp.MustCompile(`(?:ClassNotFoundException|NoClassDefFoundError|Could not find or load main class)[: ]+(\S+)`)

// diagnose returns what the log of a local server that did not start says
// went wrong, as an error that says what to do, or nil if it says nothing
// the harness knows. java and jarsFrom are the server's install; addr is its
// client address, fixed when Config.ExtraConfig set it.
func diagnose(log, java, jarsFrom, addr string, fixed bool) error {
	if i := strings.Index(log, "Address already in use"); i >= 0 {
		e := &portInUseError{fixed: fixed}
		if fixed {
			e.addr = addr
		} else if m := logAddr.FindAllStringSubmatch(log[:i], -1); len(m) > 0 {
			// The socket the server was binding is the last one it named.
			e.addr = m[len(m)-1][1]
		}
		return e
	}
	if m := missingClass.FindStringSubmatch(log); m != nil {
		hint := installHint
		if jarsFrom != defaultJarDir {
			hint = jarsHint
		}
		return fmt.Errorf("the JVM could not load %s, so the jars of %s are not a whole ZooKeeper install: %s", strings.ReplaceAll(m[1], "/", "."), jarsFrom, hint)
	}
	if strings.Contains(log, "UnsupportedClassVersionError") {
		return fmt.Errorf("%s is too old for the ZooKeeper jars of %s: set JAVA_HOME to a newer Java runtime", java, jarsFrom)
	}
	return nil
}
