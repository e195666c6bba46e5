package queue

import (
	"context"
	"errors"
	"testing"

	"github.com/go-curator/curator/framework"
)

func unstarted(t *testing.T) *framework.Client {
	t.Helper()
	c, err := framework.NewBuilder().ConnectString("127.0.0.1:1").Build()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestZeroAndNil_NoPanic(t *testing.T) {
	ctx := context.Background()
	var q Queue
	var iq *IDQueue
	var pq PriorityQueue
	var dq *DelayQueue
	var sq SimpleQueue
	for name, err := range map[string]error{
		"Queue.Start":   q.Start(ctx),
		"Queue.Put":     q.Put(ctx, nil),
		"Queue.Close":   q.Close(ctx),
		"IDQueue.Put":   iq.Put(ctx, nil, "a"),
		"IDQueue.Close": iq.Close(ctx),
		"Priority.Put":  pq.Put(ctx, nil, 1),
		"Delay.Start":   dq.Start(ctx),
		"Simple.Offer":  sq.Offer(ctx, nil),
	} {
		if !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, framework.ErrInvalidArgument) {
			t.Errorf("%s = %v; want ErrInvalidArgument", name, err)
		}
	}
	if _, err := iq.Remove(ctx, "a"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Remove = %v", err)
	}
	for _, ch := range []<-chan Delivery{q.Items(), iq.Items(), pq.Items(), dq.Items()} {
		if _, ok := <-ch; ok {
			t.Error("Items of a zero queue delivered")
		}
	}
	var d Delivery
	d.Done(nil) // no panic
	if d.Context() == nil {
		t.Error("zero Delivery's Context is nil")
	}
}

func TestUnusableClient(t *testing.T) {
	c := unstarted(t)
	q, err := New(c, "/q")
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Put(context.Background(), nil); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Put on an unstarted client = %v; want framework.ErrNotStarted", err)
	}
	if err := q.Start(context.Background()); !errors.Is(err, framework.ErrNotStarted) {
		t.Errorf("Start on an unstarted client = %v", err)
	}
}

func TestItemsBeforeStartThenClose(t *testing.T) {
	q, err := New(unstarted(t), "/q", WithConsumer(func(context.Context, Item) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := <-q.Items(); ok {
		t.Fatal("Items of a func-consumer queue delivered")
	}
	_ = q.Items() // again: no double close
	if err := q.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	q2, _ := New(unstarted(t), "/q")
	ch := q2.Items()
	if err := q2.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-ch; ok {
		t.Fatal("Items open after Close")
	}
	if err := q2.Put(context.Background(), nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close = %v", err)
	}
}

func TestErrorModeString(t *testing.T) {
	if ErrorModeRequeue.String() != "REQUEUE" || ErrorModeDelete.String() != "DELETE" {
		t.Fatal(ErrorModeRequeue, ErrorModeDelete)
	}
}
