package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-curator/curator/recipes/queue"
	"github.com/go-zookeeper/zk"
)

// goQueueTput returns go-curator's throughput runner against connect.
func goQueueTput(connect string) func(ctx context.Context, locked bool, warm, dur time.Duration, path string) (*Result, error) {
	return func(ctx context.Context, locked bool, warm, dur time.Duration, path string) (*Result, error) {
		clients, err := newCurators(ctx, connect, queueProducers+queueConsumers)
		if err != nil {
			return nil, err
		}
		defer closeCurators(clients)
		room := make(chan struct{}, queueInflight)
		var (
			mu         sync.Mutex
			lats       []time.Duration
			errs       atomic.Int64
			firstError atomic.Value
			start, end time.Time
			started    atomic.Bool
		)
		fail := func(err error) {
			if errs.Add(1) == 1 {
				firstError.Store(err.Error())
			}
		}
		took := func(_ context.Context, it queue.Item) error {
			now := time.Now()
			<-room
			if len(it.Data) < 8 || !started.Load() {
				return nil
			}
			put := time.UnixMicro(int64(binary.BigEndian.Uint64(it.Data)))
			if !now.Before(start) && !now.After(end) {
				mu.Lock()
				lats = append(lats, now.Sub(put))
				mu.Unlock()
			}
			return nil
		}
		var queues []*queue.Queue
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			for _, q := range queues {
				q.Close(cctx)
			}
		}()
		for i, c := range clients {
			var opts []queue.Option
			if i < queueConsumers {
				opts = append(opts, queue.WithConsumer(took))
				if locked {
					opts = append(opts, queue.WithLockPath(path+"-locks"))
				}
			}
			q, err := queue.New(c, path, opts...)
			if err != nil {
				return nil, err
			}
			if err := q.Start(ctx); err != nil {
				return nil, err
			}
			queues = append(queues, q)
		}
		start = time.Now().Add(warm)
		end = start.Add(dur)
		started.Store(true)
		var wg sync.WaitGroup
		for _, q := range queues[queueConsumers:] {
			wg.Go(func() {
				t := time.NewTimer(time.Hour)
				defer t.Stop()
				for time.Now().Before(end) && ctx.Err() == nil {
					t.Reset(50 * time.Millisecond)
					select {
					case room <- struct{}{}:
					case <-t.C:
						continue
					}
					item := make([]byte, itemBytes)
					binary.BigEndian.PutUint64(item, uint64(time.Now().UnixMicro()))
					if err := q.Put(ctx, item); err != nil {
						fail(err)
					}
				}
			})
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		r := &Result{Ops: len(lats), Seconds: dur.Seconds(), Lat: slices.Clone(lats), Errors: errs.Load()}
		if s, ok := firstError.Load().(string); ok {
			r.FirstError = s
		}
		slices.Sort(r.Lat)
		return r, ctx.Err()
	}
}

