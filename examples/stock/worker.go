package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
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

// stdout is where a worker prints its events; tests replace it.
var stdout io.Writer = os.Stdout

// A worker prints one line per event on stdout, for the parent to read:
//
//	READY
//	SALE <units left> <fencing token>
//	STALE <fencing token> <token stored>
//	UNKNOWN <units left>
//	RESOLVED <how>
//	DIED <lock node> <fencing token>
//	DONE
//
// Errors go to stderr, and the exit status is 1.
//
// # Lost replies
//
// With -lose-replies, a worker's write may be applied by the server and
// its reply lost. The client sees a connection loss, reconnects within the
// session, and retries a write that is already done. No sale is made twice:
//   - the stock's set writes an absolute value, "<units-1> <token>", with
//     no version, so its retry writes the same bytes again (a relative
//     decrement, applied twice, would take two units for one sale; a
//     versioned set would meet its own first attempt and come back
//     indeterminate);
//   - the lock node's create is protected: its retry finds the node its
//     first attempt made, and the release's delete that finds no node has
//     done its job.
//
// The workers' clients use [framework.SessionErrorPolicy], so a hold's
// Lost() closes when the session is lost, not at every cut connection. The
// lock is the lock node, which lives as long as the session, and the
// client reports Lost before the server can expire the session: while
// Lost() is open, no other worker can have been granted the lock. Under the
// standard policy every lost reply would close Lost(), and the worker could
// vouch for no sale whose reply was lost.
//
// So a worker checks the hold (Hold.Check: Lost() still open, and the
// session's lease not ended on the clock now) before it writes, and writes
// the stock with its fencing token; it reports a sale only when the hold
// still checks after its write: the write was then made under the lock,
// and overwrote no other sale. If the check fails before the write, it
// does not write and buys again under a new hold; if after, the write may have
// overwritten the next holder's sale, and the worker exits with an error
// rather than report a sale it cannot vouch for.
//
// When the client's retries run out, the write's error matches
// [framework.ErrIndeterminate]: it may or may not have been applied. With
// the lock still trusted, no one else has written the stock since the
// worker read it, so it reads the stock again. If the node holds the
// worker's own "<units-1> <token>" (no other hold has that token), the sale
// was written (RESOLVED sale written); if it holds what the worker read,
// it was not, and the worker buys again (RESOLVED sale unwritten). Anything
// else, or a loss of the lock meanwhile, is an error. An Acquire that fails
// so sold nothing: the worker queues again (RESOLVED acquire; the client
// deletes a node the create may have left). A Release that fails so (the
// proxy loses the reply to the retry's delete too) comes
// after the sale is reported: the mutex's guaranteed delete removes the
// node in the background, and the worker goes on (RESOLVED release).
// Without a lock nothing settles such a write: the worker reports it as
// UNKNOWN, which the parent does not count as a sale.

// worker buys one unit at a time until the stock is gone: read the stock,
// take the payment, write the stock minus one. With useLock, each purchase
// holds the mutex; without it, nothing stops two workers from reading the
// same stock and both writing it minus one. dieAfter > 0 makes the worker
// exit mid-hold before its next purchase once it has sold that many.
func worker(ctx context.Context, connect string, useLock bool, dieAfter int) error {
	env := &demo.Env{Connect: connect}
	client, err := demo.Start(ctx, env.Builder().SessionTimeout(workerSession).
		ConnectionStateErrorPolicy(framework.SessionErrorPolicy))
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
	fmt.Fprintln(stdout, "READY")
	if err := start.Wait(ctx); err != nil {
		return err
	}
	for sold := 0; ; {
		var token int64
		var h *mutex.Hold
		if useLock {
			if h, err = lock.Acquire(ctx); errors.Is(err, framework.ErrIndeterminate) {
				fmt.Fprintln(stdout, "RESOLVED acquire")
				continue
			}
			if err != nil {
				return err
			}
			if token, err = h.FencingToken(); err != nil {
				return errors.Join(err, h.Release(ctx))
			}
		}
		out, err := buy(ctx, client, token, dieAfter > 0 && sold == dieAfter, h)
		if useLock {
			rerr := h.Release(ctx)
			if errors.Is(rerr, framework.ErrIndeterminate) && err == nil {
				fmt.Fprintln(stdout, "RESOLVED release")
				rerr = nil
			}
			err = errors.Join(err, rerr)
		}
		if err != nil {
			return err
		}
		switch out {
		case soldOut:
			fmt.Fprintln(stdout, "DONE")
			return nil
		case sale:
			sold++
		}
	}
}

