package main

import (
	"context"
	"fmt"
	"time"
)

// The kinds of work. Each peer program knows the same names.
const (
	kindUncontended = "mutex-uncontended"
	kindContended   = "mutex-contended"
	kindSemaphore   = "semaphore"
	kindAtomicLong  = "atomiclong"
	kindSharedCount = "sharedcount"
)

// maxLeases is the semaphore case's lease count.
const maxLeases = 2

// The implementations, as the table names them.
const (
	implCurator = "Curator 5.4 (Java)"
	implGo      = "go-curator"
	implZkLock  = "go-zookeeper zk.Lock"
	implRaw     = "raw go-zookeeper"
	implRawTrip = "raw round trip (exists)"
	implKazoo   = "Kazoo 2.8 (Python)"
	// implEtcd is the reference row: another server, not a target.
	implEtcd      = "etcd concurrency.Mutex [etcd server]"
	baselineImpl  = implCurator
	floorImplName = implRaw
)

// spec is one run of one implementation on one case.
type spec struct {
	kind    string
	clients int
	w       window
	path    string // a fresh path for this run
	connect string
	// onStart, if set, learns the measured window when the clock starts.
	onStart func(t0, t1 time.Time)
}

// runner measures one implementation on one spec.
type runner func(ctx context.Context, s spec) (*Result, error)

// benchCase is one row group of the table.
type benchCase struct {
	name    string
	kind    string
	clients int
	// limit is how many may hold at once; a holder beyond it is an overlap.
	limit int64
}

// allCases lists the cases in the order they run and print.
func allCases() []benchCase {
	return []benchCase{
		{name: "mutex uncontended", kind: kindUncontended, clients: 1, limit: 1},
		{name: "mutex contended ×1", kind: kindContended, clients: 1, limit: 1},
		{name: "mutex contended ×4", kind: kindContended, clients: 4, limit: 1},
		{name: "mutex contended ×16", kind: kindContended, clients: 16, limit: 1},
		{name: "semaphore 2 leases ×16", kind: kindSemaphore, clients: 16, limit: maxLeases},
		{name: "atomiclong increment ×4", kind: kindAtomicLong, clients: 4},
		{name: "atomiclong increment ×16", kind: kindAtomicLong, clients: 16},
		{name: "sharedcount TrySetCount ×16", kind: kindSharedCount, clients: 16},
	}
}

// impl is one implementation and the kinds of work it can do.
type impl struct {
	name string
	run  map[string]runner
	// missing explains kinds this implementation cannot run yet, by kind.
	missing map[string]string
	// pid is the process whose CPU the implementation's clients use.
	pid int
	// etcd marks the reference peer, whose server is etcd, not ZooKeeper.
	etcd bool
}

// etcdKinds are the kinds the etcd reference peer runs.
var etcdKinds = []string{kindUncontended, kindContended}

// goRunners holds go-curator's runners by kind. Files for recipes that
// have landed add theirs in init, so a recipe that has not landed leaves
// its row marked as missing rather than breaking the build.
var goRunners = map[string]runner{}

// goMissing says why go-curator has no runner for a kind.
var goMissing = map[string]string{
	kindSemaphore:  "recipes/semaphorev2 has not landed",
	kindAtomicLong: "recipes/atomiclong has not landed",
}

// implOrder is the order of rows within a case.
var implOrder = []string{implCurator, implGo, implZkLock, implRaw, implRawTrip, implKazoo, implEtcd}

// describe names a run for progress lines and errors.
func (s spec) describe(impl string) string {
	return fmt.Sprintf("%s ×%d, %s", s.kind, s.clients, impl)
}

// runTimeout bounds one run: the window plus time to connect and close.
func runTimeout(w window, clients int) time.Duration {
	return w.warm + w.dur + time.Minute + time.Duration(clients)*2*time.Second
}
