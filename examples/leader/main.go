// Command leader shows recipes/leaderlatch, Curator's LeaderLatch: three
// worker processes (this program re-executed, each with its own client and
// session) join one election; the leader does the jobs, writing each one
// with its fencing token, and then closes its latch, which hands the
// leadership to the next worker at once. With -kill, the first leader exits
// in the middle of its work without closing anything: its node stays until
// ZooKeeper expires its session, and then the next worker takes over,
// within the session timeout, with a higher fencing token.
//
//	go run ./examples/leader          # starts a local ZooKeeper
//	go run ./examples/leader -kill
//	go run ./examples/leader -zk host:port
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/framework"
	"github.com/go-zookeeper/zk"
)

const (
	workers = 3
	share   = 3 // jobs each worker does while it leads
	dieAt   = 2 // with -kill, worker 1 exits after this many jobs
)

var (
	kill = flag.Bool("kill", false, "make the first leader exit while it leads, without closing its latch")

	// Hidden: set when the demo re-executes itself as a worker.
	workerID = flag.String("worker", "", "")
	dieAfter = flag.Int("die-after", 0, "")
)

func main() {
	flag.Usage = demo.UsageWithoutHidden
	flag.Parse()
	if *workerID != "" {
		ctx, cancel := context.WithTimeout(context.Background(), demo.Timeout)
		err := worker(ctx, *demo.ZK, *workerID, share, *dieAfter)
		cancel()
		if err != nil {
			demo.Fatal(err)
		}
		return
	}
	demo.Run(run)
}

// event is one line of a worker's output.
type event struct {
	worker int
	fields []string
	at     time.Time
}

func run(ctx context.Context, env *demo.Env) error {
	client, err := env.Client(ctx, nil)
	if err != nil {
		return err
	}
	defer client.Close()
	if err := resetJobs(ctx, client); err != nil {
		return err
	}
	fmt.Printf("%d worker processes join the election at %s; the leader does %d jobs, writing each to %s with its fencing token, then closes its latch\n",
		workers, electionPath, share, jobPath)
	if *kill {
		fmt.Printf("(-kill: worker 1 will exit after %d jobs while it leads, without closing its latch)\n", dieAt)
	}

	// The workers end with run: on an error they are killed, and waited for.
	ctx, cancel := context.WithCancel(ctx)
	events := make(chan event)
	exits := make(chan error, workers)
	started := 0 // workers running
	spawned := 0 // workers ever started: names and numbers them
	defer func() {
		cancel()
		for ; started > 0; started-- {
			<-exits
		}
	}()
	startNext := func() error {
		i := spawned + 1 // not started+1: a worker that died already left started
		args := []string{"-worker", fmt.Sprintf("worker-%d", i), "-zk", env.Connect}
		if i == 1 && *kill {
			args = append(args, "-die-after", strconv.Itoa(dieAt))
		}
		if err := spawn(ctx, args, i, events, exits); err != nil {
			return err
		}
		started++
		spawned++
		return nil
	}
	// One at a time, so that they queue, and lead, in order.
	if err := startNext(); err != nil {
		return err
	}

	var (
		jobs, stale int
		closed      int
		tokens      []string
		lastToken   int64
		died        *event
		takeover    time.Time
		failures    []error
	)
	for started > 0 {
		var e event
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-exits:
			started--
			if err != nil {
				failures = append(failures, err)
			}
			continue
		case e = <-events:
		}
		switch e.fields[0] {
		case "READY":
			if e.worker < workers {
				if err := startNext(); err != nil {
					return err
				}
			}
		case "LEADER":
			tok, _ := strconv.ParseInt(e.fields[1], 10, 64)
			if tok <= lastToken {
				return fmt.Errorf("worker %d leads with fencing token %d, not above the last leader's %d", e.worker, tok, lastToken)
			}
			lastToken = tok
			tokens = append(tokens, e.fields[1])
			fmt.Printf("worker %d leads (fencing token %d)\n", e.worker, tok)
			if died != nil && takeover.IsZero() {
				takeover = e.at
				fmt.Printf("  %.1fs after worker %d died, ZooKeeper expired its session (timeout %v) and deleted its node; worker %d took over\n",
					takeover.Sub(died.at).Seconds(), died.worker, workerSession, e.worker)
			}
		case "JOB":
			jobs++
			fmt.Printf("  worker %d: job %s done, written with token %s\n", e.worker, e.fields[1], e.fields[2])
		case "STALE":
			stale++
			fmt.Printf("  worker %d: a write with token %s was refused (token %s was stored)\n", e.worker, e.fields[1], e.fields[2])
		case "LOST":
			fmt.Printf("  worker %d lost the leadership (token %s)\n", e.worker, e.fields[1])
		case "DIED":
			d := e
			died = &d
			fmt.Printf("worker %d exits while it leads, without closing its latch: its node stays until ZooKeeper expires its session\n", e.worker)
		case "DONE":
			if closed++; closed+dead(died) < workers {
				fmt.Printf("worker %d closes its latch: the next in line leads at once\n", e.worker)
			} else {
				fmt.Printf("worker %d closes its latch: the election is empty\n", e.worker)
			}
		}
	}
	if err := errors.Join(failures...); err != nil {
		return err
	}
	want := workers * share
	if *kill {
		want -= share - dieAt
	}
	data, _, err := client.GetData().ForPath(ctx, jobPath)
	if err != nil {
		return err
	}
	stored, _, err := parseJob(data)
	if err != nil {
		return err
	}
	if jobs != want || stored != want || stale != 0 {
		return fmt.Errorf("%d jobs reported, %d stored, %d stale writes: want %d, %d and 0", jobs, stored, stale, want, want)
	}
	fmt.Printf("%d jobs done by %d leaders, one at a time; the fencing token rose %s; %d stale writes refused\n",
		jobs, len(tokens), strings.Join(tokens, " -> "), stale)
	if died != nil && takeover.IsZero() {
		return fmt.Errorf("nobody took over after worker %d died", died.worker)
	}
	return nil
}

func dead(e *event) int {
	if e != nil {
		return 1
	}
	return 0
}

// spawn starts worker i and forwards its output lines as events; its exit
// status goes to exits (nil for a clean exit or the planned death).
func spawn(ctx context.Context, args []string, i int, events chan<- event, exits chan<- error) error {
	stdin, err := demo.Spawn(ctx, args, func(text string) {
		f := strings.Fields(text)
		if len(f) == 0 {
			return
		}
		select {
		case events <- event{worker: i, fields: f, at: time.Now()}:
		case <-ctx.Done():
		}
	}, func(err error) {
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

// resetJobs sets the job node to no jobs done, creating it if needed.
func resetJobs(ctx context.Context, client *framework.Client) error {
	_, err := client.Create().CreatingParentContainersIfNeeded().ForPath(ctx, jobPath, formatJob(0, 0))
	if errors.Is(err, zk.ErrNodeExists) {
		_, err = client.SetData().ForPath(ctx, jobPath, formatJob(0, 0))
	}
	return err
}
