// Command stock shows the oversell problem and recipes/mutex fixing it.
//
// A stock of 100 units is kept in a ZooKeeper node. Worker processes (this
// program re-executed, each with its own client and session) buy one unit at
// a time: read the stock, take the payment, write the stock minus one. The
// first round runs with no lock, so two workers can read the same stock and
// sell the same unit twice. The second round holds recipes/mutex around each
// purchase: exactly 100 units are sold, and the fencing token of every write
// is higher than the one before it. With -kill, one worker exits while it
// holds the lock; its lock node is ephemeral, so when ZooKeeper expires its
// session the node goes and the others carry on.
//
// With -lose-replies rate, each worker talks to ZooKeeper through a fault
// proxy (zktest.Proxy) that loses that share of the replies to its writes
// (the lock node's create and delete, the stock's set) after the server
// has applied them, and cuts the connection: the client retries a write
// that is already done. The mutex round must still sell exactly 100; the
// parent checks the count of sales, that no two sales left the same stock
// and that their fencing tokens rise as the stock falls, and the stock
// node's final value, and exits 1 otherwise. See worker for
// why a retried sale is not sold twice, and what a worker does when it
// cannot know whether its sale was written.
//
//	go run ./examples/stock                # starts a local ZooKeeper
//	go run ./examples/stock -kill -workers 6
//	go run ./examples/stock -lose-replies 0.05 -seed 7
//	go run ./examples/stock -zk host:port
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/barrier"
	"github.com/go-zookeeper/zk"
)

const initialStock = 100

var (
	workers = flag.Int("workers", 4, "number of worker processes")
	kill    = flag.Bool("kill", false, "make one worker exit while it holds the lock")
	lose    = flag.Float64("lose-replies", 0, "lose this share (0 to 1) of the replies to the workers' writes after ZooKeeper applied them, through a fault proxy per worker; 0 is off")
	seed    = flag.Uint64("seed", 1, "seed of the random choices of -lose-replies")

	// Hidden: set when the demo re-executes itself as a worker.
	workerMode = flag.String("worker", "", "")
	dieAfter   = flag.Int("die-after", 0, "")
)

func main() {
	flag.Usage = demo.UsageWithoutHidden
	flag.Parse()
	if *workerMode != "" {
		ctx, cancel := context.WithTimeout(context.Background(), demo.Timeout)
		err := worker(ctx, *demo.ZK, *workerMode == "mutex", *dieAfter)
		cancel()
		if err != nil {
			demo.Fatal(err)
		}
		return
	}
	if *workers < 1 {
		demo.Fatal(fmt.Errorf("-workers must be at least 1, not %d", *workers))
	}
	if !(*lose >= 0 && *lose < 1) { // also NaN
		demo.Fatal(fmt.Errorf("-lose-replies must be at least 0 and below 1, not %v", *lose))
	}
	demo.Run(run)
}

func run(ctx context.Context, env *demo.Env) error {
	client, err := env.Client(ctx, nil)
	if err != nil {
		return err
	}
	defer client.Close()
	fmt.Printf("%d worker processes buy one unit at a time from a stock of %d at %s\n", *workers, initialStock, stockPath)
	if *lose > 0 {
		fmt.Printf("each worker reaches ZooKeeper through a proxy that loses %g of the replies to its writes (-seed %d)\n", *lose, *seed)
	}

	fmt.Println("round 1, no lock: read the stock, take the payment, write the stock minus one")
	if _, err := round(ctx, env, client, 1, "unsafe", 0); err != nil {
		return err
	}

	fmt.Println("round 2, the same purchase holding recipes/mutex at " + lockPath)
	die := 0
	if *kill {
		die = 2
		fmt.Println("  (-kill: worker 1 will exit holding the lock after 2 sales)")
	}
	r, err := round(ctx, env, client, 2, "mutex", die)
	if err != nil {
		return err
	}
	if r.sold != initialStock || r.left != 0 || r.twice != 0 || r.stale != 0 || r.unknown != 0 {
		return fmt.Errorf("the mutex round sold %d units and left %d (%d sales left a stock another sale had left, %d stale writes, %d sales of unknown outcome): want %d, 0, 0, 0 and 0",
			r.sold, r.left, r.twice, r.stale, r.unknown, initialStock)
	}
	return nil
}

// result is what one round saw.
type result struct {
	sold, left, stale int
	twice             int // sales that reported a stock left that an earlier sale had reported
	unknown           int // sales whose outcome a worker could not know (UNKNOWN)
	resolved          map[string]int
}

// event is one line of a worker's output.
type event struct {
	worker int
	fields []string
	at     time.Time
}