// goQueueHerd runs the herd part with go-curator.
func goQueueHerd(ctx context.Context, connect, path string, items int) (herdFigures, error) {
	h := herdFigures{impl: implGo, items: items}
	clients, err := newCurators(ctx, connect, herdConsumers+1)
	if err != nil {
		return h, err
	}
	defer closeCurators(clients)
	var taken atomic.Int64
	var queues []*queue.Queue
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for _, q := range queues {
			q.Close(cctx)
		}
	}()
	for i, c := range clients {
		var opts []queue.Option
		if i < herdConsumers {
			opts = append(opts, queue.WithConsumer(func(context.Context, queue.Item) error { taken.Add(1); return nil }))
		}
		q, err := queue.New(c, path, opts...)
		if err != nil {
			return h, err
		}
		if err := q.Start(ctx); err != nil {
			return h, err
		}
		queues = append(queues, q)
	}
	producer := queues[herdConsumers]
	time.Sleep(time.Second) // every consumer has read the empty queue and waits
	n0, err := notifications(ctx, connect)
	if err != nil {
		return h, err
	}
	for i := range items {
		before := taken.Load()
		if err := producer.Put(ctx, make([]byte, itemBytes)); err != nil {
			return h, err
		}
		deadline := time.Now().Add(30 * time.Second)
		for taken.Load() == before {
			if time.Now().After(deadline) {
				return h, fmt.Errorf("item %d not taken within 30 s", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	time.Sleep(500 * time.Millisecond) // the last item's notifications and reads settle
	n1, err := notifications(ctx, connect)
	if err != nil {
		return h, err
	}
	h.notifications = n1 - n0
	return h, nil
}

// goQueueDrain has one go-curator consumer drain the queue of items at
// path.
func goQueueDrain(ctx context.Context, connect, path string, items int, maxDrain time.Duration) (drainFigures, error) {
	d := drainFigures{impl: implGo, items: items}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, err := newCurator(ctx, connect)
	if err != nil {
		return d, err
	}
	defer c.Close()
	tenth := max(1, items/10)
	var taken atomic.Int64
	var marks [4]atomic.Int64 // tenth taken, half, items-tenth, all (ns since t0)
	var first atomic.Int64    // the first taken (ns since t0)
	var latest atomic.Int64   // the last taken so far (ns since t0)
	half, all := make(chan struct{}), make(chan struct{})
	t0 := time.Now()
	q, err := queue.New(c, path, queue.WithConsumer(func(context.Context, queue.Item) error {
		n := int(taken.Add(1))
		now := int64(time.Since(t0))
		latest.Store(now)
		switch n {
		case 1:
			first.Store(now)
		}
		switch n {
		case tenth:
			marks[0].Store(now)
		case items - tenth:
			marks[2].Store(now)
		}
		if n == items/2 {
			marks[1].Store(now)
			close(half)
		}
		if n == items {
			marks[3].Store(now)
			close(all)
		}
		return nil
	}))
	if err != nil {
		return d, err
	}
	if err := q.Start(ctx); err != nil {
		return d, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		q.Close(cctx)
	}()
	limit := time.NewTimer(maxDrain)
	defer limit.Stop()
	select {
	case <-half:
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		d.heap = int64(after.HeapAlloc) - int64(before.HeapAlloc)
		select {
		case <-all:
		case <-limit.C:
		case <-ctx.Done():
		}
	case <-limit.C:
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		d.heap, d.heapAtStop = int64(after.HeapAlloc)-int64(before.HeapAlloc), true
	case <-ctx.Done():
	}
	d.taken = int(taken.Load())
	d.span = time.Duration(latest.Load() - first.Load())
	if m0 := marks[0].Load(); m0 > 0 {
		d.first = time.Duration(m0 - first.Load())
	}
	if m2, m3 := marks[2].Load(), marks[3].Load(); m2 > 0 && m3 > 0 {
		d.last = time.Duration(m3 - m2)
	}
	return d, ctx.Err()
}

// encodeItem is Curator's ItemSerializer encoding of one item: the
// version 0x00010001, then 0x01, the length and the bytes, then 0x02.
func encodeItem(data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0x00010001)
	b = append(b, 0x01)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	b = append(b, data...)
	return append(b, 0x02)
}

// fillQueue writes items item nodes to the queue at path, in Curator's
// layout (PERSISTENT_SEQUENTIAL "queue-") and encoding, with multi
// requests of 1,000 creates, 8 at a time.
func fillQueue(ctx context.Context, connect, path string, items int) error {
	conn, err := newConn(ctx, connect)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := ensurePath(conn, path); err != nil {
		return err
	}
	data := encodeItem(make([]byte, itemBytes))
	acl := zk.WorldACL(zk.PermAll)
	const batch = 1000
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for {
				from := int(next.Add(batch)) - batch
				if from >= items || ctx.Err() != nil {
					return
				}
				var ops []any
				for range min(batch, items-from) {
					ops = append(ops, &zk.CreateRequest{Path: path + "/queue-", Data: data, Acl: acl, Flags: zk.FlagSequence})
				}
				if _, err := conn.Multi(ops...); err != nil {
					errs <- fmt.Errorf("fill %s: %w", path, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return errors.Join(<-errs, ctx.Err())
}

// clearQueue deletes what the drain left at path, in multi requests of
// 1,000 deletes, 8 at a time, and then the node, best effort.
func clearQueue(ctx context.Context, connect, path string) error {
	conn, events, err := zk.Connect(strings.Split(connect, ","), sessionTimeout,
		zk.WithLogger(quietLogger{}), zk.WithLogInfo(false), zk.WithMaxBufferSize(256<<20))
	if err != nil {
		return err
	}
	defer conn.Close()
	go func() {
		for range events {
		}
	}()
	kids, _, err := conn.Children(path)
	if err != nil {
		return fmt.Errorf("list %s: %w", path, err)
	}
	const batch = 1000
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for {
				from := int(next.Add(batch)) - batch
				if from >= len(kids) || ctx.Err() != nil {
					return
				}
				var ops []any
				for _, k := range kids[from:min(from+batch, len(kids))] {
					ops = append(ops, &zk.DeleteRequest{Path: path + "/" + k, Version: -1})
				}
				if _, err := conn.Multi(ops...); err != nil {
					errs <- fmt.Errorf("clear %s: %w", path, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := errors.Join(<-errs, ctx.Err()); err != nil {
		return err
	}
	return conn.Delete(path, -1)
}
