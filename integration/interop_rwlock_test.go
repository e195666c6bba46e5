package integration

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/integration/interop"
	"github.com/go-curator/curator/internal/lockcore"
	"github.com/go-curator/curator/recipes/rwlock"
)

// asyncHold acquires on its own goroutine, so that the test goes on while
// it waits, and holds until told to release.
type asyncHold struct {
	acquired chan struct{}
	release  chan struct{}
	done     chan error
}

func holdAsync(ctx context.Context, m *rwlock.Mutex) *asyncHold {
	h := &asyncHold{acquired: make(chan struct{}), release: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		held, err := m.Acquire(ctx)
		if err != nil {
			h.done <- err
			return
		}
		close(h.acquired)
		<-h.release
		h.done <- held.Release(context.WithoutCancel(ctx))
	}()
	return h
}

// stillWaiting fails t if the hold was granted (or ended) within settle.
func (h *asyncHold) stillWaiting(t testing.TB, who string) {
	t.Helper()
	select {
	case <-h.acquired:
		t.Fatalf("%s got the lock while it should wait", who)
	case err := <-h.done:
		t.Fatalf("%s ended while it should wait: %v", who, err)
	case <-time.After(settle):
	}
}

// finish waits for the grant, releases, and checks the release.
func (h *asyncHold) finish(t testing.TB, who string) {
	t.Helper()
	awaitHold(t, who, h.acquired, h.done)
	close(h.release)
	if err := <-h.done; err != nil {
		t.Fatalf("%s release: %v", who, err)
	}
}

func newRW(t testing.TB, c *framework.Client, path string) *rwlock.Lock {
	t.Helper()
	l, err := rwlock.New(c, path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// javaTry runs a Curator acquire with a wait in milliseconds.
func javaTry(t testing.TB, j *interop.Helper, cmd, path, waitMs string) bool {
	t.Helper()
	ok, err := j.Bool(javaCtx(t, 30*time.Second), cmd, path, waitMs)
	if err != nil {
		t.Fatalf("Curator %s %s: %v", cmd, path, err)
	}
	return ok
}

func javaDo(t testing.TB, j *interop.Helper, words ...string) {
	t.Helper()
	if _, err := j.Call(javaCtx(t, 10*time.Second), words...); err != nil {
		t.Fatalf("Curator %v: %v", words, err)
	}
}

// javaAsync runs a blocking Curator acquire on a goroutine; its channel
// yields nil once the lock is held.
func javaAsync(ctx context.Context, j *interop.Helper, cmd, path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		ok, err := j.Bool(ctx, cmd, path, "15000")
		if err == nil && !ok {
			err = errors.New("Curator " + cmd + " timed out")
		}
		done <- err
	}()
	return done
}

// settleMs is settle in milliseconds, for Curator's waits.
const settleMs = "300"

// TestInterop_RWLockJavaWriterExcludesGo: while Curator holds the write
// lock, neither a Go reader nor a Go writer gets in, and a queued Go reader
// gets in once Curator releases.
func TestInterop_RWLockJavaWriterExcludesGo(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j := startJava(t)
	path := base + "/rw"
	ctx := t.Context()
	l := newRW(t, c, path)

	if !javaTry(t, j, "write.acquire", path, "5000") {
		t.Fatal("Curator write.acquire on a free lock timed out")
	}
	if _, ok, err := l.ReadLock().TryAcquire(ctx, settle); err != nil || ok {
		t.Fatalf("Go read TryAcquire under Curator's writer = %v, %v; want false", ok, err)
	}
	if _, ok, err := l.WriteLock().TryAcquire(ctx, settle); err != nil || ok {
		t.Fatalf("Go write TryAcquire under Curator's writer = %v, %v; want false", ok, err)
	}
	if kids := children(t, c, path); len(kids) != 1 {
		t.Fatalf("after Go's timed-out tries, %s holds %q; want Curator's node only", path, kids)
	}
	reader := holdAsync(ctx, newRW(t, newClient(t), path).ReadLock())
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == 2 }, "the Go reader queued")
	reader.stillWaiting(t, "Go reader")
	javaDo(t, j, "write.release", path)
	reader.finish(t, "Go reader")
}