// round resets the stock, runs the workers, and prints what they did. n
// numbers the round, for the seeds of -lose-replies.
func round(ctx context.Context, env *demo.Env, client *framework.Client, n int, mode string, die int) (_ result, err error) {
	if err := setStock(ctx, client, initialStock); err != nil {
		return result{}, err
	}
	start, err := barrier.New(client, startPath)
	if err != nil {
		return result{}, err
	}
	if err := start.Set(ctx); err != nil {
		return result{}, err
	}

	f := &faults{rate: *lose, seed: *seed}
	defer func() { err = errors.Join(err, f.Close()) }()
	events := make(chan event)
	exits := make(chan error, *workers)
	for i := 1; i <= *workers; i++ {
		connect, err := f.connect(env.Connect, n, i)
		if err != nil {
			return result{}, err
		}
		args := []string{"-worker", mode, "-zk", connect}
		if i == 1 && die > 0 {
			args = append(args, "-die-after", strconv.Itoa(die))
		}
		if err := spawn(ctx, args, i, events, exits); err != nil {
			return result{}, err
		}
	}

	var (
		r        = result{resolved: make(map[string]int)}
		perProc  = make([]int, *workers+1)
		tokens   = make(map[int]int64) // the fencing token of the sale that left each stock
		ready    int
		running  = *workers
		died     *event
		resumed  time.Time
		failures []error
	)
	for running > 0 {
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case err := <-exits:
			running--
			if err != nil {
				failures = append(failures, err)
				if err := start.Remove(ctx); err != nil { // let the others finish
					return r, err
				}
			}
		case e := <-events:
			switch e.fields[0] {
			case "READY":
				if ready++; ready == *workers {
					if err := start.Remove(ctx); err != nil { // all are up: let them go
						return r, err
					}
				}
			case "SALE":
				r.sold++
				perProc[e.worker]++
				units, _ := strconv.Atoi(e.fields[1])
				tok, _ := strconv.ParseInt(e.fields[2], 10, 64)
				if _, ok := tokens[units]; ok {
					r.twice++
				}
				tokens[units] = tok
				if died != nil && resumed.IsZero() {
					resumed = e.at
				}
			case "STALE":
				r.stale++
			case "UNKNOWN":
				r.unknown++
			case "RESOLVED":
				r.resolved[strings.Join(e.fields[1:], " ")]++
			case "DIED":
				died = &e
			}
		}
	}
	if err := errors.Join(failures...); err != nil {
		return r, err
	}
	var lastTok int64
	if mode == "mutex" {
		if lastTok, err = tokensRise(tokens); err != nil {
			return r, err
		}
	}

	data, _, err := client.GetData().ForPath(ctx, stockPath)
	if err != nil {
		return r, err
	}
	if r.left, _, err = parseStock(data); err != nil {
		return r, err
	}
	counts := make([]string, 0, *workers)
	for _, n := range perProc[1:] {
		counts = append(counts, strconv.Itoa(n))
	}
	fmt.Printf("  sold %d units, stock left %d (per worker: %s)\n", r.sold, r.left, strings.Join(counts, " "))
	switch lost := r.sold - (initialStock - r.left); {
	case lost > 0 && r.sold > initialStock:
		fmt.Printf("  oversold by %d: %d sales overwrote a stock another worker had already written (lost updates)\n",
			r.sold-initialStock, lost)
	case lost > 0:
		fmt.Printf("  %d sales overwrote a stock another worker had already written (lost updates)\n", lost)
	case lost < 0:
		fmt.Printf("  the stock fell by %d more than the sales: writes were applied more than once\n", -lost)
	case mode == "unsafe":
		fmt.Println("  no race this time (it depends on timing): run it again, or with more -workers")
	default:
		fmt.Printf("  nothing oversold, nothing lost; the fencing token rose with every sale, to %d (%d stale writes refused)\n", lastTok, r.stale)
	}
	if r.unknown > 0 {
		fmt.Printf("  %d more sales of unknown outcome, not counted: their writes' replies were lost, and no lock let the worker find out\n", r.unknown)
	}
	if died != nil {
		fmt.Printf("  worker %d exited holding the lock (node %s); ZooKeeper expired its session and deleted the node",
			died.worker, path.Base(died.fields[1]))
		if !resumed.IsZero() {
			fmt.Printf(", and %.1fs later the next worker sold", resumed.Sub(died.at).Seconds())
		}
		fmt.Println()
	}
	if *lose > 0 {
		fmt.Printf("  the proxies lost the replies to %d of %d writes after ZooKeeper applied them\n", f.lost(), f.writes())
		if len(r.resolved) > 0 {
			ways := make([]string, 0, len(r.resolved))
			for way, k := range r.resolved {
				ways = append(ways, fmt.Sprintf("%d %s", k, way))
			}
			slices.Sort(ways)
			fmt.Printf("  writes whose retries ran out, settled under the lock: %s\n", strings.Join(ways, ", "))
		}
	}
	return r, nil
}

// tokensRise checks that the fencing tokens of the sales rise as the stock
// falls, and returns the highest. The order of the workers' lines is not
// that of their sales (each worker's pipe is read on its own), but under
// the lock each sale left one unit less than the one before it.
func tokensRise(tokens map[int]int64) (highest int64, err error) {
	left := slices.Sorted(maps.Keys(tokens))
	for i := len(left) - 1; i >= 0; i-- {
		tok := tokens[left[i]]
		if tok <= highest {
			return highest, fmt.Errorf("the sale that left %d has fencing token %d, not above the %d of a sale that left more",
				left[i], tok, highest)
		}
		highest = tok
	}
	return highest, nil
}

// spawn starts worker i and forwards its output lines as events; its exit
// status goes to exits (nil for a clean exit or the planned death).
func spawn(ctx context.Context, args []string, i int, events chan<- event, exits chan<- error) error {
	planned := false // read and written on Spawn's goroutine only
	stdin, err := demo.Spawn(ctx, args, func(text string) {
		f := strings.Fields(text)
		if len(f) == 0 {
			return
		}
		planned = planned || f[0] == "DIED"
		select {
		case events <- event{worker: i, fields: f, at: time.Now()}:
		case <-ctx.Done():
		}
	}, func(err error) {
		if planned {
			err = nil
		}
		if err != nil {
			err = fmt.Errorf("worker %d: %w", i, err)
		}
		exits <- err
	})
	if err != nil {
		return err
	}
	return stdin.Close() // the workers take no orders
}

// setStock writes units to the stock node, creating it if needed.
func setStock(ctx context.Context, client *framework.Client, units int) error {
	_, err := client.Create().CreatingParentContainersIfNeeded().ForPath(ctx, stockPath, formatStock(units, 0))
	if errors.Is(err, zk.ErrNodeExists) {
		_, err = client.SetData().ForPath(ctx, stockPath, formatStock(units, 0))
	}
	return err
}
