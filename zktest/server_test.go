package zktest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

func TestStart_AnswersSrvr(t *testing.T) {
	c := Start(t)
	needControl(t, c)
	servers := c.Servers()
	if len(servers) != 1 {
		t.Fatalf("Servers() = %v, want one", servers)
	}
	s := servers[0]
	if c.ConnectString() != s.Addr() || !strings.HasPrefix(s.Addr(), "127.0.0.1:") {
		t.Errorf("ConnectString() = %q, Addr() = %q; want one loopback address", c.ConnectString(), s.Addr())
	}
	answer, err := s.FourLetter("srvr")
	if err != nil {
		t.Fatal(err)
	}
	if mode := srvrMode(answer); mode != "standalone" {
		t.Errorf("srvr mode = %q, want standalone:\n%s", mode, answer)
	}
	if leader, err := c.Leader(); err != nil || leader != s {
		t.Errorf("Leader() = %v, %v; want %v", leader, err, s)
	}
	conn := connect(t, c.ConnectString(), 4*time.Second)
	if _, err := conn.Create("/start-answers", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
}

func TestServer_StopStartKeepsPortAndData(t *testing.T) {
	c := Start(t)
	needControl(t, c)
	s := c.Servers()[0]
	addr := s.Addr()
	conn := connect(t, c.ConnectString(), 4*time.Second)
	if _, err := conn.Create("/kept", []byte("v1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	for _, step := range []struct {
		name string
		down func() error
	}{
		{"Stop", s.Stop},
		{"Kill", s.Kill},
	} {
		if err := step.down(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if err := step.down(); err != nil {
			t.Errorf("second %s: %v, want nil", step.name, err)
		}
		if _, err := s.FourLetter("srvr"); err == nil {
			t.Fatalf("after %s, srvr still answers", step.name)
		}
		if err := s.Start(); err != nil {
			t.Fatalf("Start after %s: %v", step.name, err)
		}
		if s.Addr() != addr {
			t.Errorf("after %s and Start, Addr() = %s, want %s", step.name, s.Addr(), addr)
		}
		conn := connect(t, c.ConnectString(), 4*time.Second)
		data, _, err := conn.Get("/kept")
		if err != nil || string(data) != "v1" {
			t.Errorf("after %s and Start, Get(/kept) = %q, %v; want v1", step.name, data, err)
		}
		conn.Close()
	}
	if err := s.Start(); err == nil {
		t.Error("Start of a running server succeeded")
	}
}

func TestCluster_CloseKillsAndCleans(t *testing.T) {
	c, err := StartLocal(testCtx(t), 1)
	if err != nil {
		unavailable(t, err)
	}
	s := c.Servers()[0]
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := os.Stat(c.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temp dir %s still there: %v", c.dir, err)
	}
	if _, err := s.FourLetter("srvr"); err == nil {
		t.Error("srvr answers after Close")
	}
	if err := s.Start(); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
}

func TestShared_IsOneServer(t *testing.T) {
	a, b := Shared(t), Shared(t)
	if a != b {
		t.Fatalf("Shared returned %v, then %v", a, b)
	}
	conn := connect(t, a.ConnectString(), 4*time.Second)
	if _, err := conn.Sync("/"); err != nil {
		t.Fatal(err)
	}
}

func TestStart_ExternalServer(t *testing.T) {
	shared := Shared(t)
	t.Setenv("ZK_TEST_CONNECT", shared.ConnectString())
	c := Start(t)
	if c.ConnectString() != shared.ConnectString() || len(c.Servers()) != 0 {
		t.Errorf("external cluster = %v with %d servers; want %s and none",
			c, len(c.Servers()), shared.ConnectString())
	}
	if _, err := c.Leader(); !errors.Is(err, ErrNoControl) {
		t.Errorf("Leader() error = %v, want ErrNoControl", err)
	}
}

func TestSrvrMode(t *testing.T) {
	for _, tc := range []struct {
		answer, mode string
		serving      bool
	}{
		{"Zookeeper version: 3.8.0\nMode: leader\nNode count: 5\n", "leader", true},
		{"Mode: follower\n", "follower", true},
		{"Mode: standalone\n", "standalone", true},
		{"This ZooKeeper instance is not currently serving requests\n", "", false},
		{"", "", false},
	} {
		if got := srvrMode(tc.answer); got != tc.mode || serving(tc.answer) != tc.serving {
			t.Errorf("srvrMode(%q) = %q, serving %v; want %q, %v",
				tc.answer, got, serving(tc.answer), tc.mode, tc.serving)
		}
	}
}

func TestSplitConnectString(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"127.0.0.1:1", "127.0.0.1:1"},
		{"a:1, b:2,c:3/chroot/x", "a:1|b:2|c:3"},
		{"", ""},
	} {
		if got := strings.Join(splitConnectString(tc.in), "|"); got != tc.want {
			t.Errorf("splitConnectString(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSweepStale_RemovesDirsOfDeadProcesses(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("local servers need Unix")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	dirs := map[int]string{dead.Process.Pid: "", os.Getpid(): ""}
	for pid := range dirs {
		dir, err := os.MkdirTemp("", "zktest-*")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			t.Fatal(err)
		}
		dirs[pid] = dir
	}
	sweepStale()
	if _, err := os.Stat(dirs[dead.Process.Pid]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dir of dead pid %d survived the sweep: %v", dead.Process.Pid, err)
	}
	if _, err := os.Stat(dirs[os.Getpid()]); err != nil {
		t.Errorf("dir of this process was swept: %v", err)
	}
}