// TestInterop_RWLockGoWriterExcludesJava: while Go holds the write lock,
// neither a Curator reader nor a Curator writer gets in; afterwards a
// Curator reader does.
func TestInterop_RWLockGoWriterExcludesJava(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j := startJava(t)
	path := base + "/rw"
	ctx := t.Context()
	w, err := newRW(t, c, path).WriteLock().Acquire(ctx)
	if err != nil {
		t.Fatalf("Go write Acquire: %v", err)
	}
	if javaTry(t, j, "read.acquire", path, settleMs) {
		t.Fatal("Curator read.acquire succeeded under Go's writer")
	}
	if javaTry(t, j, "write.acquire", path, settleMs) {
		t.Fatal("Curator write.acquire succeeded under Go's writer")
	}
	if kids := children(t, c, path); len(kids) != 1 {
		t.Fatalf("after Curator's timed-out tries, %s holds %q; want Go's node only", path, kids)
	}
	if err := w.Release(ctx); err != nil {
		t.Fatalf("Go write Release: %v", err)
	}
	if !javaTry(t, j, "read.acquire", path, "5000") {
		t.Fatal("Curator read.acquire timed out after Go released")
	}
	javaDo(t, j, "read.release", path)
}

// TestInterop_RWLockReadersShare: Go and Curator readers hold the read lock
// together, and together they keep a Curator writer out.
func TestInterop_RWLockReadersShare(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	jr, jw := startJava(t), startJava(t)
	path := base + "/rw"
	ctx := t.Context()
	r1, err := newRW(t, c, path).ReadLock().Acquire(ctx)
	if err != nil {
		t.Fatalf("Go reader 1: %v", err)
	}
	if !javaTry(t, jr, "read.acquire", path, "5000") {
		t.Fatal("Curator reader shut out by a Go reader")
	}
	r2, ok, err := newRW(t, newClient(t), path).ReadLock().TryAcquire(ctx, 5*time.Second)
	if err != nil || !ok {
		t.Fatalf("Go reader 2 beside a Go and a Curator reader = %v, %v; want true", ok, err)
	}
	if javaTry(t, jw, "write.acquire", path, settleMs) {
		t.Fatal("Curator writer got in beside three readers")
	}
	for _, r := range []*rwlock.Hold{r1, r2} {
		if err := r.Release(ctx); err != nil {
			t.Fatalf("Go reader Release: %v", err)
		}
	}
	javaDo(t, jr, "read.release", path)
	if !javaTry(t, jw, "write.acquire", path, "5000") {
		t.Fatal("Curator writer timed out after every reader left")
	}
	javaDo(t, jw, "write.release", path)
}

// TestInterop_RWLockQueuedJavaWriterBlocksLaterReaders: a Curator writer
// queued behind a Go reader keeps out the Go and Curator readers that come
// after it (the queue is fair across languages), and gets the lock when the
// Go reader leaves.
func TestInterop_RWLockQueuedJavaWriterBlocksLaterReaders(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	jw, jr := startJava(t), startJava(t)
	path := base + "/rw"
	ctx := t.Context()
	r1, err := newRW(t, c, path).ReadLock().Acquire(ctx)
	if err != nil {
		t.Fatalf("Go reader 1: %v", err)
	}
	writer := javaAsync(ctx, jw, "write.acquire", path)
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == 2 }, "the Curator writer queued")
	if _, ok, err := newRW(t, newClient(t), path).ReadLock().TryAcquire(ctx, settle); err != nil || ok {
		t.Fatalf("Go reader behind a queued Curator writer = %v, %v; want false", ok, err)
	}
	if javaTry(t, jr, "read.acquire", path, settleMs) {
		t.Fatal("Curator reader got in ahead of a queued Curator writer")
	}
	if err := r1.Release(ctx); err != nil {
		t.Fatalf("Go reader 1 Release: %v", err)
	}
	if err := <-writer; err != nil {
		t.Fatalf("Curator writer: %v", err)
	}
	javaDo(t, jw, "write.release", path)
}

