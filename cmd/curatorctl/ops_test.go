package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// TestLock_CommandThatCannotRun: lock PATH -- CMD with a CMD that is not
// found exits 127, and with one that is found but cannot run 126, as
// timeout(1) and the shells do (not 2, a usage error), naming CMD; no lock
// node is made for it.
func TestLock_CommandThatCannotRun(t *testing.T) {
	t.Parallel()
	server := zktest.Shared(t).ConnectString()
	c := client(t, server)
	dir := t.TempDir()
	plain := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\necho ran\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cmd  string
		code int
		want string
	}{
		{"/no/such/cmd", exitNotFound, "no such file"},
		{"no-such-curatorctl-cmd", exitNotFound, "not found"},
		{plain, exitCannotRun, "permission denied"},
		{dir, exitCannotRun, dir},
	} {
		out, errs, code := ctl(t, server, "lock", "/ctl/cannot", "--", tc.cmd, "arg")
		if code != tc.code || out != "" || !strings.Contains(errs, tc.cmd) || !strings.Contains(errs, tc.want) {
			t.Errorf("lock -- %s = %d, stdout %q, stderr %q; want %d, naming it and %q", tc.cmd, code, out, errs, tc.code, tc.want)
		}
	}
	if st, err := c.CheckExists().ForPath(t.Context(), "/ctl/cannot"); err != nil || st != nil {
		t.Errorf("/ctl/cannot: %v, %v; want no node left by commands that never ran", st, err)
	}
}

// TestLs_RootAndContainerNodes: ls shows no age for a node the server made
// without a creation time (/, /zookeeper), where it showed 56 years. A
// container node shows as the server reports it: ZooKeeper 3.8 gives
// clients 0 as a container's ephemeralOwner, not its container marker, so
// it is persistent, with no session.
func TestLs_RootAndContainerNodes(t *testing.T) {
	t.Parallel()
	server := zktest.Shared(t).ConnectString()
	c := client(t, server)
	ctx := t.Context()
	if _, err := c.Create().WithMode(framework.Container).ForPath(ctx, "/ctl-box", nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Delete().DeletingChildrenIfNeeded().ForPath(context.Background(), "/ctl-box") })
	if _, err := c.Create().ForPath(ctx, "/ctl-box/item", []byte("x")); err != nil {
		t.Fatal(err)
	}

	var nodes []map[string]any
	out, errs, code := ctl(t, server, "--json", "ls", "/")
	if code != 0 || json.Unmarshal([]byte(out), &nodes) != nil {
		t.Fatalf("ls / --json = %d %q %q", code, out, errs)
	}
	byPath := map[string]map[string]any{}
	for _, n := range nodes {
		byPath[n["path"].(string)] = n
	}
	for _, p := range []string{"/", "/zookeeper"} {
		if n := byPath[p]; n == nil || n["age"] != nil {
			t.Errorf("ls / --json: %s = %v; want it listed, with no age", p, n)
		}
	}
	if n := byPath["/ctl-box/item"]; n == nil || n["age"] == nil {
		t.Errorf("ls / --json: /ctl-box/item = %v; want an age", n)
	}
	if n := byPath["/ctl-box"]; n == nil || n["mode"] != "persistent" || n["session"] != nil {
		t.Errorf("ls / --json: /ctl-box = %v; want it as the server reports it: persistent, no session", n)
	}

	out, errs, code = ctl(t, server, "ls", "/")
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		lines[strings.SplitN(l, "\t", 2)[0]] = l
	}
	if code != 0 || lines["/"] != "/\tpersistent" || lines["/zookeeper"] != "/zookeeper\tpersistent" {
		t.Errorf("ls / = %d %q %q; want \"/\\tpersistent\" for /, and no age for /zookeeper", code, out, errs)
	}
	if l := lines["/ctl-box/item"]; !regexp.MustCompile(`^/ctl-box/item\tpersistent\tage=\d+s\tdata="x"$`).MatchString(l) {
		t.Errorf("ls / line of /ctl-box/item = %q; want its age", l)
	}
}

