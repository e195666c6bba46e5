package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/leaderlatch"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/rwlock"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/recipes/sharedcount"
	"github.com/go-curator/curator/retry"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"
)

var bin string // the curatorctl binary the tests run

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "curatorctl")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "curatorctl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build curatorctl: %v\n%s", err, out)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	zktest.Main(m)
}

// ctl runs the binary against server and returns its stdout, stderr and
// exit status.
func ctl(t *testing.T, server string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--server", server, "--timeout", "10s"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func client(t *testing.T, server string) *framework.Client {
	t.Helper()
	p, err := retry.NewExponentialBackoff(50*time.Millisecond, 3)
	if err != nil {
		t.Fatal(err)
	}
	c, err := framework.NewBuilder().ConnectString(server).SessionTimeout(10 * time.Second).RetryPolicy(p).Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 30s: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func holders(t *testing.T, server, path string) []node {
	t.Helper()
	out, errs, code := ctl(t, server, "--json", "lock", "holders", path)
	if code != 0 {
		t.Fatalf("lock holders: %d %s", code, errs)
	}
	var nodes []node
	if err := json.Unmarshal([]byte(out), &nodes); err != nil {
		t.Fatalf("lock holders --json: %v\n%s", err, out)
	}
	return nodes
}

// TestLock_RunsCommandsOneAtATime: one curatorctl lock holds while its
// command runs, a second waits in line behind it (seen with lock holders),
// and runs its command once the first's ends; each command gets a fencing
// token, and the second's is greater.
func TestLock_RunsCommandsOneAtATime(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreAnyFunction(zktest.ServerWaitFunction))
	server := zktest.Shared(t).ConnectString()
	dir := t.TempDir()
	script := func(name string) string {
		return fmt.Sprintf(`echo "$CURATOR_FENCING_TOKEN" > %[1]s/%[2]s.token; while [ ! -f %[1]s/%[2]s.go ]; do sleep 0.05; done`, dir, name)
	}
	start := func(name string) *exec.Cmd {
		cmd := exec.Command(bin, "--server", server, "lock", "/ctl/one", "--", "sh", "-c", script(name))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	first := start("first")
	exists := func(f string) bool { _, err := os.Stat(filepath.Join(dir, f)); return err == nil }
	eventually(t, "the first command runs", func() bool { return exists("first.token") })
	second := start("second")
	eventually(t, "the second waits in line", func() bool { return len(holders(t, server, "/ctl/one")) == 2 })
	if exists("second.token") {
		t.Fatal("the second command ran while the first held the lock")
	}
	nodes := holders(t, server, "/ctl/one")
	if nodes[0].Role != "holder" || nodes[1].Role != "waiter" || nodes[0].Mode != "ephemeral" || nodes[0].Session == "" {
		t.Fatalf("holders = %+v; want a holder then a waiter, ephemeral, with sessions", nodes)
	}
	os.WriteFile(filepath.Join(dir, "first.go"), nil, 0o644)
	if err := first.Wait(); err != nil {
		t.Fatalf("first curatorctl: %v", err)
	}
	eventually(t, "the second command runs", func() bool { return exists("second.token") })
	os.WriteFile(filepath.Join(dir, "second.go"), nil, 0o644)
	if err := second.Wait(); err != nil {
		t.Fatalf("second curatorctl: %v", err)
	}
	token := func(name string) int64 {
		b, _ := os.ReadFile(filepath.Join(dir, name+".token"))
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			t.Fatalf("%s's CURATOR_FENCING_TOKEN = %q", name, b)
		}
		return n
	}
	if a, b := token("first"), token("second"); b <= a {
		t.Fatalf("fencing tokens %d then %d; want growing", a, b)
	}
	// The command's exit status is curatorctl's; what follows "--" is the
	// command's, flags included.
	if _, errs, code := ctl(t, server, "lock", "/ctl/one", "--", "sh", "-c", "exit 7", "--bogus"); code != 7 {
		t.Fatalf("exit status %d, stderr %q; want the command's 7", code, errs)
	}
}

