// Package examples_test runs every demo under examples/ against the test
// binary's shared ZooKeeper, so that none of them can rot.
package examples_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/zktest"
)

func TestMain(m *testing.M) { zktest.Main(m) }

// demoTimeout bounds one demo run; the slowest, stock -kill, waits out a
// 4 s session once.
const demoTimeout = 2 * time.Minute

// demoCase is one run of a demo.
type demoCase struct {
	name string
	args []string
	want []string
}

// demos lists every demo with its arguments and the lines that show it
// did what it says. Each pattern is a regular expression that must match
// somewhere in the demo's output.
var demos = []demoCase{
	{"client", nil, []string{`^connection state: CONNECTED`, `^deleted it; closing$`, `^done$`}},
	{"stock", []string{"-kill"}, []string{
		`round 1, no lock`,
		`round 2, the same purchase holding recipes/mutex`,
		// The mutex round: exact, with the killed holder's lock freed.
		`^  sold 100 units, stock left 0 \(per worker: \d+ \d+ \d+ \d+\)$`,
		`^  nothing oversold, nothing lost; the fencing token rose with every sale, to \d+ \(0 stale writes refused\)$`,
		`^  worker 1 exited holding the lock \(node _c_[0-9a-f-]{36}-lock-\d{10}\); ZooKeeper expired its session and deleted the node, and [\d.]+s later the next worker sold$`,
	}},
	{"stock", []string{"-lose-replies", "0.05"}, []string{
		`^each worker reaches ZooKeeper through a proxy that loses 0.05 of the replies to its writes`,
		`round 2, the same purchase holding recipes/mutex`,
		// The mutex round: exact, every unit sold once, though replies to
		// the workers' writes were lost after the server applied them.
		`^  sold 100 units, stock left 0 \(per worker: \d+ \d+ \d+ \d+\)\n` +
			`  nothing oversold, nothing lost; the fencing token rose with every sale, to \d+ \(0 stale writes refused\)\n` +
			`  the proxies lost the replies to [1-9]\d* of \d+ writes after ZooKeeper applied them$`,
	}},
	{"leader", []string{"-kill"}, []string{
		`^worker 1 leads \(fencing token \d+\)$`,
		`^worker 1 exits while it leads, without closing its latch`,
		`^  [\d.]+s after worker 1 died, ZooKeeper expired its session \(timeout 4s\) and deleted its node; worker 2 took over$`,
		`^worker 3 leads \(fencing token \d+\)$`,
		`^8 jobs done by 3 leaders, one at a time; the fencing token rose \d+ -> \d+ -> \d+; 0 stale writes refused$`,
	}},
	{"mutex", nil, []string{
		`^alice acquires again on the same goroutine: still 1 node, held twice \(the same hold: true\)$`,
		`^alice works while a watchdog goroutine watches her hold's Lost\(\)`,
		`^bob \(another session\) tries for 200ms: acquired=false$`,
		`^another goroutine on alice's mutex tries once: acquired=false$`,
		`^alice releases once: she still holds it = true$`,
		`^bob got the lock with fencing token \d+ > \d+`,
	}},
	{"semaphoremutex", nil, []string{
		`^it tries again for 200ms on the same goroutine: acquired=false \(not reentrant\)$`,
		`^a worker goroutine finishes the export and releases the lock$`,
		`^a second Release returns ErrNotOwner$`,
		`^another session acquires it, fencing token \d+ > \d+$`,
	}},
	{"semaphorev2", nil, []string{
		`^workers 1-3 hold a lease each \(3 lease nodes\)$`,
		`^worker 4 tries for 200ms: acquired=false$`,
		`^worker 4 gets it`,
		`^under load: 30 leases granted to 6 workers, at most [123] held at once$`,
	}},
	{"rwlock", nil, []string{
		`^3 readers in 3 sessions hold the read lock of /demo/rwlock/prices at once \(3 __READ__ nodes\)$`,
		`^a writer tries for 200ms while they read: acquired=false$`,
		`^the last reader is gone: the writer holds the write lock$`,
		`^a reader tries for 200ms while the writer writes: acquired=false$`,
		`it downgraded`,
		`^readers share the lock with it again$`,
	}},
	{"multilock", nil, []string{
		`^the transfer tries for 300ms to lock berlin, then lyon: acquired=false$`,
		`no node left under berlin$`,
		`^the transfer holds berlin and lyon`,
		`^meanwhile another session tries berlin once: acquired=false$`,
	}},
	{"barrier", nil, []string{
		`^300ms later all 3 still wait`,
		`^worker 1 passes$`, `^worker 2 passes$`, `^worker 3 passes$`,
	}},
	{"doublebarrier", nil, []string{
		`^worker 2 enters and waits \(2 of 3 in\)$`,
		`^worker 3 enters: all 3 are in`,
		`^worker 2 is done and waits to leave$`,
		`^worker 3 is done: all 3 leave together`,
	}},
	{"sharedcount", nil, []string{
		`^  worker's listener: 20 \(version 1\)$`,
		`^worker: TrySetCount\(version 1, 20 -> 40\) = false: the version moved on$`,
		`^worker retries from its refreshed cache: TrySetCount\(version 2, 21 -> 42\) = true$`,
		`^  worker's listener: 42 \(version 3\)$`,
	}},
	{"discovery", nil, []string{
		`^3 workers registered as greeter instances$`,
		`^the client calls them round robin: worker-1, worker-2, worker-3, worker-1, worker-2, worker-3, \.\.\.$`,
		`^  [\d.]+s later ZooKeeper expired worker 2's session and deleted its instance: the client's list is worker-1 worker-3$`,
		`^worker 2 restarts and registers again: the client's list is worker-1 worker-2 worker-3$`,
		`^the client calls worker-2 again$`,
		`; every worker unregistered$`,
	}},
	{"queue", nil, []string{
		`^the feeder put 30 jobs on /demo/queue/jobs \(15 one by one, 15 in one PutMulti node\)`,
		`^worker 1 dies while working on job-\d{3} \(token \d+:\d+\), without finishing it$`,
		`^  [\d.]+s later ZooKeeper expired worker 1's session \(timeout 4s\) and deleted its lock; worker [23] did job-\d{3}, token \d+:\d+: the same token = true$`,
		`^30 jobs done by 3 workers \(per worker: 0 \d+ \d+\); 0 lost, 0 done twice; 0 items and 0 locks left$`,
	}},
	{"atomiclong", nil, []string{
		`^counter = \d+ after \d+ successful increments`,
		`^CompareAndSet\(\d+ -> 0\) = true$`,
		`^CompareAndSet\(\d+ -> 5\) = false: the value is 0 now$`,
	}},
}

