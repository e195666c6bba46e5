package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of utime and stime in
// /proc/<pid>/stat; it is 100 on every common kernel.
const clockTicks = 100

// probe samples, at the start and the end of a measured window, the
// server's request count (mntr's zk_packets_received) and the client
// process's CPU time, so that a result can say how many requests and how
// much client CPU one operation costs.
type probe struct {
	connect string
	pid     int // the client process: this one, or a peer's

	wg             sync.WaitGroup
	mu             sync.Mutex
	reqs0, reqs1   serverCounts
	cpu0, cpu1     time.Duration
	ok             bool
	reqErr, cpuErr error
	window         time.Duration
}

// start is a spec's onStart: it samples at t0 and t1 on its own goroutine.
func (p *probe) start(t0, t1 time.Time) {
	p.wg.Go(func() {
		time.Sleep(time.Until(t0))
		r0, rerr := p.packets()
		c0, cerr := cpuTime(p.pid)
		time.Sleep(time.Until(t1))
		r1, rerr1 := p.packets()
		c1, cerr1 := cpuTime(p.pid)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.reqs0, p.reqs1, p.cpu0, p.cpu1 = r0, r1, c0, c1
		p.reqErr = firstErr(rerr, rerr1)
		p.cpuErr = firstErr(cerr, cerr1)
		p.window = t1.Sub(t0)
		p.ok = true
	})
}

// packets reads the server's counters, or none when the probe has no
// ZooKeeper to ask (the etcd rows).
func (p *probe) packets() (serverCounts, error) {
	if p.connect == "" {
		return serverCounts{}, nil
	}
	return packets(p.connect)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// annotate waits for the samples and adds the costs per operation to r.
func (p *probe) annotate(r *Result) {
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ok || r.Ops == 0 {
		return
	}
	if p.reqErr != nil || p.cpuErr != nil {
		return
	}
	r.probeOps = r.Ops
	if r.Attempts > 0 {
		r.probeOps = int(r.Attempts) // compare-and-set: per call, won or lost
	}
	r.probeReqs = p.reqs1.packets - p.reqs0.packets
	r.probeServerMS = p.reqs1.latencyMS - p.reqs0.latencyMS
	r.probeCPU = p.cpu1 - p.cpu0
	r.probeWindow = p.window
}

// serverCounts are cumulative counters of the server.
type serverCounts struct {
	packets int64 // requests received
	// latencyMS is the summed time requests spent in the server, from
	// receipt to response, in milliseconds (the sums of mntr's
	// updatelatency and readlatency). Each request's time is measured
	// with a millisecond clock, so it is only meaningful summed over many.
	latencyMS int64
}

func packets(connect string) (serverCounts, error) {
	m, err := mntr(context.Background(), connect)
	if err != nil {
		return serverCounts{}, err
	}
	pk, err1 := strconv.ParseInt(m["zk_packets_received"], 10, 64)
	upd, err2 := strconv.ParseInt(m["zk_sum_updatelatency"], 10, 64)
	rd, err3 := strconv.ParseInt(m["zk_sum_readlatency"], 10, 64)
	return serverCounts{packets: pk, latencyMS: upd + rd}, firstErr(err1, err2, err3)
}

// cpuTime returns the user and system CPU time of process pid, from
// /proc/<pid>/stat (Linux only).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	// After the name: state is field 3, utime 14, stime 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: short", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := firstErr(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}
