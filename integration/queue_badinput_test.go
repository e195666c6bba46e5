package integration

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/queue"
)

func TestQueue_BadInput(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	p := qTestPath(t)
	for _, tt := range []struct {
		name string
		make func() error
		want error
	}{
		{"nil client", func() error { _, err := queue.New(nil, p); return err }, framework.ErrNilClient},
		{"relative path", func() error { _, err := queue.New(c, "q"); return err }, framework.ErrInvalidPath},
		{"root", func() error { _, err := queue.NewPriority(c, "/"); return err }, framework.ErrInvalidPath},
		{"nil option", func() error { _, err := queue.NewDelay(c, p, nil); return err }, framework.ErrInvalidArgument},
		{"lock path below", func() error { _, err := queue.New(c, p, queue.WithLockPath(p+"/locks")); return err }, framework.ErrInvalidArgument},
		{"line path is the queue", func() error { _, err := queue.NewID(c, p, queue.WithLinePath(p)); return err }, framework.ErrInvalidArgument},
		{"bad lock path", func() error { _, err := queue.New(c, p, queue.WithLockPath("x//")); return err }, framework.ErrInvalidPath},
		{"nil consumer", func() error { _, err := queue.New(c, p, queue.WithConsumer(nil)); return err }, framework.ErrInvalidArgument},
		{"error mode", func() error { _, err := queue.New(c, p, queue.WithErrorMode(7)); return err }, framework.ErrInvalidArgument},
		{"max bytes", func() error { _, err := queue.New(c, p, queue.WithMaxBytes(0)); return err }, framework.ErrInvalidArgument},
		{"simple root", func() error { _, err := queue.NewSimple(c, "/"); return err }, framework.ErrInvalidPath},
	} {
		err := tt.make()
		if !errors.Is(err, queue.ErrInvalidArgument) || !errors.Is(err, tt.want) || strings.Count(err.Error(), "queue:") != 1 {
			t.Errorf("%s: %v; want ErrInvalidArgument and %v, one prefix", tt.name, err, tt.want)
		}
	}
	q, _ := queue.New(c, p)
	pq, _ := queue.NewPriority(c, p+"-p")
	dq, _ := queue.NewDelay(c, p+"-d")
	iq, _ := queue.NewID(c, p+"-i")
	var zero queue.Queue
	var nilq *queue.Queue
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name string
		err  error
		want error
	}{
		{"nil ctx", q.Put(nil, []byte("x")), queue.ErrInvalidArgument}, //nolint:staticcheck // the bad input tested
		{"done ctx", q.Put(done, []byte("x")), context.Canceled},
		{"empty PutMulti", q.PutMulti(t.Context(), nil), queue.ErrInvalidArgument},
		{"zero Queue", zero.Put(t.Context(), nil), queue.ErrInvalidArgument},
		{"nil Queue", nilq.Start(t.Context()), queue.ErrInvalidArgument},
		{"nil Queue Close", nilq.Close(t.Context()), queue.ErrInvalidArgument},
		{"priority past int32", pq.Put(t.Context(), nil, 1<<40), queue.ErrInvalidArgument},
		{"zero time", dq.Put(t.Context(), nil, time.Time{}), queue.ErrInvalidArgument},
		{"empty id", iq.Put(t.Context(), nil, ""), queue.ErrInvalidArgument},
		{"too large", q.Put(t.Context(), make([]byte, 1<<20)), queue.ErrTooLarge},
		{"too large multi", q.PutMulti(t.Context(), [][]byte{make([]byte, 600<<10), make([]byte, 600<<10)}), queue.ErrTooLarge},
	} {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: %v; want %v", tt.name, tt.err, tt.want)
		}
	}
	if got := children(t, c, p); len(got) != 0 {
		t.Errorf("bad puts left nodes: %q", got)
	}
	if zero.Items() == nil || nilq.Items() == nil {
		t.Error("Items of a zero or nil queue is nil; want a closed channel")
	}
	if _, ok := <-nilq.Items(); ok {
		t.Error("Items of a nil queue delivered")
	}
	if err := q.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(t.Context()); !errors.Is(err, queue.ErrInvalidArgument) {
		t.Errorf("second Start = %v; want ErrInvalidArgument", err)
	}
	if err := q.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(t.Context()); !errors.Is(err, queue.ErrClosed) {
		t.Errorf("Start after Close = %v; want ErrClosed", err)
	}
	closed := newClient(t)
	closed.Close()
	qc, _ := queue.New(closed, p)
	if err := qc.Put(t.Context(), nil); !errors.Is(err, framework.ErrClosed) {
		t.Errorf("Put on a closed client = %v; want framework.ErrClosed", err)
	}
}

// TestQueue_BadItemReportedSkippedLeftInPlace: bytes that another writer
// put under the queue, which do not decode, are reported as ErrBadItem,
// left in place, and do not stop the consumer, in both modes.
func TestQueue_BadItemReportedSkippedLeftInPlace(t *testing.T) {
	t.Parallel()
	for _, lockSafe := range []bool{false, true} {
		c := newClient(t)
		p := qTestPath(t)
		opts := []queue.Option{}
		if lockSafe {
			p += "-locksafe"
			opts = append(opts, queue.WithLockPath(p+"-locks"))
		}
		if _, err := c.Create().CreatingParentContainersIfNeeded().WithMode(framework.PersistentSequential).
			ForPath(t.Context(), p+"/queue-", []byte("not Curator's format")); err != nil {
			t.Fatal(err)
		}
		prod, _ := queue.New(c, p)
		if err := prod.Put(t.Context(), []byte("good")); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var reported []error
		got := newQCollector()
		q := qStart(t, c, p, append(opts, queue.WithConsumer(got.consume), queue.WithErrorHandler(func(err error) {
			mu.Lock()
			reported = append(reported, err)
			mu.Unlock()
		}))...)
		got.wait(t, 1)
		if err := prod.Put(t.Context(), []byte("after")); err != nil {
			t.Fatal(err)
		}
		got.wait(t, 2)
		qClose(t, q.Close)
		if d := got.data(); strings.Join(d, ",") != "good,after" {
			t.Errorf("lock-safe %v: consumed %q; want good, after", lockSafe, d)
		}
		mu.Lock()
		bad := 0
		for _, err := range reported {
			if errors.Is(err, queue.ErrBadItem) {
				bad++
			}
		}
		mu.Unlock()
		if bad != 1 {
			t.Errorf("lock-safe %v: reported %v; want ErrBadItem once", lockSafe, reported)
		}
		if left := qItems(t, c, p); len(left) != 1 {
			t.Errorf("lock-safe %v: items %q; want the bad one left in place", lockSafe, left)
		}
	}
}