// TestDemos builds every demo once and runs each against the shared server
// with -zk: each must exit 0 and print its key lines. Runs of one demo
// share its nodes, so they take turns; different demos run in parallel.
func TestDemos(t *testing.T) {
	bin := buildDemos(t)
	connect := zktest.Shared(t).ConnectString()

	// A new demo must be listed above.
	built, err := os.ReadDir(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range built {
		if !slices.ContainsFunc(demos, func(d demoCase) bool { return d.name == e.Name() }) {
			t.Errorf("examples/%s has no entry in demos", e.Name())
		}
	}

	turns := make(map[string]*sync.Mutex) // one per demo
	for _, d := range demos {
		if turns[d.name] == nil {
			turns[d.name] = new(sync.Mutex)
		}
	}
	for _, d := range demos {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			turns[d.name].Lock()
			defer turns[d.name].Unlock()
			ctx, cancel := context.WithTimeout(t.Context(), demoTimeout)
			defer cancel()
			args := append([]string{"-zk", connect}, d.args...)
			cmd := exec.CommandContext(ctx, filepath.Join(bin, d.name), args...)
			cmd.Env = append(os.Environ(), "ZK_DEMO_CONNECT=") // -zk, not the environment
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			out := stdout.String()
			if err != nil {
				t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", d.name, strings.Join(args, " "), err, out, stderr.String())
			}
			if strings.Contains(out, "starting a local ZooKeeper") {
				t.Errorf("%s started its own ZooKeeper despite -zk", d.name)
			}
			for _, w := range d.want {
				if !regexp.MustCompile("(?m)" + w).MatchString(out) {
					t.Errorf("%s: no line matches %q in its output:\n%s", d.name, w, out)
				}
			}
		})
	}
}

// buildDemos builds every command under examples/ into a temporary
// directory, with one go build, and returns the directory. The binaries
// carry no symbol tables: linking is most of the build's time.
func buildDemos(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		if goroot := os.Getenv("GOROOT"); goroot != "" {
			goCmd, err = filepath.Join(goroot, "bin", "go"), nil
		}
	}
	if err != nil {
		t.Fatalf("the go command is needed to build the demos: %v", err)
	}
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), goCmd, "build", "-ldflags=-s -w", "-o", dir+string(filepath.Separator), "./...")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/...: %v\n%s", err, out)
	}
	return dir
}
