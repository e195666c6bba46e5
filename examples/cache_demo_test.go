package examples_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/zktest"
)

// The cache demo's entry in demos, kept beside it: TestDemos checks a few
// lines, and TestCacheDemo checks the whole run.
func init() {
	demos = append(demos, demoCase{"cache", nil, []string{
		`^  watcher 3: loaded 6 nodes of /demo/cache/config$`,
		`^  watcher 1: NODE_UPDATED /demo/cache/config/db/pool = 20 \(version 1\)$`,
		`^  watcher 2: RESYNCED after a session change`,
		`^  watcher 2: NODE_UPDATED /demo/cache/config/db/url = postgres://db2/shop \(version 1\)$`,
		`^watcher 2 printed each of the 5 changes once and 1 resync line\(s\)`,
	}})
}

// cacheRoot is the tree the cache demo writes and watches.
const cacheRoot = "/demo/cache/config"

// The lines of the cache demo's output that TestCacheDemo reads.
var (
	cacheLoaded  = regexp.MustCompile(`^  watcher (\d): loaded \d+ nodes of /demo/cache/config$`)
	cacheUpdate  = regexp.MustCompile(`^  updater: (set|created|deleted) (/demo/cache/config/\S+)(?: = (\S+) \(version \d+\))?$`)
	cacheChange  = regexp.MustCompile(`^  watcher (\d): (NODE_\w+ .*)$`)
	cacheResync  = regexp.MustCompile(`^  watcher (\d): RESYNCED`)
	cacheSummary = regexp.MustCompile(`^watcher (\d) printed .*; its view: (.*) \((\d+) nodes\), as on the server$`)
)

// TestCacheDemo runs examples/cache against the shared server and checks
// what its users rely on, from its output and from the server itself:
// each of the 3 watcher processes printed each change the updater made
// while they watched exactly once, and no other; only watcher 2, whose
// session expired between two changes, printed a resync line, once; and
// each watcher's final view holds the settings on the server.
//
// It does not run in parallel with TestDemos, which runs the same demo
// on the same path.
func TestCacheDemo(t *testing.T) {
	bin := buildDemos(t)
	connect := zktest.Shared(t).ConnectString()
	ctx, cancel := context.WithTimeout(t.Context(), demoTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "cache"), "-zk", connect)
	cmd.Env = append(os.Environ(), "ZK_DEMO_CONNECT=") // -zk, not the environment
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cache -zk %s: %v\nstdout:\n%s\nstderr:\n%s", connect, err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	t.Logf("output:\n%s", out)

	const watchers = 3
	var (
		loaded   = map[int]bool{}
		settings = map[string]string{} // the tree as the updater wrote it
		changes  []string              // what each watcher must print once
		printed  = map[int]map[string]int{}
		resyncs  = map[int][]int{} // watcher -> len(changes) at each resync line
		final    = map[int][]string{}
		nodes    = map[int]int{}
	)
	for l := range strings.Lines(out) {
		l = strings.TrimSuffix(l, "\n")
		if m := cacheLoaded.FindStringSubmatch(l); m != nil {
			loaded[atoi(t, m[1])] = true
		} else if m := cacheUpdate.FindStringSubmatch(l); m != nil {
			if m[1] == "deleted" {
				delete(settings, m[2])
			} else {
				settings[m[2]] = m[3]
			}
			if len(loaded) == watchers {
				// The line a cache listener prints for this change.
				rest := m[2]
				if m[1] != "deleted" {
					rest = l[strings.Index(l, m[2]):]
				}
				event := map[string]string{"set": "NODE_UPDATED", "created": "NODE_ADDED", "deleted": "NODE_REMOVED"}[m[1]]
				changes = append(changes, event+" "+rest)
			}
		} else if m := cacheChange.FindStringSubmatch(l); m != nil {
			w := atoi(t, m[1])
			if printed[w] == nil {
				printed[w] = map[string]int{}
			}
			printed[w][m[2]]++
		} else if m := cacheResync.FindStringSubmatch(l); m != nil {
			w := atoi(t, m[1])
			resyncs[w] = append(resyncs[w], len(changes))
		} else if m := cacheSummary.FindStringSubmatch(l); m != nil {
			w := atoi(t, m[1])
			final[w] = strings.Fields(m[2])
			nodes[w] = atoi(t, m[3])
		}
	}

	if len(loaded) != watchers {
		t.Fatalf("%d watchers printed that they loaded the tree, want %d", len(loaded), watchers)
	}
	if len(changes) != 5 {
		t.Errorf("the updater made %d changes while the watchers watched, want 5: %q", len(changes), changes)
	}
	var want []string // the server's settings, as the watchers print them
	for p, v := range settings {
		want = append(want, strings.TrimPrefix(p, cacheRoot+"/")+"="+v)
	}
	slices.Sort(want)
	server, count := cacheServerTree(t, connect)
	if !slices.Equal(server, want) {
		t.Errorf("the server holds %q, but the updater printed that it wrote %q", server, want)
	}

	for w := 1; w <= watchers; w++ {
		for _, c := range changes {
			if n := printed[w][c]; n != 1 {
				t.Errorf("watcher %d printed %q %d times, want once", w, c, n)
			}
		}
		for c := range printed[w] {
			if !slices.Contains(changes, c) {
				t.Errorf("watcher %d printed %q, which is no change the updater made", w, c)
			}
		}
		switch r := resyncs[w]; {
		case w != 2 && len(r) != 0:
			t.Errorf("watcher %d printed %d resync lines, want none: its session did not change", w, len(r))
		case w == 2 && len(r) != 1:
			t.Errorf("watcher 2 printed %d resync lines, want 1", len(r))
		case w == 2 && (r[0] == 0 || r[0] == len(changes)):
			t.Errorf("watcher 2 resynced after %d of the %d changes, want between two changes", r[0], len(changes))
		}
		got := slices.Sorted(slices.Values(final[w]))
		if !slices.Equal(got, server) || nodes[w] != count {
			t.Errorf("watcher %d ended with the view %q (%d nodes), want the server's %q (%d nodes)", w, got, nodes[w], server, count)
		}
	}
}

// cacheServerTree reads the cache demo's tree on the server: its settings
// as "path=value", the path relative to cacheRoot, sorted, and how many
// nodes it has.
func cacheServerTree(t *testing.T, connect string) (settings []string, nodes int) {
	t.Helper()
	env := &demo.Env{Connect: connect}
	client, err := env.Client(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	var walk func(p string)
	walk = func(p string) {
		data, _, err := client.GetData().ForPath(t.Context(), p)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		nodes++
		if len(data) > 0 {
			settings = append(settings, strings.TrimPrefix(p, cacheRoot+"/")+"="+string(data))
		}
		kids, err := client.GetChildren().ForPath(t.Context(), p)
		if err != nil {
			t.Fatalf("read the children of %s: %v", p, err)
		}
		for _, k := range kids {
			walk(framework.JoinPath(p, k))
		}
	}
	walk(cacheRoot)
	slices.Sort(settings)
	return settings, nodes
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