// TestLock_LostHoldStopsCommandAndExitsWithLostStatus: the server stops
// answering while a command runs under the lock. The hold's Lost() closes,
// the command is stopped (SIGTERM; SIGKILL after --grace for one that
// ignores SIGTERM), and curatorctl exits, without waiting for the server,
// with the lost-hold status: not the status the stopped command gave (3,
// the old lost status), and not one a command produces by accident.
func TestLock_LostHoldStopsCommandAndExitsWithLostStatus(t *testing.T) {
	switch {
	case exitLost <= 3, exitLost >= 124:
		// 1 and 2 by most commands, 3 by the old curatorctl, 124 by
		// timeout(1), 126 and 127 by the shell, 128+n on signal n, 255
		// by exit(-1).
		t.Errorf("exitLost = %d: a status commands give by accident", exitLost)
	}
	for _, tc := range []struct {
		name, script string
		cmdStatus    int // the status the stopped command gives
	}{
		{"stops on SIGTERM with status 3", `trap "touch %[1]s/ended; exit 3" TERM; touch %[1]s/started; while :; do sleep 0.05; done`, 3},
		{"ignores SIGTERM", `trap "" TERM; touch %[1]s/started; exec sleep 120`, 128 + 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := zktest.Shared(t).ConnectString()
			proxy, err := zktest.NewProxy(server)
			if err != nil {
				t.Fatal(err)
			}
			defer proxy.Close()
			defer proxy.Resume()
			dir := t.TempDir()
			cmd := exec.Command(bin, "lock", "/ctl/cut", "--server", proxy.Addr(), "--session-timeout", "4s", "--grace", "1s",
				"--", "sh", "-c", fmt.Sprintf(tc.script, dir))
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the command runs", func() bool { _, err := os.Stat(filepath.Join(dir, "started")); return err == nil })
			proxy.Pause() // the server answers nothing from now on
			frozen := time.Now()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				t.Logf("curatorctl exited %v after the freeze", time.Since(frozen).Round(10*time.Millisecond))
				ee, ok := err.(*exec.ExitError)
				if !ok || ee.ExitCode() == tc.cmdStatus || ee.ExitCode() != exitLost || !strings.Contains(errb.String(), "lock lost") {
					t.Fatalf("curatorctl ended with %v, stderr %q; want the lost-hold status %d (not the command's %d) and \"lock lost\"",
						err, errb.String(), exitLost, tc.cmdStatus)
				}
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				<-done
				t.Fatalf("curatorctl still runs a minute after the server froze; stderr %q", errb.String())
			}
			if strings.Contains(tc.script, "ended") {
				if _, err := os.Stat(filepath.Join(dir, "ended")); err != nil {
					t.Error("curatorctl exited before the command's SIGTERM handler ran")
				}
			}
		})
	}
}

// TestLock_LostHoldStopsWhatTheCommandStarted: the command is a script
// whose job (a child process) ignores SIGTERM. When the hold is lost, the
// script and its job are both stopped: SIGTERM to the command's process
// group, then SIGKILL to what is left of it after --grace. A job that ran
// on after curatorctl exited would work without the lock.
func TestLock_LostHoldStopsWhatTheCommandStarted(t *testing.T) {
	server := zktest.Shared(t).ConnectString()
	proxy, err := zktest.NewProxy(server)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	defer proxy.Resume()
	dir := t.TempDir()
	job := filepath.Join(dir, "job.pid")
	script := fmt.Sprintf(`sh -c 'trap "" TERM; echo $$ > %s.tmp; mv %[1]s.tmp %[1]s; exec sleep 120'; echo the job ended`, job)
	cmd := exec.Command(bin, "lock", "/ctl/job", "--server", proxy.Addr(), "--session-timeout", "4s", "--grace", "1s",
		"--", "sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	eventually(t, "the job runs", func() bool {
		b, err := os.ReadFile(job)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	proxy.Pause()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitLost {
			t.Fatalf("curatorctl ended with %v; want the lost-hold status %d", err, exitLost)
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatal("curatorctl still runs a minute after the server froze")
	}
	eventually(t, "the command's job is stopped", func() bool { return gone(pid) })
}

// gone reports whether process pid has ended (a zombie has).
func gone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, after, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(after, "Z")
}

func TestHolders_RWLockAndCount(t *testing.T) {
	server := zktest.Shared(t).ConnectString()
	c := client(t, server)
	ctx := t.Context()
	rw, err := rwlock.New(c, "/ctl/rw")
	if err != nil {
		t.Fatal(err)
	}
	r, err := rw.ReadLock().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release(context.Background())
	w := rw.WriteLock()
	go w.Acquire(ctx) // waits behind the reader until the test ends
	eventually(t, "the writer queues", func() bool { return len(holders(t, server, "/ctl/rw")) == 2 })
	nodes := holders(t, server, "/ctl/rw")
	if nodes[0].Role != "reader-holder" || nodes[1].Role != "writer-waiter" {
		t.Fatalf("rwlock holders = %+v", nodes)
	}
	out, _, code := ctl(t, server, "lock", "holders", "/ctl/rw")
	if code != 0 || !regexp.MustCompile(`(?m)^reader-holder\t/ctl/rw/.*__READ__\d{10}\tephemeral\tsession=0x`).MatchString(out) {
		t.Fatalf("text holders = %d %q", code, out)
	}

	n, err := sharedcount.New(c, "/ctl/count", 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if out, _, code := ctl(t, server, "count", "get", "/ctl/count"); code != 0 || strings.TrimSpace(out) != "5" {
		t.Fatalf("count get = %d %q; want 5", code, out)
	}
	if _, errs, code := ctl(t, server, "count", "set", "/ctl/count", "42"); code != 0 {
		t.Fatalf("count set: %d %s", code, errs)
	}
	eventually(t, "the recipe sees 42", func() bool { return n.Count() == 42 })
}

func TestRevoke_AsksTheHolder(t *testing.T) {
	server := zktest.Shared(t).ConnectString()
	c := client(t, server)
	asked := make(chan struct{}, 1)
	m, err := mutex.New(c, "/ctl/revoke", mutex.WithRevocation(func() { asked <- struct{}{} }))
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release(context.Background())
	if _, errs, code := ctl(t, server, "revoke", h.Node()); code != 0 {
		t.Fatalf("revoke: %d %s", code, errs)
	}
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the holder's revocation listener was not called")
	}
}