// TestDescribe_NodeKinds: the owner a node reports decides its mode: 0 is
// persistent (containers and TTL nodes included, as ZooKeeper reports
// them), the container marker a container, anything else an ephemeral
// node's session, printed unsigned (a session of server id 128 and up is a
// negative int64); a ctime of 0 gives no age.
func TestDescribe_NodeKinds(t *testing.T) {
	t.Parallel()
	now := time.Now().UnixMilli()
	for _, tc := range []struct {
		owner   int64
		ctime   int64
		mode    string
		session string
		age     bool
	}{
		{0, 0, "persistent", "", false},
		{0, now, "persistent", "", true},
		{0x100000abc, now, "ephemeral", "0x100000abc", true},
		{-1 << 63, now, "container", "", true},
		{-0x7f00000000000000 + 0x1234, now, "ephemeral", "0x8100000000001234", true}, // server id 129's session
	} {
		n := describe("/n", &zk.Stat{EphemeralOwner: tc.owner, Ctime: tc.ctime}, nil)
		if n.Mode != tc.mode || n.Session != tc.session || (n.Age != nil) != tc.age {
			t.Errorf("describe(owner %#x, ctime %d) = mode %q session %q age %v; want %q %q, age %v",
				uint64(tc.owner), tc.ctime, n.Mode, n.Session, n.Age, tc.mode, tc.session, tc.age)
		}
	}
}

// closedPort returns a loopback address nothing listens at.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestStart_EveryServerRefusedFailsAtOnce: when every server refuses the
// connection, curatorctl fails with that refusal (exit 1), rather than
// retrying until --timeout ends; a curatorctl still running a minute into
// a 10-minute --timeout fails the test.
func TestStart_EveryServerRefusedFailsAtOnce(t *testing.T) {
	t.Parallel()
	for _, servers := range []string{closedPort(t), closedPort(t) + "," + closedPort(t) + "/chroot"} {
		cmd := exec.Command(bin, "--server", servers, "--timeout", "10m", "ls", "/")
		cmd.Env = append(os.Environ(), "CURATOR_SERVER=")
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != exitError || !strings.Contains(out.String(), "every server refused the connection") ||
				!strings.Contains(out.String(), "connection refused") || strings.Contains(out.String(), "deadline") {
				t.Errorf("--server %s: %v, %q; want status 1 and the refusal", servers, err, out.String())
			}
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
			t.Errorf("--server %s: curatorctl still runs a minute after it started, with every server refusing; output %q", servers, out.String())
		}
	}
}

// TestStart_RefusedServerBesideASlowOneWaits: a refused server is not
// the end while another server may answer: with one refused address and
// one that accepts but stays silent for longer than a connect handshake
// may take (a frozen proxy), curatorctl keeps trying, and lists the tree
// once the silent server answers.
func TestStart_RefusedServerBesideASlowOneWaits(t *testing.T) {
	t.Parallel()
	server := zktest.Shared(t).ConnectString()
	c := client(t, server)
	if _, err := c.Create().CreatingParentsIfNeeded().ForPath(t.Context(), "/ctl/slow/n", nil); err != nil {
		t.Fatal(err)
	}
	proxy, err := zktest.NewProxy(server)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	proxy.Pause()
	cmd := exec.Command(bin, "--server", closedPort(t)+","+proxy.Addr(), "--session-timeout", "4s", "--timeout", "45s", "ls", "/ctl/slow")
	cmd.Env = append(os.Environ(), "CURATOR_SERVER=")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Longer than the handshake's bound (4 s over 2 servers): the refused
	// server is dialed again meanwhile.
	time.Sleep(3 * time.Second)
	proxy.Resume()
	if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), "/ctl/slow/n") {
		t.Fatalf("ls through a refused and a slow server: %v, stdout %q, stderr %q; want the tree", err, out.String(), errb.String())
	}
}

