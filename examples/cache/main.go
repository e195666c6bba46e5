// Command cache demonstrates recipes/cache, Curator's TreeCache: a
// configuration tree watched by three watcher processes and changed by a
// fourth, the updater. Each is this program re-executed, with its own
// client and session. Every watcher prints every change once. In the
// middle, watcher 2's session is expired on the server: its cache reads
// the tree again on the new session, and since nothing changed meanwhile
// it prints nothing but one resync line. At the end each watcher's view
// is compared with the tree on the server.
//
// The parent prints each process's lines under its name, and exits 1 if a
// watcher printed a change twice or missed one, or ended with a view that
// is not the server's.
//
//	go run ./examples/cache             # starts a local ZooKeeper
//	go run ./examples/cache -zk host:port
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/framework"
)

const (
	root     = "/demo/cache/config"
	watchers = 3
	expired  = 2 // the watcher whose session expires
)

var (
	// Hidden: set when the demo re-executes itself as a child.
	watcherID   = flag.Int("watcher", 0, "")
	updaterMode = flag.Bool("updater", false, "")
)

func main() {
	flag.Usage = demo.UsageWithoutHidden
	flag.Parse()
	switch {
	case *watcherID > 0:
		child(fmt.Sprintf("watcher %d", *watcherID), watcher)
	case *updaterMode:
		child("updater", updater)
	default:
		demo.Run(run)
	}
}

// step is one change the updater makes, with what it means.
type step struct{ what, order string }

func run(ctx context.Context, env *demo.Env) error {
	ctx, cancel := context.WithCancel(ctx)
	ps := &procs{ctx: ctx, lines: make(chan line), exits: make(chan exit, watchers+1)}
	defer ps.kill(cancel)

	up, err := ps.spawn("updater", "-updater", "-zk", env.Connect)
	if err != nil {
		return err
	}
	// update has the updater make one change, and returns the line it
	// printed for it.
	update := func(order string) (string, error) {
		n := len(up.replies)
		if err := ps.order(up, order); err != nil {
			return "", err
		}
		if err := ps.until("the updater writes", func() bool { return len(up.replies) > n }); err != nil {
			return "", err
		}
		return up.replies[n], nil
	}
	fmt.Printf("the updater process writes the first settings under %s\n", root)
	for _, order := range []string{"set /db/url postgres://db1/shop", "set /db/pool 10", "set /feature/new-checkout off"} {
		if _, err := update(order); err != nil {
			return err
		}
	}

	fmt.Printf("%d watcher processes each load a Tree cache of %s\n", watchers, root)
	ws := make([]*proc, watchers)
	for i := range ws {
		if ws[i], err = ps.spawn(fmt.Sprintf("watcher %d", i+1), "-watcher", strconv.Itoa(i+1), "-zk", env.Connect); err != nil {
			return err
		}
	}
	if err := ps.until("every watcher has loaded the tree", func() bool {
		return !slices.ContainsFunc(ws, func(w *proc) bool { return !w.loaded })
	}); err != nil {
		return err
	}

	var want []string // the line every watcher must print once for each change
	change := func(s step) error {
		fmt.Println("the updater", s.what)
		did, err := update(s.order)
		if err != nil {
			return err
		}
		verb, rest, _ := strings.Cut(did, " ")
		l := map[string]string{"set": "NODE_UPDATED", "created": "NODE_ADDED", "deleted": "NODE_REMOVED"}[verb] + " " + rest
		want = append(want, l)
		missed := func(w *proc) bool { return w.changes[l] == 0 }
		if err := ps.until(fmt.Sprintf("every watcher prints %q", l), func() bool { return !slices.ContainsFunc(ws, missed) }); err != nil {
			var names []string
			for _, w := range ws {
				if missed(w) {
					names = append(names, w.name)
				}
			}
			return fmt.Errorf("%w (not printed by %s)", err, strings.Join(names, ", "))
		}
		return nil
	}
	for _, s := range []step{
		{"raises the pool to 20", "set /db/pool 20"},
		{"turns the new checkout on", "set /feature/new-checkout on"},
		{"adds a payment timeout", "set /payment/timeout 5s"},
	} {
		if err := change(s); err != nil {
			return err
		}
	}

	w := ws[expired-1]
	fmt.Printf("watcher %d has the server expire its session (only it knows the session's password); nothing changes meanwhile\n", expired)
	if err := ps.order(w, "expire"); err != nil {
		return err
	}
	if err := ps.until(fmt.Sprintf("watcher %d resyncs", expired), func() bool { return w.resyncs > 0 }); err != nil {
		return err
	}

	for _, s := range []step{
		{"moves the database to db2", "set /db/url postgres://db2/shop"},
		{"drops the payment timeout", "delete /payment/timeout"},
	} {
		if err := change(s); err != nil {
			return err
		}
	}

	for _, w := range ws {
		if err := ps.order(w, "view"); err != nil {
			return err
		}
	}
	if err := ps.until("every watcher has printed its view", func() bool {
		return !slices.ContainsFunc(ws, func(w *proc) bool { return !w.viewEnd })
	}); err != nil {
		return err
	}
	server, err := serverTree(ctx, env)
	if err != nil {
		return err
	}
	// Lines printed until the processes exit count too: a change printed
	// twice would show here.
	if err := ps.stop(append(ws, up)); err != nil {
		return err
	}
	return judge(ws, want, server)
}

