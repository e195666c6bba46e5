package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/zktest"
	"github.com/go-zookeeper/zk"
)

// The child processes print one line per event on stdout, for the parent
// to read and print, and read their orders, one a line, on stdin. They
// exit 0 when stdin ends, and print errors on stderr and exit 1.
//
// The updater (-updater) starts from an empty root and prints
//
//	cleared <root>
//
// then, for each order "set <path> <value>" or "delete <path>" (path
// relative to root), what it did:
//
//	set <path> = <value> (version <v>)
//	created <path> = <value> (version 0)
//	deleted <path>
//
// A watcher (-watcher N) loads a Tree cache of root and prints
//
//	loaded <n> nodes of <root>
//
// then each change of a setting (a node with data) as its listener gets it,
// and a resync line after a session change:
//
//	NODE_UPDATED <path> = <value> (version <v>)
//	NODE_ADDED <path> = <value> (version <v>)
//	NODE_REMOVED <path>
//	RESYNCED after a session change (...)
//
// On the order "expire" it has the server expire its session; on "view"
// it prints its view, one "view <path> <version> <quoted data>" line per
// node, sorted by path, then "view end".

// setting formats a node with data as the processes print it.
func setting(path string, data []byte, version int32) string {
	return fmt.Sprintf("%s = %s (version %d)", path, data, version)
}

// viewLine formats one node of a view: the watchers print it, and the
// parent formats the server's nodes the same way to compare.
func viewLine(path string, data []byte, version int32) string {
	return fmt.Sprintf("view %s %d %s", path, version, strconv.Quote(string(data)))
}

// child runs a child process's body and exits 1 if it fails.
func child(name string, body func(ctx context.Context, env *demo.Env) error) {
	ctx, cancel := context.WithTimeout(context.Background(), demo.Timeout)
	err := body(ctx, &demo.Env{Connect: *demo.ZK})
	cancel()
	if err != nil {
		demo.Fatal(fmt.Errorf("%s: %w", name, err))
	}
}

// updater writes the settings the parent orders, with its own client and
// session.
func updater(ctx context.Context, env *demo.Env) error {
	client, err := env.Client(ctx, nil)
	if err != nil {
		return err
	}
	defer client.Close()
	if err := client.Delete().DeletingChildrenIfNeeded().Quietly().ForPath(ctx, root); err != nil {
		return err
	}
	fmt.Println("cleared", root)
	orders := bufio.NewScanner(os.Stdin)
	for orders.Scan() {
		var done string
		switch f := strings.Fields(orders.Text()); {
		case len(f) == 3 && f[0] == "set":
			done, err = set(ctx, client, root+f[1], []byte(f[2]))
		case len(f) == 2 && f[0] == "delete":
			err = client.Delete().ForPath(ctx, root+f[1])
			done = "deleted " + root + f[1]
		default:
			err = fmt.Errorf("unknown order %q", orders.Text())
		}
		if err != nil {
			return err
		}
		fmt.Println(done)
	}
	return orders.Err()
}

// set writes data to the node at p, creating it and its parents if needed,
// and says what it did.
func set(ctx context.Context, client *framework.Client, p string, data []byte) (string, error) {
	stat, err := client.SetData().ForPath(ctx, p, data)
	if err == nil {
		return "set " + setting(p, data, stat.Version), nil
	}
	if !errors.Is(err, zk.ErrNoNode) {
		return "", err
	}
	if _, err := client.Create().CreatingParentsIfNeeded().ForPath(ctx, p, data); err != nil {
		return "", err
	}
	return "created " + setting(p, data, 0), nil
}

// watcher follows root with a Tree cache, on its own client and session,
// and prints each change of a setting once.
func watcher(ctx context.Context, env *demo.Env) error {
	client, err := env.Client(ctx, nil)
	if err != nil {
		return err
	}
	defer client.Close()
	tree, err := cache.NewTree(client, root)
	if err != nil {
		return err
	}
	var out sync.Mutex // one writer of stdout at a time: the listener or the orders
	loaded := false    // the listener's own: Initialized was seen
	tree.AddListener(func(ev cache.Event) {
		var line string
		switch ev.Type {
		case cache.Initialized:
			loaded = true // the NodeAdded events before it are the initial load
		case cache.NodeAdded, cache.NodeUpdated:
			if len(ev.Entry.Data) > 0 { // not a parent node such as /db
				line = ev.Type.String() + " " + setting(ev.Entry.Path, ev.Entry.Data, ev.Entry.Stat.Version)
			}
		case cache.NodeRemoved:
			if len(ev.Entry.Data) > 0 {
				line = ev.Type.String() + " " + ev.Entry.Path
			}
		case cache.Resynced:
			line = "RESYNCED after a session change (the tree was read again on the new session)"
		}
		if loaded && line != "" {
			out.Lock()
			fmt.Println(line)
			out.Unlock()
		}
	})
	if err := tree.Start(ctx); err != nil {
		return err
	}
	defer tree.Close() // before client.Close: stops the listener
	entries, err := tree.Entries()
	if err != nil {
		return err
	}
	out.Lock()
	fmt.Printf("loaded %d nodes of %s\n", len(entries), root)
	out.Unlock()

	orders := bufio.NewScanner(os.Stdin)
	for orders.Scan() {
		switch orders.Text() {
		case "expire":
			// The parent cannot expire this session itself: that takes the
			// session's ID and password, which only this process has.
			if err := zktest.ExpireSession(ctx, env.Connect, client.ZooKeeper()); err != nil {
				return fmt.Errorf("expire the session: %w", err)
			}
		case "view":
			entries, err := tree.Entries()
			if err != nil {
				return err
			}
			out.Lock()
			for _, e := range entries {
				fmt.Println(viewLine(e.Path, e.Data, e.Stat.Version))
			}
			fmt.Println("view end")
			out.Unlock()
		default:
			return fmt.Errorf("unknown order %q", orders.Text())
		}
	}
	return orders.Err()
}
