// Command cache demonstrates recipes/cache, Curator's TreeCache: a
// configuration tree watched by three watchers, each with its own client
// and session as three processes would have, and changed by a fourth.
// Every watcher prints every change once. In the middle, watcher 2's
// session is expired on the server: its cache reads the tree again on the
// new session, and since nothing changed meanwhile it prints nothing but
// one resync line.
//
//	go run ./examples/cache             # starts a local ZooKeeper
//	go run ./examples/cache -zk host:port
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

const root = "/demo/cache/config"

func main() { demo.Run(run) }

// watcher is one cache and what its listener printed.
type watcher struct {
	id     int
	client *framework.Client
	tree   *cache.Tree

	mu      sync.Mutex
	changes map[string]int // lines printed per "path version"
	resyncs int
	seen    chan string // each line printed, for the updater to wait on
}

func (w *watcher) listen(ev cache.Event) {
	var line string
	switch ev.Type {
	case cache.NodeAdded, cache.NodeUpdated:
		if len(ev.Entry.Data) == 0 {
			return // a parent node, not a setting
		}
		line = fmt.Sprintf("%s = %s (version %d)", ev.Entry.Path, ev.Entry.Data, ev.Entry.Stat.Version)
	case cache.NodeRemoved:
		line = fmt.Sprintf("%s removed", ev.Entry.Path)
	case cache.Resynced:
		line = "resynced after a session change (the tree was read again on the new session)"
	default:
		return
	}
	w.mu.Lock()
	if ev.Type == cache.Resynced {
		w.resyncs++
	} else {
		w.changes[fmt.Sprintf("%s %s %d", ev.Type, ev.Entry.Path, ev.Entry.Stat.Version)]++
	}
	w.mu.Unlock()
	fmt.Printf("  watcher %d: %s\n", w.id, line)
	w.seen <- line
}

func run(ctx context.Context, env *demo.Env) error {
	clients, err := env.Clients(ctx, 4)
	if err != nil {
		return err
	}
	defer demo.CloseAll(clients)
	updater := clients[3]
	if err := updater.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, root); err != nil {
		return err
	}
	set := func(path, value string) error {
		p := root + path
		_, err := updater.SetData().ForPath(ctx, p, []byte(value))
		if !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		_, err = updater.Create().CreatingParentsIfNeeded().ForPath(ctx, p, []byte(value))
		return err
	}
	for _, kv := range [][2]string{{"/db/url", "postgres://db1/shop"}, {"/db/pool", "10"}, {"/feature/new-checkout", "off"}} {
		if err := set(kv[0], kv[1]); err != nil {
			return err
		}
	}

	var watchers []*watcher
	for i, c := range clients[:3] {
		tree, err := cache.NewTree(c, root)
		if err != nil {
			return err
		}
		w := &watcher{id: i + 1, client: c, tree: tree, changes: map[string]int{}, seen: make(chan string, 64)}
		if err := tree.Start(ctx); err != nil {
			return err
		}
		defer tree.Close()
		tree.AddListener(w.listen) // after the initial load: only changes print
		entries, err := tree.Entries()
		if err != nil {
			return err
		}
		fmt.Printf("watcher %d loaded %d nodes of %s\n", w.id, len(entries), root)
		watchers = append(watchers, w)
	}
	// await waits until each watcher in ws has printed n more lines.
	await := func(n int, ws ...*watcher) error {
		for _, w := range ws {
			for range n {
				select {
				case <-w.seen:
				case <-time.After(30 * time.Second):
					return fmt.Errorf("watcher %d printed nothing within 30s", w.id)
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		return nil
	}
	change := func(what string, f func() error) error {
		fmt.Println("updater:", what)
		if err := f(); err != nil {
			return err
		}
		return await(1, watchers...)
	}

	steps := []struct {
		what string
		f    func() error
	}{
		{"raises the pool to 20", func() error { return set("/db/pool", "20") }},
		{"turns the new checkout on", func() error { return set("/feature/new-checkout", "on") }},
		{"adds a payment timeout", func() error { return set("/payment/timeout", "5s") }},
	}
	for _, s := range steps {
		if err := change(s.what, s.f); err != nil {
			return err
		}
	}

	w2 := watchers[1]
	fmt.Println("the server expires watcher 2's session; nothing changes meanwhile")
	if err := zktest.ExpireSession(ctx, env.Connect, w2.client.ZooKeeper()); err != nil {
		return fmt.Errorf("expire watcher 2's session: %w", err)
	}
	if err := await(1, w2); err != nil {
		return err
	}

	more := []struct {
		what string
		f    func() error
	}{
		{"moves the database to db2", func() error { return set("/db/url", "postgres://db2/shop") }},
		{"drops the payment timeout", func() error {
			return updater.Delete().ForPath(ctx, root+"/payment/timeout")
		}},
	}
	for _, s := range more {
		if err := change(s.what, s.f); err != nil {
			return err
		}
	}

	// What each watcher printed: every change once, and watcher 2 one
	// resync line besides.
	want := len(steps) + len(more)
	for _, w := range watchers {
		w.mu.Lock()
		n, dup := 0, 0
		for _, k := range w.changes {
			n += k
			if k > 1 {
				dup++
			}
		}
		resyncs := w.resyncs
		w.mu.Unlock()
		if n != want || dup > 0 {
			return fmt.Errorf("watcher %d printed %d change lines (%d repeated), want %d", w.id, n, dup, want)
		}
		fmt.Printf("watcher %d printed each of the %d changes once, and %d resync line(s)\n", w.id, want, resyncs)
	}
	return nil
}
