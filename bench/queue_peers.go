package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

//go:embed java/QueueBench.java
var queueBenchSource []byte

//go:embed kazoo/kazoo_queue_bench.py
var kazooQueueSource []byte

// queueAnswer is one answer of QueueBench or kazoo_queue_bench.py.
type queueAnswer struct {
	Fatal      string  `json:"fatal"`
	Ops        int     `json:"ops"`
	LatUS      []int64 `json:"lat_us"`
	Errors     int64   `json:"errors"`
	FirstError string  `json:"first_error"`
	FirstNs    int64   `json:"first_ns"`
	LastNs     int64   `json:"last_ns"`
	SpanNs     int64   `json:"span_ns"`
	HeapBytes  int64   `json:"heap_bytes"`
	HeapAtStop bool    `json:"heap_at_stop"`
}

// startKazooScript writes source, as script, to a temporary directory and
// runs it with Debian's python3 against connect.
func startKazooScript(ctx context.Context, script string, source []byte, connect string) (*peer, error) {
	if _, err := os.Stat(pythonPath); err != nil {
		return nil, fmt.Errorf("%w: Kazoo needs %s: %v", errPeerMissing, pythonPath, err)
	}
	if out, err := exec.CommandContext(ctx, pythonPath, "-c", "import kazoo").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: no kazoo for %s (apt-get install -y python3-kazoo): %v %s", errPeerMissing, pythonPath, err, out)
	}
	dir, err := os.MkdirTemp("", "go-curator-bench-kazoo-")
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, script)
	if err := os.WriteFile(file, source, 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return startPeer(ctx, implKazoo, exec.Command(pythonPath, "-u", file, connect), dir)
}

// queueAsk sends one command line and reads its answer, within timeout.
func (p *peer) queueAsk(ctx context.Context, timeout time.Duration, format string, args ...any) (*queueAnswer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := fmt.Fprintf(p.in, format+"\n", args...); err != nil {
		return nil, fmt.Errorf("%s: %w%s", p.name, err, p.stderr.tail())
	}
	type lineErr struct {
		line []byte
		err  error
	}
	ch := make(chan lineErr, 1)
	go func() {
		line, err := p.out.ReadBytes('\n')
		ch <- lineErr{line, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case le := <-ch:
		if le.err != nil {
			return nil, fmt.Errorf("%s exited: %w%s", p.name, le.err, p.stderr.tail())
		}
		var a queueAnswer
		if err := json.Unmarshal(le.line, &a); err != nil {
			return nil, fmt.Errorf("%s: bad answer %.200q: %w", p.name, le.line, err)
		}
		if a.Fatal != "" {
			return nil, fmt.Errorf("%s: %s%s", p.name, a.Fatal, p.stderr.tail())
		}
		return &a, nil
	case <-t.C:
		p.cmd.Process.Kill()
		return nil, fmt.Errorf("%s: no answer within %v%s", p.name, timeout, p.stderr.tail())
	case <-ctx.Done():
		p.cmd.Process.Kill()
		return nil, fmt.Errorf("%s: %w", p.name, ctx.Err())
	}
}

// queueTput runs the throughput part in the peer.
func (p *peer) queueTput(ctx context.Context, locked bool, warm, dur time.Duration, path string) (*Result, error) {
	mode := "plain"
	if locked {
		mode = "locked"
	}
	a, err := p.queueAsk(ctx, warm+dur+2*time.Minute, "tput %s %d %d %d %d %s %d",
		mode, queueProducers, queueConsumers, warm.Milliseconds(), dur.Milliseconds(), path, queueInflight)
	if err != nil {
		return nil, err
	}
	r := &Result{Ops: a.Ops, Seconds: dur.Seconds(), Errors: a.Errors, FirstError: a.FirstError}
	r.Lat = make([]time.Duration, len(a.LatUS))
	for i, us := range a.LatUS {
		r.Lat[i] = time.Duration(us) * time.Microsecond
	}
	slices.Sort(r.Lat)
	return r, nil
}

// queueHerd runs the herd part with Curator, counting the server's watch
// notifications around the puts.
func (p *peer) queueHerd(ctx context.Context, connect, path string, items int) (herdFigures, error) {
	h := herdFigures{impl: implCurator, items: items}
	if _, err := p.queueAsk(ctx, 2*time.Minute, "herd.start %s %d", path, herdConsumers); err != nil {
		return h, err
	}
	defer p.queueAsk(ctx, time.Minute, "herd.stop")
	n0, err := notifications(ctx, connect)
	if err != nil {
		return h, err
	}
	if _, err := p.queueAsk(ctx, 5*time.Minute, "herd.put %d", items); err != nil {
		return h, err
	}
	n1, err := notifications(ctx, connect)
	if err != nil {
		return h, err
	}
	h.notifications = n1 - n0
	return h, nil
}

// queueDrain has the peer drain the queue of items at path.
func (p *peer) queueDrain(ctx context.Context, path string, items int, maxDrain time.Duration) (drainFigures, error) {
	a, err := p.queueAsk(ctx, maxDrain+5*time.Minute, "drain %s %d %d", path, items, maxDrain.Milliseconds())
	if err != nil {
		return drainFigures{}, err
	}
	return drainFigures{impl: implCurator, items: items, taken: a.Ops,
		first: time.Duration(a.FirstNs), last: time.Duration(a.LastNs), span: time.Duration(a.SpanNs), heap: a.HeapBytes, heapAtStop: a.HeapAtStop}, nil
}
