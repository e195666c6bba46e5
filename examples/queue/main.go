// Command queue shows a work queue on recipes/queue in lock-safe mode:
// one process feeds jobs, three worker processes (this program
// re-executed, each with its own client and session) drain them, and one
// worker dies in the middle of a job. Nothing is lost.
//
// Each worker consumes with queue.WithLockPath: before it reads a job it
// creates the job's EPHEMERAL lock node, and it deletes the job (with the
// lock) only after its work returned nil. Worker 1 exits on its first job
// without finishing it, as a crashed process would; when ZooKeeper expires
// its session the lock goes, and another worker takes the job up at once,
// with the same Token, so a store that records tokens could refuse a
// second write of it. The parent checks that every job was done, none
// twice, and that the queue and its lock directory are empty, and exits 1
// otherwise.
//
//	go run ./examples/queue              # starts a local ZooKeeper
//	go run ./examples/queue -jobs 100
//	go run ./examples/queue -zk host:port
package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/queue"
)

const (
	queuePath = "/demo/queue/jobs"
	lockPath  = "/demo/queue/jobs-locks"
	workers   = 3
	// workerSession is the workers' session timeout: how long the dead
	// worker's lock outlives it.
	workerSession = 4 * time.Second
)

var (
	jobs = flag.Int("jobs", 30, "number of jobs to feed")

	// Hidden: set when the demo re-executes itself as a worker.
	workerID = flag.Int("worker", 0, "")
	die      = flag.Bool("die", false, "")
)

func main() {
	flag.Usage = demo.UsageWithoutHidden
	flag.Parse()
	if *workerID > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), demo.Timeout)
		err := worker(ctx, *demo.ZK, *die)
		cancel()
		if err != nil {
			demo.Fatal(err)
		}
		return
	}
	if *jobs < 1 {
		demo.Fatal(fmt.Errorf("-jobs must be at least 1, not %d", *jobs))
	}
	demo.Run(run)
}

// event is one line of a worker's output.
type event struct {
	worker int
	fields []string
	at     time.Time
}

// done is one finished job, as a worker reported it.
type done struct {
	worker int
	token  string
	at     time.Time
}

func run(ctx context.Context, env *demo.Env) error {
	client, err := env.Client(ctx, nil)
	if err != nil {
		return err
	}
	defer client.Close()
	// A fresh queue: what an earlier run left is not this run's.
	for _, p := range []string{queuePath, lockPath} {
		if err := client.Delete().DeletingChildrenIfNeeded().ForPath(ctx, p); err != nil && !isNoNode(err) {
			return err
		}
	}

	events := make(chan event)
	exits := make(chan error, workers)
	var stdins []func() error
	for i := 1; i <= workers; i++ {
		args := []string{"-worker", strconv.Itoa(i), "-zk", env.Connect}
		if i == 1 {
			args = append(args, "-die")
		}
		stop, err := spawn(ctx, args, i, events, exits)
		if err != nil {
			return err
		}
		stdins = append(stdins, stop)
	}
	stopAll := func() {
		for _, stop := range stdins {
			stop()
		}
	}
	defer stopAll()

	feeder, err := queue.New(client, queuePath, queue.WithLockPath(lockPath))
	if err != nil {
		return err
	}
	if err := feeder.Start(ctx); err != nil {
		return err
	}
	defer feeder.Close(context.WithoutCancel(ctx))

	var (
		finished = map[string][]done{}
		perProc  = make([]int, workers+1)
		ready    int
		running  = workers
		died     *event
		fed      bool
	)
	for running > 0 {
		if fed && len(finished) == *jobs && died != nil && len(finished[died.fields[1]]) > 0 {
			stopAll() // every job is done: the workers may go
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-exits:
			running--
			if err != nil {
				return err
			}
		case e := <-events:
			switch e.fields[0] {
			case "READY":
				if ready++; ready < workers {
					break
				}
				if err := feed(ctx, feeder); err != nil {
					return err
				}
				fed = true
			case "DIED":
				died = &e
				fmt.Printf("worker %d dies while working on %s (token %s), without finishing it\n", e.worker, e.fields[1], e.fields[2])
			case "DONE":
				finished[e.fields[1]] = append(finished[e.fields[1]], done{worker: e.worker, token: e.fields[2], at: e.at})
				perProc[e.worker]++
			}
		}
	}

	if died == nil {
		return fmt.Errorf("worker 1 never died: it got no job")
	}
	job, token := died.fields[1], died.fields[2]
	again := finished[job]
	if len(again) == 0 {
		return fmt.Errorf("%s, the dead worker's job, was never done", job)
	}
	fmt.Printf("  %.1fs later ZooKeeper expired worker %d's session (timeout %v) and deleted its lock; worker %d did %s, token %s: the same token = %v\n",
		again[0].at.Sub(died.at).Seconds(), died.worker, workerSession, again[0].worker, job, again[0].token, again[0].token == token)

	var lost, twice []string
	for i := 1; i <= *jobs; i++ {
		name := jobName(i)
		switch n := len(finished[name]); {
		case n == 0:
			lost = append(lost, name)
		case n > 1:
			twice = append(twice, name)
		}
	}
	items, locks := countChildren(ctx, client, queuePath, "queue-"), countChildren(ctx, client, lockPath, "")
	fmt.Printf("%d jobs done by %d workers (per worker: %s); %d lost, %d done twice; %d items and %d locks left\n",
		len(finished), workers, strings.Trim(fmt.Sprint(perProc[1:]), "[]"), len(lost), len(twice), items, locks)
	if len(lost) > 0 || len(twice) > 0 || items != 0 || locks != 0 || again[0].token != token {
		return fmt.Errorf("lost %q, done twice %q, %d items and %d locks left, tokens %s and %s", lost, twice, items, locks, token, again[0].token)
	}
	return nil
}

// feed puts the jobs: the first half one by one, the rest as one node
// (PutMulti), to show both.
func feed(ctx context.Context, q *queue.Queue) error {
	half := *jobs / 2
	for i := 1; i <= half; i++ {
		if err := q.Put(ctx, []byte(jobName(i))); err != nil {
			return err
		}
	}
	var rest [][]byte
	for i := half + 1; i <= *jobs; i++ {
		rest = append(rest, []byte(jobName(i)))
	}
	if len(rest) > 0 {
		if err := q.PutMulti(ctx, rest); err != nil {
			return err
		}
	}
	fmt.Printf("the feeder put %d jobs on %s (%d one by one, %d in one PutMulti node); 3 workers drain it, lock-safe (locks at %s)\n",
		*jobs, queuePath, half, len(rest), lockPath)
	return nil
}

func jobName(i int) string { return fmt.Sprintf("job-%03d", i) }

// countChildren counts p's children that start with prefix (-1 when p
// cannot be read).
func countChildren(ctx context.Context, c *framework.Client, p, prefix string) int {
	kids, err := c.GetChildren().ForPath(ctx, p)
	if isNoNode(err) {
		return 0
	}
	if err != nil {
		return -1
	}
	n := 0
	for _, k := range kids {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

// spawn starts worker i and returns a func that tells it to finish.
func spawn(ctx context.Context, args []string, i int, events chan<- event, exits chan<- error) (func() error, error) {
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
		return nil, err
	}
	closed := false
	return func() error {
		if closed {
			return nil
		}
		closed = true
		return stdin.Close()
	}, nil
}