// outcome is how one purchase ended.
type outcome int

const (
	noSale  outcome = iota // nothing sold: buy again
	sale                   // one unit sold
	soldOut                // the stock is gone
)

// buy makes one purchase: the unsafe read–modify–write of the stock node,
// with plain GetData and SetData and no version check. It reports soldOut
// when the stock is gone. With die, it exits the process after the read,
// holding the lock. With a lock, it sells only while lock.Lost() is open
// (see the comment above worker).
func buy(ctx context.Context, client *framework.Client, token int64, die bool, lock *mutex.Hold) (outcome, error) {
	data, _, err := client.GetData().ForPath(ctx, stockPath)
	if err != nil {
		return noSale, err
	}
	units, stored, err := parseStock(data)
	if err != nil {
		return noSale, err
	}
	if units <= 0 {
		return soldOut, nil
	}
	if die {
		fmt.Fprintf(stdout, "DIED %s %d\n", lock.Node(), token)
		os.Exit(3) // no Release, no Close: only the session's expiry frees the lock
	}
	time.Sleep(time.Millisecond) // take the payment: another worker may read the same stock now
	if token != 0 && token < stored {
		// A holder with an older token than the last write's is stale (its
		// session expired while it paused): the store refuses it.
		fmt.Fprintf(stdout, "STALE %d %d\n", token, stored)
		return noSale, nil
	}
	// Check, then write with the token: the check reads the lease now, and
	// the token, written with the stock, covers a pause after the check.
	if lock != nil && lost(lock) {
		return noSale, nil // the stock read may be stale already: buy again
	}
	want := formatStock(units-1, token)
	_, err = client.SetData().ForPath(ctx, stockPath, want)
	switch {
	case errors.Is(err, framework.ErrIndeterminate) && lock == nil:
		fmt.Fprintf(stdout, "UNKNOWN %d\n", units-1)
		return noSale, nil
	case errors.Is(err, framework.ErrIndeterminate):
		written, err := settle(ctx, client, lock, data, want)
		if err != nil {
			return noSale, err
		}
		if !written {
			fmt.Fprintln(stdout, "RESOLVED sale unwritten")
			return noSale, nil
		}
		fmt.Fprintln(stdout, "RESOLVED sale written")
	case err != nil:
		return noSale, err
	}
	if lock != nil && lost(lock) {
		return noSale, fmt.Errorf("the lock was lost around the sale that left %d (token %d): it may have overwritten another sale", units-1, token)
	}
	fmt.Fprintf(stdout, "SALE %d %d\n", units-1, token)
	return sale, nil
}

// settle finds out, under the lock, whether a write of want whose outcome
// was unknown was applied: it reads the stock again, which holds want if
// it was, and read (what the worker read before the write) if it was not.
func settle(ctx context.Context, client *framework.Client, lock *mutex.Hold, read, want []byte) (written bool, err error) {
	if lost(lock) {
		return false, fmt.Errorf("the lock was lost while the sale %q was written, and it is not known whether it was", want)
	}
	data, _, err := client.GetData().ForPath(ctx, stockPath)
	if err != nil {
		return false, err
	}
	if lost(lock) {
		return false, fmt.Errorf("the lock was lost while the sale %q was checked", want)
	}
	switch {
	case bytes.Equal(data, want):
		return true, nil
	case bytes.Equal(data, read):
		return false, nil
	}
	return false, fmt.Errorf("stock node %s holds %q, neither the sale %q nor the %q read before it, under the lock", stockPath, data, want, read)
}

// lost reports whether the hold can no longer be trusted now. Hold.Check
// reads the session's lease on the clock at the call, so a worker resumed
// after a pause past its lease (a GC pause, a stopped VM) stops here even
// before its Lost() closes on the client's timer goroutine. The pause
// between this check and the write is covered by the token alone: the
// store refuses a token lower than the last write's (see buy).
func lost(h *mutex.Hold) bool { return h.Check() != nil }

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