// TestInterop_RWLockGoDowngradeHoldsBackJavaWriter: Go downgrades (write,
// then read, then releases write) while a Curator writer is queued. Go's
// read node takes the write node's sequence (Curator 5.5, CURATOR-621), so
// Curator 5.4's writer also stays out until Go releases the read lock.
func TestInterop_RWLockGoDowngradeHoldsBackJavaWriter(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j := startJava(t)
	path := base + "/rw"
	ctx := t.Context()
	l := newRW(t, c, path)

	w, err := l.WriteLock().Acquire(ctx)
	if err != nil {
		t.Fatalf("Go write Acquire: %v", err)
	}
	writeNode := w.Node()
	writer := javaAsync(ctx, j, "write.acquire", path)
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == 2 }, "the Curator writer queued")
	r, err := l.ReadLock().Acquire(ctx)
	if err != nil {
		t.Fatalf("Go read Acquire while holding write: %v", err)
	}
	_, readName := framework.SplitPath(r.Node())
	_, writeName := framework.SplitPath(writeNode)
	wantSeq, _ := lockcore.Sequence(writeName, "__WRIT__")
	if seq, ok := lockcore.Sequence(readName, "__READ__"); !ok || seq != wantSeq || !strings.Contains(readName, "__READ__") {
		t.Errorf("downgrade read node %q, want __READ__ with the write node's sequence (%q)", readName, writeName)
	}
	if err := w.Release(ctx); err != nil {
		t.Fatalf("Go write Release: %v", err)
	}
	select {
	case err := <-writer:
		t.Fatalf("Curator writer returned (%v) while Go still held the downgraded read lock", err)
	case <-time.After(settle):
	}
	if err := r.Release(ctx); err != nil {
		t.Fatalf("Go read Release: %v", err)
	}
	if err := <-writer; err != nil {
		t.Fatalf("Curator writer after Go's read release: %v", err)
	}
	javaDo(t, j, "write.release", path)
}

// TestInterop_RWLockJavaDowngrade: Curator downgrades while a Go writer is
// queued. Curator 5.5 and later keep the Go writer out until the read lock
// is released. Curator 5.4 (Debian's) appends its read node at the end of
// the queue, so the queued Go writer gets the lock while Curator still
// holds the read lock: CURATOR-621, which no Go change can prevent.
func TestInterop_RWLockJavaDowngrade(t *testing.T) {
	c := newClient(t)
	base := testPath(t)
	t.Cleanup(func() { deleteTree(t, c, base) })
	j := startJava(t)
	path := base + "/rw"
	ctx := t.Context()
	version, err := j.CuratorVersion(javaCtx(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	fixed := interop.VersionAtLeast(version, 5, 5)
	t.Logf("Curator %s: downgrade fixed (CURATOR-621): %v", version, fixed)

	if !javaTry(t, j, "write.acquire", path, "5000") {
		t.Fatal("Curator write.acquire on a free lock timed out")
	}
	writer := holdAsync(ctx, newRW(t, c, path).WriteLock())
	eventually(t, 10*time.Second, func() bool { return len(children(t, c, path)) == 2 }, "the Go writer queued")
	if !javaTry(t, j, "read.acquire", path, "5000") {
		t.Fatal("Curator could not take the read lock while holding the write lock")
	}
	javaDo(t, j, "write.release", path)
	if fixed {
		writer.stillWaiting(t, "Go writer")
		javaDo(t, j, "read.release", path)
		writer.finish(t, "Go writer")
		return
	}
	awaitHold(t, "Go writer (Curator 5.4 lets it overtake the downgraded reader)", writer.acquired, writer.done)
	kids := children(t, c, path)
	readers := 0
	for _, k := range kids {
		if strings.Contains(k, "__READ__") {
			readers++
		}
	}
	if readers != 1 {
		t.Errorf("with the Go writer holding, %s has %q; want Curator's read node still there", path, kids)
	}
	close(writer.release)
	if err := <-writer.done; err != nil {
		t.Fatalf("Go writer release: %v", err)
	}
	javaDo(t, j, "read.release", path)
}