// judge checks what each watcher printed and its last view, and prints a
// summary line for each that passes.
func judge(ws []*proc, want, server []string) error {
	var errs []error
	for i, w := range ws {
		var bad []error
		for _, l := range want {
			if n := w.changes[l]; n != 1 {
				bad = append(bad, fmt.Errorf("%s printed %q %d times, not once", w.name, l, n))
			}
		}
		for l := range w.changes {
			if !slices.Contains(want, l) {
				bad = append(bad, fmt.Errorf("%s printed %q, which is no change the updater made", w.name, l))
			}
		}
		wantResyncs := 0
		if i+1 == expired {
			wantResyncs = 1
		}
		if w.resyncs != wantResyncs {
			bad = append(bad, fmt.Errorf("%s printed %d resync lines, want %d", w.name, w.resyncs, wantResyncs))
		}
		if i := slices.IndexFunc(server, func(s string) bool { return !slices.Contains(w.view, s) }); i >= 0 {
			bad = append(bad, fmt.Errorf("%s's view lacks the server's node %s", w.name, strings.TrimPrefix(server[i], "view ")))
		}
		if i := slices.IndexFunc(w.view, func(s string) bool { return !slices.Contains(server, s) }); i >= 0 {
			bad = append(bad, fmt.Errorf("%s's view has the node %s, which the server has not", w.name, strings.TrimPrefix(w.view[i], "view ")))
		}
		if len(bad) == 0 {
			fmt.Printf("%s printed each of the %d changes once and %d resync line(s); its view: %s (%d nodes), as on the server\n",
				w.name, len(want), w.resyncs, strings.Join(settingsOf(w.view), " "), len(w.view))
		}
		errs = append(errs, bad...)
	}
	return errors.Join(errs...)
}

// serverTree reads the tree under root on the server, with a client of the
// parent's own, as view lines sorted by path.
func serverTree(ctx context.Context, env *demo.Env) ([]string, error) {
	client, err := env.Client(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	var nodes []string
	var walk func(p string) error
	walk = func(p string) error {
		data, stat, err := client.GetData().ForPath(ctx, p)
		if err != nil {
			return err
		}
		nodes = append(nodes, viewLine(p, data, stat.Version))
		kids, err := client.GetChildren().ForPath(ctx, p)
		if err != nil {
			return err
		}
		for _, k := range kids {
			if err := walk(framework.JoinPath(p, k)); err != nil {
				return err
			}
		}
		return nil
	}
	return nodes, walk(root)
}

// settingsOf returns the settings of a view, as "path=value" with the path
// relative to root.
func settingsOf(view []string) []string {
	var out []string
	for _, l := range view {
		f := strings.SplitN(l, " ", 4) // view <path> <version> <quoted data>
		if len(f) < 4 {
			continue
		}
		if data, err := strconv.Unquote(f[3]); err == nil && data != "" {
			out = append(out, strings.TrimPrefix(f[1], root+"/")+"="+data)
		}
	}
	return out
}
