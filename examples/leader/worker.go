package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/leaderlatch"
	"github.com/go-zookeeper/zk"
)

// The node paths every process of the demo shares.
const (
	base         = "/demo/leader"
	electionPath = base + "/election" // recipes/leaderlatch
	jobPath      = base + "/job"      // "<jobs done> <fencing token of the last write>"
)

// workerSession is the workers' session timeout: how long ZooKeeper keeps
// the node of a worker that died leading.
const workerSession = 4 * time.Second

// jobPause is how long a leader takes per job.
const jobPause = 150 * time.Millisecond

// A worker prints one line per event on stdout, for the parent to read:
//
//	READY
//	LEADER <fencing token>
//	JOB <jobs done> <fencing token>
//	STALE <fencing token> <token stored>
//	LOST <fencing token>
//	DIED <fencing token>
//	DONE
//
// Errors go to stderr, and the exit status is 1.

// worker joins the election as id and, each time it leads, does jobs with
// its fencing token until it has done its share; then it closes its latch,
// which hands the leadership to the next worker at once. dieAfter > 0 makes
// it exit while leading, without closing anything, once it has done that
// many jobs: its node stays until ZooKeeper expires its session.
func worker(ctx context.Context, connect, id string, share, dieAfter int) error {
	env := &demo.Env{Connect: connect}
	client, err := demo.Start(ctx, env.Builder().SessionTimeout(workerSession))
	if err != nil {
		return err
	}
	defer client.Close()
	latch, err := leaderlatch.New(client, electionPath, leaderlatch.WithID(id))
	if err != nil {
		return err
	}
	if err := latch.Start(ctx); err != nil {
		return err
	}
	defer latch.Close(context.WithoutCancel(ctx))
	fmt.Println("READY")

	for done := 0; done < share; {
		lead, err := latch.Await(ctx)
		if err != nil {
			return err
		}
		token, err := lead.FencingToken()
		if err != nil {
			return err
		}
		fmt.Println("LEADER", token)
		for done < share {
			if dieAfter > 0 && done == dieAfter {
				fmt.Println("DIED", token)
				os.Exit(0) // no Close: the session, and the node, live on in ZooKeeper
			}
			select {
			case <-lead.Lost():
				fmt.Println("LOST", token)
			case <-time.After(jobPause):
			}
			if isClosed(lead.Lost()) {
				break // not the leader any more: wait for the next term
			}
			n, stored, err := doJob(ctx, client, token)
			if err != nil {
				return err
			}
			if n < 0 {
				fmt.Println("STALE", token, stored)
				break
			}
			done++
			fmt.Println("JOB", n, token)
		}
	}
	if err := latch.Close(ctx); err != nil {
		return err
	}
	fmt.Println("DONE")
	return nil
}

// doJob does one job as the leader with token: a write to the job node
// that the node's keeper (here, a compare-and-set on its version) refuses
// if a higher token has written before. It returns the jobs done after
// the write, or -1 and the stored token if the write was refused.
func doJob(ctx context.Context, client *framework.Client, token int64) (int, int64, error) {
	for {
		data, stat, err := client.GetData().ForPath(ctx, jobPath)
		if err != nil {
			return 0, 0, err
		}
		n, stored, err := parseJob(data)
		if err != nil {
			return 0, 0, err
		}
		if token < stored {
			return -1, stored, nil
		}
		_, err = client.SetData().WithVersion(stat.Version).ForPath(ctx, jobPath, formatJob(n+1, token))
		if errors.Is(err, zk.ErrBadVersion) && !errors.Is(err, framework.ErrIndeterminate) {
			continue // another write came first: compare again
		}
		if err != nil {
			return 0, 0, err
		}
		return n + 1, stored, nil
	}
}

func formatJob(n int, token int64) []byte { return fmt.Appendf(nil, "%d %d", n, token) }

func parseJob(data []byte) (int, int64, error) {
	f := strings.Fields(string(data))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("job node holds %q", data)
	}
	n, err1 := strconv.Atoi(f[0])
	tok, err2 := strconv.ParseInt(f[1], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("job node holds %q: %w", data, err)
	}
	return n, tok, nil
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
