package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// The etcd reference peer runs against an etcd server embedded from its Go
// module (go.etcd.io/etcd/server/v3/embed). The server runs in a child
// process, this same binary started again with etcdMemberEnv set, as the
// ZooKeeper server runs in its own JVM: the bench's client CPU figures
// (/proc of this process) then hold no server work, and the server's heap
// and GC are its own.
//
// Durability: etcd fsyncs its write-ahead log on every commit (the bench
// never sets unsafe-no-fsync), and ZooKeeper as zktest starts it keeps its
// default forceSync=yes, which fsyncs its transaction log before it
// acknowledges a write. Both data directories are under os.TempDir, on the
// same file system.

// etcdMemberEnv carries an etcdMember as JSON to the child process.
const etcdMemberEnv = "GO_CURATOR_BENCH_ETCD_MEMBER"

// etcdVersion is the version of the etcd module the bench embeds, for the
// table: the go.mod requirement of go.etcd.io/etcd/server/v3.
const etcdVersion = "3.7.3"

// etcdMember is one etcd server of a cluster on loopback.
type etcdMember struct {
	Name           string `json:"name"`
	Dir            string `json:"dir"`
	ClientURL      string `json:"client_url"`
	PeerURL        string `json:"peer_url"`
	InitialCluster string `json:"initial_cluster"`
}

// serveEtcdMember runs the etcd member that etcdMemberEnv describes when it
// is set, and reports whether it did: main and TestMain call it first. The
// member says "ready" on stdout once it serves clients, and stops when its
// stdin closes (the parent closed it, or died).
func serveEtcdMember() bool {
	spec := os.Getenv(etcdMemberEnv)
	if spec == "" {
		return false
	}
	if err := runEtcdMember(spec, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "etcd member:", err)
		os.Exit(1)
	}
	return true
}

func runEtcdMember(spec string, stdin io.Reader, stdout io.Writer) error {
	var m etcdMember
	if err := json.Unmarshal([]byte(spec), &m); err != nil {
		return fmt.Errorf("%s: %w", etcdMemberEnv, err)
	}
	curl, err := url.Parse(m.ClientURL)
	if err != nil {
		return err
	}
	purl, err := url.Parse(m.PeerURL)
	if err != nil {
		return err
	}
	cfg := embed.NewConfig()
	cfg.Name = m.Name
	cfg.Dir = m.Dir
	cfg.ListenClientUrls = []url.URL{*curl}
	cfg.AdvertiseClientUrls = []url.URL{*curl}
	cfg.ListenPeerUrls = []url.URL{*purl}
	cfg.AdvertisePeerUrls = []url.URL{*purl}
	cfg.InitialCluster = m.InitialCluster
	cfg.InitialClusterToken = "go-curator-bench"
	cfg.ClusterState = embed.ClusterStateFlagNew
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{"stderr"}
	cfg.UnsafeNoFsync = false // the default, said out loud: fsync every commit
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		return err
	case <-time.After(2 * time.Minute):
		return errors.New("not ready after 2 minutes")
	}
	fmt.Fprintln(stdout, "ready")
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, stdin)
		close(done)
	}()
	select {
	case <-done:
		return nil
	case err := <-e.Err():
		return err
	}
}

// etcdCluster is a running etcd cluster of child processes on loopback.
type etcdCluster struct {
	dir       string
	endpoints []string
	members   []*etcdChild
}

type etcdChild struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *tailBuffer
	ready  chan struct{} // closed when the member said "ready"
	done   chan struct{} // closed once cmd.Wait returned
}

// startEtcd starts n etcd members, each a child process, in a new
// temporary directory, and waits until each serves clients.
func startEtcd(ctx context.Context, n int) (*etcdCluster, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%w: etcd: %v", errPeerMissing, err)
	}
	dir, err := os.MkdirTemp("", "go-curator-bench-etcd-")
	if err != nil {
		return nil, err
	}
	c := &etcdCluster{dir: dir}
	ports, err := freeLoopbackPorts(2 * n)
	if err != nil {
		c.close()
		return nil, err
	}
	var initial []string
	for i := range n {
		initial = append(initial, fmt.Sprintf("m%d=http://127.0.0.1:%d", i+1, ports[2*i+1]))
	}
	for i := range n {
		m := etcdMember{
			Name:           fmt.Sprintf("m%d", i+1),
			Dir:            filepath.Join(dir, fmt.Sprintf("m%d", i+1)),
			ClientURL:      fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]),
			PeerURL:        fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]),
			InitialCluster: strings.Join(initial, ","),
		}
		spec, _ := json.Marshal(m)
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), etcdMemberEnv+"="+string(spec))
		ch := &etcdChild{cmd: cmd, stderr: &tailBuffer{max: 4096}, ready: make(chan struct{}), done: make(chan struct{})}
		cmd.Stderr = ch.stderr
		if ch.stdin, err = cmd.StdinPipe(); err != nil {
			c.close()
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			c.close()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			c.close()
			return nil, fmt.Errorf("start etcd member: %w", err)
		}
		go func() {
			// Read stdout to its end before Wait closes it.
			r := bufio.NewReader(out)
			line, _ := r.ReadString('\n')
			if strings.TrimSpace(line) == "ready" {
				close(ch.ready)
			}
			io.Copy(io.Discard, r)
			cmd.Wait()
			close(ch.done)
		}()
		c.members = append(c.members, ch)
		c.endpoints = append(c.endpoints, m.ClientURL)
	}
	// The members of a cluster become ready together, once they have a
	// leader: wait for all.
	for _, ch := range c.members {
		if err := waitReady(ctx, ch); err != nil {
			c.close()
			return nil, err
		}
	}
	return c, nil
}

func waitReady(ctx context.Context, ch *etcdChild) error {
	t := time.NewTimer(2 * time.Minute)
	defer t.Stop()
	select {
	case <-ch.ready:
		return nil
	case <-ch.done:
		return fmt.Errorf("etcd member exited before it was ready: %v%s", ch.cmd.ProcessState, ch.stderr.tail())
	case <-t.C:
		return fmt.Errorf("etcd member not ready after 2 minutes%s", ch.stderr.tail())
	case <-ctx.Done():
		return fmt.Errorf("etcd member: %w", ctx.Err())
	}
}

// close stops every member (closing its stdin, then killing it if it has
// not exited after 10 s) and removes the data directories.
func (c *etcdCluster) close() {
	for _, ch := range c.members {
		ch.stdin.Close()
	}
	for _, ch := range c.members {
		select {
		case <-ch.done:
		case <-time.After(10 * time.Second):
			ch.cmd.Process.Kill()
			<-ch.done
		}
	}
	os.RemoveAll(c.dir)
}

// freeLoopbackPorts returns n distinct TCP ports on 127.0.0.1 that were free
// when probed.
func freeLoopbackPorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
