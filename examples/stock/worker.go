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
	"github.com/go-curator/curator/recipes/barrier"
	"github.com/go-curator/curator/recipes/mutex"
)

// The node paths every process of the demo shares.
const (
	base      = "/demo/stock"
	stockPath = base + "/sku-42"  // "<units> <fencing token of the last write>"
	lockPath  = base + "/lock"    // recipes/mutex
	startPath = base + "/started" // recipes/barrier: holds the workers until all are up
)

// workerSession is the workers' session timeout: how long ZooKeeper keeps
// the lock node of a worker that died holding it (the server may round it
// up to its minimum, 2 ticks).
const workerSession = 4 * time.Second

// A worker prints one line per event on stdout, for the parent to read:
//
//	READY
//	SALE <units left> <fencing token>
//	STALE <fencing token> <token stored>
//	DIED <lock node> <fencing token>
//	DONE
//
// Errors go to stderr, and the exit status is 1.

// worker buys one unit at a time until the stock is gone: read the stock,
// take the payment, write the stock minus one. With useLock, each purchase
// holds the mutex; without it, nothing stops two workers from reading the
// same stock and both writing it minus one. dieAfter > 0 makes the worker
// exit mid-hold before its next purchase once it has sold that many.
func worker(ctx context.Context, connect string, useLock bool, dieAfter int) error {
	env := &demo.Env{Connect: connect}
	client, err := demo.Start(ctx, env.Builder().SessionTimeout(workerSession))
	if err != nil {
		return err
	}
	defer client.Close()
	lock, err := mutex.New(client, lockPath)
	if err != nil {
		return err
	}
	start, err := barrier.New(client, startPath)
	if err != nil {
		return err
	}
	fmt.Println("READY")
	if err := start.Wait(ctx); err != nil {
		return err
	}
	for sold := 0; ; {
		var token int64
		var h *mutex.Hold
		if useLock {
			if h, err = lock.Acquire(ctx); err != nil {
				return err
			}
			if token, err = h.FencingToken(); err != nil {
				return err
			}
		}
		done, err := buy(ctx, client, token, dieAfter > 0 && sold == dieAfter, h)
		if useLock {
			err = errors.Join(err, h.Release(ctx))
		}
		if err != nil {
			return err
		}
		if done {
			fmt.Println("DONE")
			return nil
		}
		sold++
	}
}

// buy makes one purchase: the unsafe read–modify–write of the stock node,
// with plain GetData and SetData and no version check. It reports done when
// the stock is gone. With die, it exits the process after the read, holding
// the lock.
func buy(ctx context.Context, client *framework.Client, token int64, die bool, lock *mutex.Hold) (done bool, err error) {
	data, _, err := client.GetData().ForPath(ctx, stockPath)
	if err != nil {
		return false, err
	}
	units, stored, err := parseStock(data)
	if err != nil {
		return false, err
	}
	if units <= 0 {
		return true, nil
	}
	if die {
		fmt.Printf("DIED %s %d\n", lock.Node(), token)
		os.Exit(3) // no Release, no Close: only the session's expiry frees the lock
	}
	time.Sleep(time.Millisecond) // take the payment: another worker may read the same stock now
	if token != 0 && token < stored {
		// A holder with an older token than the last write's is stale (its
		// session expired while it paused): the store refuses it.
		fmt.Printf("STALE %d %d\n", token, stored)
		return false, nil
	}
	// A plain set writes an absolute value, so a lost reply cannot sell a
	// unit twice: the client's retry writes the same bytes again. If the
	// retries run out, the error matches framework.ErrIndeterminate (the
	// sale may or may not be written) and the worker stops, so the round
	// fails instead of reporting a count it cannot vouch for.
	if _, err := client.SetData().ForPath(ctx, stockPath, formatStock(units-1, token)); err != nil {
		return false, err
	}
	fmt.Printf("SALE %d %d\n", units-1, token)
	return false, nil
}

func formatStock(units int, token int64) []byte {
	return fmt.Appendf(nil, "%d %d", units, token)
}

func parseStock(b []byte) (units int, token int64, err error) {
	u, t, ok := strings.Cut(string(b), " ")
	if ok {
		units, err = strconv.Atoi(u)
	}
	if ok && err == nil {
		token, err = strconv.ParseInt(t, 10, 64)
	}
	if !ok || err != nil {
		return 0, 0, fmt.Errorf("stock node %s holds %q, not \"<units> <token>\"", stockPath, b)
	}
	return units, token, nil
}
