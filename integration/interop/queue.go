package interop

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// The queue helper is a Java program of its own, java/QueueHelper.java,
// for Curator's QueueBuilder queues and SimpleDistributedQueue. It speaks
// CuratorHelper's protocol and is driven through the same Helper type;
// JavaQueue wraps its q.* commands for one queue.

var queueProgram = &program{class: "QueueHelper", kind: "queue", what: "queue helper"}

// StartQueue starts a queue helper connected to connectString with
// DefaultSessionTimeout; t.Cleanup closes it (its queues, then its
// session). It skips or fails t when Java Curator is missing, as Start
// does.
func StartQueue(t testing.TB, connectString string) *Helper {
	t.Helper()
	return start(t, queueProgram, connectString, DefaultSessionTimeout, false)
}

// The kinds of Curator queue a JavaQueue can be.
const (
	QueuePlain    = "plain"    // DistributedQueue
	QueueID       = "id"       // DistributedIdQueue
	QueuePriority = "priority" // DistributedPriorityQueue
	QueueDelay    = "delay"    // DistributedDelayQueue
)

// JavaQueue is one Curator queue started in a queue helper.
type JavaQueue struct {
	h    *Helper
	name string
}

// QueueOptions say how StartJavaQueue builds a queue.
type QueueOptions struct {
	// LockPath is QueueBuilder.lockPath (lock-safe mode); "" for none.
	LockPath string
	// Consume gives the queue a consumer that records the items it is
	// handed (see JavaQueue.Taken); without it the queue only produces.
	Consume bool
}

// StartJavaQueue builds a Curator queue of kind at path in h (with
// putInBackground(false), so that a Put returns once its node exists) and
// starts it. name tells it from the helper's other queues.
func StartJavaQueue(ctx context.Context, h *Helper, name, kind, path string, o QueueOptions) (*JavaQueue, error) {
	lock, consume := "-", "0"
	if o.LockPath != "" {
		lock = o.LockPath
	}
	if o.Consume {
		consume = "1"
	}
	if _, err := h.Call(ctx, "q.start", name, kind, path, lock, consume); err != nil {
		return nil, err
	}
	return &JavaQueue{h: h, name: name}, nil
}

// Put puts data; arg is the id, the priority or the epoch in ms, by kind
// ("" for a plain queue).
func (q *JavaQueue) Put(ctx context.Context, data []byte, arg string) error {
	words := []string{"q.put", q.name, Hex(data)}
	if arg != "" {
		words = append(words, arg)
	}
	_, err := q.h.Call(ctx, words...)
	return err
}

// PutMulti puts items as one node (Curator's putMulti); arg as for Put.
func (q *JavaQueue) PutMulti(ctx context.Context, items [][]byte, arg string) error {
	if arg == "" {
		arg = "-"
	}
	words := []string{"q.putmulti", q.name, arg}
	for _, it := range items {
		words = append(words, Hex(it))
	}
	_, err := q.h.Call(ctx, words...)
	return err
}

// Taken returns the items the queue's consumer has been handed so far, in
// the order it was handed them.
func (q *JavaQueue) Taken(ctx context.Context) ([][]byte, error) {
	f, err := q.h.Fields(ctx, "q.taken", q.name)
	if err != nil {
		return nil, err
	}
	if len(f) == 0 {
		return nil, fmt.Errorf("interop: q.taken: empty reply")
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n != len(f)-1 {
		return nil, fmt.Errorf("interop: q.taken: bad reply %q", f)
	}
	out := make([][]byte, 0, n)
	for _, w := range f[1:] {
		b, err := unhexItem(w)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Remove is DistributedIdQueue.remove: it returns how many items of id
// it removed.
func (q *JavaQueue) Remove(ctx context.Context, id string) (int, error) {
	out, err := q.h.Call(ctx, "q.remove", q.name, id)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(out))
}

// Close closes the Curator queue (its client stays).
func (q *JavaQueue) Close(ctx context.Context) error {
	_, err := q.h.Call(ctx, "q.close", q.name)
	return err
}

// SimpleOffer is SimpleDistributedQueue.offer on path.
func SimpleOffer(ctx context.Context, h *Helper, path string, data []byte) error {
	_, err := h.Call(ctx, "sq.offer", path, Hex(data))
	return err
}

// SimplePoll is SimpleDistributedQueue.poll on path, waiting up to
// timeoutMs; ok is false when nothing came.
func SimplePoll(ctx context.Context, h *Helper, path string, timeoutMs int) (data []byte, ok bool, err error) {
	out, err := h.Call(ctx, "sq.poll", path, strconv.Itoa(timeoutMs))
	if err != nil || out == "none" {
		return nil, false, err
	}
	b, err := unhexItem(out)
	return b, err == nil, err
}

// SimplePeek is SimpleDistributedQueue.peek on path; ok is false when the
// queue is empty.
func SimplePeek(ctx context.Context, h *Helper, path string) (data []byte, ok bool, err error) {
	out, err := h.Call(ctx, "sq.peek", path)
	if err != nil || out == "none" {
		return nil, false, err
	}
	b, err := unhexItem(out)
	return b, err == nil, err
}

// unhexItem decodes an item's hex, "-" being the empty item.
func unhexItem(w string) ([]byte, error) {
	if w == "-" {
		return []byte{}, nil
	}
	b, err := hex.DecodeString(w)
	if err != nil {
		return nil, fmt.Errorf("interop: bad item %q: %w", w, err)
	}
	return b, nil
}