// TestAuth_FromFileAndEnvironment: credentials come from --auth-file or
// $CURATORCTL_AUTH as from --auth, which every local user sees in the
// process list; a command run under lock does not inherit the variable.
func TestAuth_FromFileAndEnvironment(t *testing.T) {
	t.Parallel()
	server := zktest.Shared(t).ConnectString()
	ctx := t.Context()
	p, err := retry.NewExponentialBackoff(50*time.Millisecond, 3)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := framework.NewBuilder().ConnectString(server).RetryPolicy(p).
		Authorization("digest", []byte("ops:s3cret")).ACL(zk.DigestACL(zk.PermAll, "ops", "s3cret")...).Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	if _, err := owner.Create().WithMode(framework.Ephemeral).ForPath(ctx, "/ctl-vault", []byte("v")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	os.WriteFile(good, []byte("# the ops account\n\ndigest:ops:s3cret\n"), 0o600)
	os.WriteFile(bad, []byte("digest-ops-s3cret\n"), 0o600)
	run := func(env string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--server", server}, args...)...)
		cmd.Env = append(os.Environ(), "CURATORCTL_AUTH="+env)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), errb.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), 0
	}
	for _, tc := range []struct {
		name, env string
		args      []string
		code      int
		want      string // in stdout for 0, else in stderr
	}{
		{"none", "", nil, exitError, "not authenticated"},
		{"file", "", []string{"--auth-file", good}, 0, `data="v"`},
		{"environment", "digest:ops:s3cret", nil, 0, `data="v"`},
		{"flag over environment", "digest:ops:wrong", []string{"--auth", "digest:ops:s3cret"}, 0, `data="v"`},
		{"file over environment", "digest:ops:wrong", []string{"--auth-file", good}, 0, `data="v"`},
		{"wrong password", "digest:ops:wrong", nil, exitError, "not authenticated"},
		{"flag and file", "", []string{"--auth", "digest:ops:s3cret", "--auth-file", good}, exitUsage, "give one"},
		{"bad file", "", []string{"--auth-file", bad}, exitUsage, "line 1: want scheme:credential"},
		{"missing file", "", []string{"--auth-file", filepath.Join(dir, "none")}, exitError, "no such file"},
		{"bad environment", "nocolon", nil, exitUsage, "$CURATORCTL_AUTH"},
	} {
		out, errs, code := run(tc.env, append(tc.args, "ls", "/ctl-vault")...)
		where := errs
		if tc.code == 0 {
			where = out
		}
		if code != tc.code || !strings.Contains(where, tc.want) || strings.Contains(errs, "s3cret") {
			t.Errorf("%s: ls = %d, stdout %q, stderr %q; want %d and %q, with no password shown", tc.name, code, out, errs, tc.code, tc.want)
		}
	}
	// The command run under the lock does not get the credentials.
	if _, errs, code := run("digest:ops:s3cret", "lock", "/ctl/auth-lock", "--", "sh", "-c", `test -z "$CURATORCTL_AUTH"`); code != 0 {
		t.Errorf("lock -- CMD with $CURATORCTL_AUTH set: CMD saw it (status %d, stderr %q)", code, errs)
	}
}

// TestRefusals_CancelOnlyWhenEveryServerRefused: Start is cancelled once
// every server has refused (by its name, all the addresses it resolved to,
// or a second round of refusals), and not while one server's latest dial
// timed out or connected.
func TestRefusals_CancelOnlyWhenEveryServerRefused(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	timedOut := &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	type dial struct {
		addr string
		err  error
	}
	two := []server{{"a:1", []string{"10.0.0.1:1", "10.0.0.2:1"}}, {"b:2", []string{"10.0.0.3:2"}}}
	for _, tc := range []struct {
		name    string
		servers []server
		dials   []dial
		want    bool
	}{
		{"all addresses refused", two, []dial{{"10.0.0.1:1", refused}, {"10.0.0.3:2", refused}, {"10.0.0.2:1", refused}}, true},
		{"one address left", two, []dial{{"10.0.0.1:1", refused}, {"10.0.0.3:2", refused}}, false},
		{"names refused (TLS)", two, []dial{{"a:1", refused}, {"b:2", refused}}, true},
		{"one timed out", two, []dial{{"10.0.0.1:1", timedOut}, {"10.0.0.2:1", refused}, {"10.0.0.3:2", refused}}, false},
		{"one connected", two, []dial{{"10.0.0.1:1", nil}, {"10.0.0.2:1", refused}, {"10.0.0.3:2", refused}, {"10.0.0.1:1", nil}}, false},
		{"timed out, then refused", two, []dial{{"10.0.0.1:1", timedOut}, {"10.0.0.2:1", refused}, {"10.0.0.3:2", refused}, {"10.0.0.1:1", refused}}, true},
		{"a second round", []server{{"c:3", []string{"10.0.0.9:3"}}}, []dial{{"10.0.0.8:3", refused}, {"10.0.0.8:3", refused}}, true},
		{"one round, unresolved here", []server{{"c:3", nil}}, []dial{{"10.0.0.8:3", refused}}, false},
	} {
		cancelled := false
		r := &refusals{servers: tc.servers, refused: map[string]bool{}, cancel: func(err error) { cancelled = errors.Is(err, errRefused) }}
		for _, d := range tc.dials {
			r.note(d.addr, d.err)
		}
		if cancelled != tc.want {
			t.Errorf("%s: cancelled %v, want %v", tc.name, cancelled, tc.want)
		}
	}
	for in, want := range map[string][]string{
		"h1:1,h2/chroot":   {"h1:1", "h2:2181"},
		" [::1]:5 , ::1 ,": {"[::1]:5", "[::1]:2181"},
	} {
		if got := hosts(in); !slices.Equal(got, want) {
			t.Errorf("hosts(%q) = %q, want %q", in, got, want)
		}
	}
}
