package recipe

import (
	"context"
	"reflect"
	"sync"

	"github.com/go-curator/curator/framework"
	"github.com/go-zookeeper/zk"
)

// The loss rule: from the moment a hold, a lease or a leadership is visible
// to the caller, its Lost() follows the client's state and session,
// whatever I/O the recipe still does for it; and no acquire returns one
// whose Lost() has already closed. The helpers below keep a recipe's
// selects off its own I/O.

// CancelOnClose returns a copy of ctx that is cancelled as soon as one of
// chs closes, and a stop func that cancels it and waits for the goroutine
// that watches chs. A multi-step acquire runs its later steps under it, so
// that the loss of what it took first ends the wait for the rest. stop must
// be called; calling it again does nothing.
func CancelOnClose(ctx context.Context, chs ...<-chan struct{}) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	if len(chs) == 0 {
		return ctx, cancel
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if len(chs) == 1 {
			select {
			case <-chs[0]:
			case <-ctx.Done():
			}
			cancel()
			return
		}
		cases := make([]reflect.SelectCase, 0, len(chs)+1)
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
		for _, ch := range chs {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
		}
		reflect.Select(cases)
		cancel()
	}()
	return ctx, func() {
		cancel()
		<-done
	}
}

// NodeWatch sets a data watch on one node on a goroutine of its own, so
// that the holder's select never waits on that I/O: a leader watches its
// own node this way, and its select on the loss signals goes on while the
// watch is being set, even while the retry loop waits for a connection.
// Use it from one goroutine.
type NodeWatch struct {
	client *framework.Client
	node   string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	result chan NodeWatchResult
}

// NodeWatchResult is the outcome of setting a NodeWatch: the watch's
// channel, or the read's error (zk.ErrNoNode when the node is gone).
type NodeWatchResult struct {
	Events <-chan zk.Event
	Err    error
}

// WatchNode starts setting a data watch on node under ctx, and returns at
// once; the outcome comes on Result.
func WatchNode(ctx context.Context, client *framework.Client, node string) *NodeWatch {
	ctx, cancel := context.WithCancel(ctx)
	w := &NodeWatch{client: client, node: node, ctx: ctx, cancel: cancel, result: make(chan NodeWatchResult, 1)}
	w.Again()
	return w
}

// Again sets the watch again, after the last one fired or failed: its
// outcome comes on Result. Call it only once the last outcome has come.
func (w *NodeWatch) Again() {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		_, _, ch, err := w.client.GetData().ForPathW(w.ctx, w.node)
		w.result <- NodeWatchResult{Events: ch, Err: err}
	}()
}

// Result returns the channel on which each outcome of setting the watch
// comes, once per WatchNode or Again.
func (w *NodeWatch) Result() <-chan NodeWatchResult { return w.result }

// Stop cancels the read in flight, if any, and waits for its goroutine.
// End the holder's term first: the read may wait for go-zookeeper to give
// up on a dead connection.
func (w *NodeWatch) Stop() {
	w.cancel()
	w.wg.Wait()
}