func TestBadInput(t *testing.T) {
	server := zktest.Shared(t).ConnectString()
	c := client(t, server)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"frob"}, exitUsage, `unknown command "frob"`},
		{[]string{"--nope", "ls", "/"}, exitUsage, "flag provided but not defined"},
		{[]string{"ls"}, exitUsage, "want 1 argument"},
		{[]string{"ls", "no-slash"}, exitUsage, "path"},
		{[]string{"ls", "/ctl/none"}, exitError, "/ctl/none does not exist"},
		{[]string{"lock", "/ctl/x", "sh"}, exitUsage, "lock PATH -- CMD"},
		{[]string{"lock", "/ctl/x", "--", "/no/such/cmd"}, exitNotFound, "no such file"},
		{[]string{"count", "set", "/ctl/x", "many"}, exitUsage, "not a 32-bit integer"},
		{[]string{"count", "get", "/ctl/none"}, exitError, "does not exist"},
		{[]string{"revoke", "/ctl/none"}, exitError, "does not exist"},
		{[]string{"--auth", "nocolon", "ls", "/"}, exitUsage, "scheme:credential"},
	} {
		_, errs, code := ctl(t, server, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("curatorctl %v = %d %q; want %d and %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
	if st, _ := c.CheckExists().ForPath(t.Context(), "/ctl/x"); st != nil {
		t.Error("a failed command left /ctl/x behind")
	}
	// A server nobody answers at: a clear error within --timeout, naming
	// the refusal.
	cmd := exec.Command(bin, "--server", "127.0.0.1:1", "--timeout", "2s", "ls", "/")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitError || !strings.Contains(string(out), "connect to 127.0.0.1:1") ||
		!strings.Contains(string(out), "connection refused") {
		t.Errorf("unreachable server: %v %q", err, out)
	}
}

func TestHolders_SemaphoreLatchAndAuth(t *testing.T) {
	server := zktest.Shared(t).ConnectString()
	c := client(t, server)
	ctx := t.Context()
	sem, err := semaphorev2.New(c, "/ctl/sem", 2)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		l, err := sem.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(context.Background())
	}
	var leases []node
	out, _, code := ctl(t, server, "--json", "lease", "ls", "/ctl/sem")
	if code != 0 || json.Unmarshal([]byte(out), &leases) != nil || len(leases) != 2 || leases[0].Role != "lease" {
		t.Fatalf("lease ls = %d %s; want two leases", code, out)
	}
	if nodes := holders(t, server, "/ctl/sem"); len(nodes) != 2 || nodes[1].Role != "lease" {
		t.Fatalf("holders of a semaphore = %+v; want its two leases", nodes)
	}

	var latches []*leaderlatch.Latch
	for range 2 {
		l, err := leaderlatch.New(c, "/ctl/latch")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer l.Close(context.Background())
		latches = append(latches, l)
	}
	if _, err := latches[0].Await(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "both candidates in line", func() bool { return len(holders(t, server, "/ctl/latch")) == 2 })
	if nodes := holders(t, server, "/ctl/latch"); nodes[0].Role != "leader" || nodes[1].Role != "candidate" {
		t.Fatalf("latch holders = %+v", nodes)
	}

	// A node only an authenticated user may read: --auth reads it.
	p, err := retry.NewExponentialBackoff(50*time.Millisecond, 3)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := framework.NewBuilder().ConnectString(server).RetryPolicy(p).
		Authorization("digest", []byte("ops:secret")).ACL(zk.DigestACL(zk.PermAll, "ops", "secret")...).Build()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	if _, err := owner.Create().WithMode(framework.Ephemeral).ForPath(ctx, "/ctl-secret", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := ctl(t, server, "ls", "/ctl-secret"); code == 0 || !strings.Contains(errs, "not authenticated") {
		t.Fatalf("ls without credentials = %d %q; want a NoAuth error", code, errs)
	}
	if out, errs, code := ctl(t, server, "--auth", "digest:ops:secret", "ls", "/ctl-secret"); code != 0 || !strings.Contains(out, `data="x"`) {
		t.Fatalf("ls with credentials = %d %q %q", code, out, errs)
	}
}

// runBin runs the binary with args and no CURATOR_SERVER, and returns its
// stdout, stderr and exit status.
func runBin(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "CURATOR_SERVER=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestArgs_FlagsAnywhere: flags are accepted after the command and its
// arguments, as operators type them (curatorctl ls /locks --json), with
// values as the next argument or after "="; a negative number stays an
// argument.
func TestArgs_FlagsAnywhere(t *testing.T) {
	server := zktest.Shared(t).ConnectString()
	c := client(t, server)
	if _, err := c.Create().CreatingParentsIfNeeded().WithMode(framework.Ephemeral).ForPath(t.Context(), "/ctl/anywhere/n", []byte("x")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"ls", "/ctl/anywhere", "--json", "--server", server},
		{"ls", "--json", "/ctl/anywhere", "--server=" + server},
		{"--server", server, "ls", "/ctl/anywhere", "-json", "--timeout", "10s"},
	} {
		out, errs, code := runBin(t, args...)
		var nodes []node
		if code != 0 || json.Unmarshal([]byte(out), &nodes) != nil || len(nodes) != 2 || nodes[1].Path != "/ctl/anywhere/n" {
			t.Errorf("curatorctl %v = %d, stdout %q, stderr %q; want the JSON of /ctl/anywhere and its child", args, code, out, errs)
		}
	}
	if _, err := c.Create().ForPath(t.Context(), "/ctl/anywhere/count", []byte{0, 0, 0, 5}); err != nil {
		t.Fatal(err)
	}
	if out, errs, code := runBin(t, "count", "set", "/ctl/anywhere/count", "-7", "--server", server); code != 0 || strings.TrimSpace(out) != "-7" {
		t.Errorf("count set PATH -7 --server S = %d %q %q; want -7 set", code, out, errs)
	}
}

// TestArgs_UsageErrorIsOneLine: a usage error prints one line naming the
// problem once, with a hint to -h, not the whole usage; exit status 2.
func TestArgs_UsageErrorIsOneLine(t *testing.T) {
	server := zktest.Shared(t).ConnectString()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus", "ls", "/"}, "bogus"},
		{[]string{"ls", "/", "--bogus"}, "bogus"},
		{[]string{"ls"}, "ls PATH"},
		{[]string{"frob"}, `"frob"`},
		{[]string{"count", "set", "/x"}, "count set PATH N"},
	} {
		out, errs, code := runBin(t, append([]string{"--server", server}, tc.args...)...)
		if code != exitUsage || out != "" || strings.Count(errs, "\n") != 1 || strings.Count(errs, tc.want) != 1 || !strings.Contains(errs, "-h") {
			t.Errorf("curatorctl %v = %d, stdout %q, stderr %q; want status 2 and one line naming %s once, with a hint to -h",
				tc.args, code, out, errs, tc.want)
		}
	}
}

// TestArgs_HelpOnStdout: -h (anywhere) prints the usage and the flags to
// stdout and exits 0, with no server needed.
func TestArgs_HelpOnStdout(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"ls", "/x", "-h"}} {
		out, errs, code := runBin(t, args...)
		if code != 0 || errs != "" || !strings.Contains(out, "usage: curatorctl") || !strings.Contains(out, "-server") ||
			!strings.Contains(out, "lock PATH -- CMD") || !strings.Contains(out, "-auth-file") || !strings.Contains(out, "$CURATORCTL_AUTH") ||
			!strings.Contains(out, "127 CMD not found") {
			t.Errorf("curatorctl %v = %d, stdout %q, stderr %q; want status 0 and the usage with the flags on stdout", args, code, out, errs)
		}
	}
}

// TestLs_JSONAgeIsSeconds: JSON output gives a node's age as a number of
// seconds, not a duration string.
func TestLs_JSONAgeIsSeconds(t *testing.T) {
	server := zktest.Shared(t).ConnectString()
	c := client(t, server)
	if _, err := c.Create().CreatingParentsIfNeeded().WithMode(framework.Ephemeral).ForPath(t.Context(), "/ctl/age/n", nil); err != nil {
		t.Fatal(err)
	}
	out, errs, code := ctl(t, server, "--json", "ls", "/ctl/age")
	var nodes []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &nodes) != nil || len(nodes) != 2 {
		t.Fatalf("ls --json = %d %q %q", code, out, errs)
	}
	for _, n := range nodes {
		if _, ok := n["age"].(float64); !ok {
			t.Errorf("node %v: age %#v; want a number of seconds", n["path"], n["age"])
		}
	}
}
