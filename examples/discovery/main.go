// Command discovery shows recipes/discovery, Curator's curator-x-discovery:
// three worker processes (this program re-executed, each with its own
// client and session) serve HTTP on loopback and register as instances of
// one service; a client process calls them in turn through a round-robin
// Provider. Worker 2 is then killed: its instance stays until ZooKeeper
// expires its session, while the client's calls to it fail and are noted
// (skipped after two errors, Curator's down-instance policy); then it
// leaves the client's list. A restarted worker 2 registers again, and the
// client calls it again.
//
//	go run ./examples/discovery          # starts a local ZooKeeper
//	go run ./examples/discovery -zk host:port
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
)

const (
	basePath      = "/demo/discovery"
	service       = "greeter"
	workers       = 3
	workerSession = 4 * time.Second
	callEvery     = 100 * time.Millisecond
)

// Hidden: set when the demo re-executes itself as a worker or the client.
var (
	workerID = flag.String("worker", "", "")
	isClient = flag.Bool("client", false, "")
)

func main() {
	flag.Usage = demo.UsageWithoutHidden
	flag.Parse()
	if *workerID != "" || *isClient {
		ctx, cancel := context.WithTimeout(context.Background(), demo.Timeout)
		var err error
		if *isClient {
			err = caller(ctx)
		} else {
			err = worker(ctx, *workerID)
		}
		cancel()
		if err != nil {
			demo.Fatal(err)
		}
		return
	}
	demo.Run(run)
}

// line is one line of a child process's output.
type line struct {
	from   string // "worker-N" or "client"
	fields []string
	at     time.Time
}

// proc is a running child process.
type proc struct {
	kill  context.CancelFunc
	stdin interface{ Close() error }
	exit  chan error
}

func run(ctx context.Context, env *demo.Env) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lines := make(chan line)
	var procs []*proc
	defer func() { // kill whatever still runs, and wait for it
		cancel()
		for _, p := range procs {
			<-p.exit
		}
	}()
	spawn := func(name string, args ...string) (*proc, error) {
		pctx, kill := context.WithCancel(ctx)
		p := &proc{kill: kill, exit: make(chan error, 1)}
		stdin, err := demo.Spawn(pctx, append(args, "-zk", env.Connect), func(text string) {
			if f := strings.Fields(text); len(f) > 0 {
				select {
				case lines <- line{from: name, fields: f, at: time.Now()}:
				case <-ctx.Done():
				}
			}
		}, func(err error) { p.exit <- err })
		if err != nil {
			kill()
			return nil, err
		}
		p.stdin = stdin
		procs = append(procs, p)
		return p, nil
	}
	// The state the processes reported, updated by await from their lines.
	calls := map[string]int{}
	var (
		order      []string            // the client's calls, in order
		list       string              // the client's latest list of instances
		listAt     time.Time           // when it came
		registered = map[string]line{} // each worker's latest REGISTERED line
	)
	// await reads lines until cond holds (at once if it already does),
	// printing the client's failed calls as they come.
	await := func(cond func() bool) error {
		for !cond() {
			var l line
			select {
			case <-ctx.Done():
				return ctx.Err()
			case l = <-lines:
			}
			switch {
			case l.fields[0] == "REGISTERED":
				registered[l.from] = l
			case l.from == "client" && l.fields[0] == "LIST" && len(l.fields) > 1:
				list, listAt = l.fields[1], l.at
			case l.from == "client" && l.fields[0] == "CALLED" && len(l.fields) > 1:
				calls[l.fields[1]]++
				order = append(order, l.fields[1])
			case l.from == "client" && l.fields[0] == "FAILED" && len(l.fields) > 1:
				fmt.Printf("  client: the call to %s failed; noted (after 2 errors the provider skips it for 2s)\n", l.fields[1])
			}
		}
		return nil
	}
	listIs := func(want string) func() bool { return func() bool { return list == want } }

	fmt.Printf("%d worker processes serve HTTP on loopback and register as instances of %q under %s (session timeout %v)\n",
		workers, service, basePath, workerSession)
	ws := make([]*proc, workers+1)
	for i := 1; i <= workers; i++ {
		id := fmt.Sprintf("worker-%d", i)
		var err error
		if ws[i], err = spawn(id, "-worker", id); err != nil {
			return err
		}
		if err := await(func() bool { _, ok := registered[id]; return ok }); err != nil {
			return err
		}
		l := registered[id]
		fmt.Printf("  %s registered at %s (session %s)\n", id, l.fields[2], l.fields[3])
	}
	fmt.Printf("%d workers registered as %s instances\n", workers, service)

	client, err := spawn("client", "-client")
	if err != nil {
		return err
	}
	if err := await(listIs("worker-1,worker-2,worker-3")); err != nil {
		return err
	}
	fmt.Println("the client's provider lists worker-1 worker-2 worker-3")
	if err := await(func() bool { return len(order) >= 2*workers }); err != nil {
		return err
	}
	fmt.Printf("the client calls them round robin: %s, ...\n", strings.Join(order[:2*workers], ", "))
	if strings.Join(order[:2*workers], " ") != "worker-1 worker-2 worker-3 worker-1 worker-2 worker-3" {
		return fmt.Errorf("the client's first calls went to %q, not round robin", order)
	}

	fmt.Println("worker 2 is killed: it cannot unregister, so its instance stays until ZooKeeper expires its session")
	killed := time.Now()
	ws[2].kill()
	if err := <-ws[2].exit; err == nil {
		return errors.New("worker 2 exited cleanly when killed")
	}
	ws[2].exit <- nil // for the final wait
	if err := await(listIs("worker-1,worker-3")); err != nil {
		return err
	}
	fmt.Printf("  %.1fs later ZooKeeper expired worker 2's session and deleted its instance: the client's list is worker-1 worker-3\n",
		listAt.Sub(killed).Seconds())

	before := calls["worker-2"]
	delete(registered, "worker-2")
	if ws[2], err = spawn("worker-2", "-worker", "worker-2"); err != nil {
		return err
	}
	// The client may see the instance before the worker says it registered.
	if err := await(func() bool { _, ok := registered["worker-2"]; return ok && list == "worker-1,worker-2,worker-3" }); err != nil {
		return err
	}
	fmt.Println("worker 2 restarts and registers again: the client's list is worker-1 worker-2 worker-3")
	if err := await(func() bool { return calls["worker-2"] > before }); err != nil {
		return err
	}
	fmt.Println("the client calls worker-2 again")

	// Finish: the client, then the workers, each on its stdin's end; the
	// workers unregister.
	client.stdin.Close()
	for i := 1; i <= workers; i++ {
		ws[i].stdin.Close()
	}
	go func() { // drain the last lines
		for {
			select {
			case <-lines:
			case <-ctx.Done():
				return
			}
		}
	}()
	var errs []error
	for _, p := range procs {
		if err := <-p.exit; err != nil {
			errs = append(errs, err)
		}
		p.exit <- nil
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Printf("%d calls answered: worker-1 %d, worker-2 %d (%d before it was killed), worker-3 %d; every worker unregistered\n",
		calls["worker-1"]+calls["worker-2"]+calls["worker-3"], calls["worker-1"], calls["worker-2"], before, calls["worker-3"])
	return nil
}
