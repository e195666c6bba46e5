package integration

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-curator/curator/framework"
	"github.com/go-curator/curator/recipes/atomiclong"
	"github.com/go-curator/curator/recipes/atomicvalue"
	"github.com/go-curator/curator/recipes/barrier"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/recipes/doublebarrier"
	"github.com/go-curator/curator/recipes/leaderlatch"
	"github.com/go-curator/curator/recipes/leaderselector"
	"github.com/go-curator/curator/recipes/multilock"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/queue"
	"github.com/go-curator/curator/recipes/rwlock"
	"github.com/go-curator/curator/recipes/semaphoremutex"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/recipes/sharedcount"
)

// contractPrefix matches the package prefixes of go-curator's messages
// (and not "mutex: " inside "semaphoremutex: ").
var contractPrefix = regexp.MustCompile(`(^|[^a-z0-9])(framework|retry|lockcore|mutex|rwlock|semaphoremutex|multilock|semaphorev2|barrier|doublebarrier|sharedcount|atomiclong|atomicvalue|leaderlatch|leaderselector|cache|queue): `)

// badArg is one bad argument given to a recipe: the error must match the
// package's ErrInvalidArgument and the framework's specific sentinel, and
// its message must carry the package's prefix, once.
type badArg struct {
	name    string
	pkg     string // the message's one prefix
	invalid error  // the package's ErrInvalidArgument
	fw      error  // the framework's sentinel for the problem
	run     func(ctx context.Context, p string) error
}

// TestContract_BadArgumentsMatchBothSentinels runs every recipe's
// constructors and calls with bad arguments: a nil client, bad paths, bad
// numbers, nil options, negative waits, a nil ctx, nil and zero receivers.
func TestContract_BadArgumentsMatchBothSentinels(t *testing.T) {
	c := newClient(t)
	var noCtx context.Context // a nil ctx, as a careless caller passes it
	policy := fastRetry(t)
	fnil, fpath, farg := framework.ErrNilClient, framework.ErrInvalidPath, framework.ErrInvalidArgument

	mutexCases := func(pkg string, invalid error, acquire func(p string) func(ctx context.Context) error, try func(p string) func(ctx context.Context, wait time.Duration) error) []badArg {
		return []badArg{
			{pkg + " acquire nil ctx", pkg, invalid, farg, func(_ context.Context, p string) error { return acquire(p)(noCtx) }},
			{pkg + " try negative wait", pkg, invalid, farg, func(ctx context.Context, p string) error { return try(p)(ctx, -time.Second) }},
			{pkg + " try nil ctx", pkg, invalid, farg, func(_ context.Context, p string) error { return try(p)(noCtx, time.Second) }},
		}
	}
	noErr := func(_ any, err error) error { return err }
	noErr3 := func(_ any, _ bool, err error) error { return err }

	cases := []badArg{
		// mutex
		{"mutex nil client", "mutex", mutex.ErrInvalidArgument, fnil, func(_ context.Context, p string) error { return noErr(mutex.New(nil, p)) }},
		{"mutex bad path", "mutex", mutex.ErrInvalidArgument, fpath, func(_ context.Context, p string) error { return noErr(mutex.New(c, p+"/")) }},
		{"mutex nil option", "mutex", mutex.ErrInvalidArgument, farg, func(_ context.Context, p string) error { return noErr(mutex.New(c, p, nil)) }},
		{"mutex option nil revocation func", "mutex", mutex.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(mutex.New(c, p, mutex.WithRevocation(nil)))
		}},
		{"mutex nil Mutex", "mutex", mutex.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error {
			return noErr((*mutex.Mutex)(nil).Acquire(ctx))
		}},
		{"mutex zero Mutex", "mutex", mutex.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error {
			return (&mutex.Mutex{}).Release(ctx)
		}},
		{"mutex participants nil ctx", "mutex", mutex.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(must(mutex.New(c, p)).Participants(noCtx))
		}},
		{"mutex hold release nil ctx", "mutex", mutex.ErrInvalidArgument, farg, func(ctx context.Context, p string) error {
			h, err := must(mutex.New(c, p)).Acquire(ctx)
			if err != nil {
				return err
			}
			defer h.Release(ctx)
			return h.Release(noCtx)
		}},
		{"mutex revoke nil client", "mutex", mutex.ErrInvalidArgument, fnil, func(ctx context.Context, p string) error { return mutex.Revoke(ctx, nil, p) }},
		{"mutex revoke bad path", "mutex", mutex.ErrInvalidArgument, fpath, func(ctx context.Context, p string) error { return mutex.Revoke(ctx, c, p+"//x") }},
		{"mutex revoke nil ctx", "mutex", mutex.ErrInvalidArgument, farg, func(_ context.Context, p string) error { return mutex.Revoke(noCtx, c, p) }},

		// rwlock
		{"rwlock nil client", "rwlock", rwlock.ErrInvalidArgument, fnil, func(_ context.Context, p string) error { return noErr(rwlock.New(nil, p)) }},
		{"rwlock bad path", "rwlock", rwlock.ErrInvalidArgument, fpath, func(_ context.Context, p string) error { return noErr(rwlock.New(c, "rel")) }},
		{"rwlock nil option", "rwlock", rwlock.ErrInvalidArgument, farg, func(_ context.Context, p string) error { return noErr(rwlock.New(c, p, nil)) }},
		{"rwlock nil Lock", "rwlock", rwlock.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error {
			return noErr((*rwlock.Lock)(nil).ReadLock().Acquire(ctx))
		}},
		{"rwlock zero side", "rwlock", rwlock.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error {
			return noErr3((&rwlock.Mutex{}).TryAcquire(ctx, 0))
		}},
		{"rwlock participants nil ctx", "rwlock", rwlock.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(must(rwlock.New(c, p)).WriteLock().Participants(noCtx))
		}},

		// semaphoremutex
		{"semaphoremutex nil client", "semaphoremutex", semaphoremutex.ErrInvalidArgument, fnil, func(_ context.Context, p string) error {
			return noErr(semaphoremutex.New(nil, p))
		}},
		{"semaphoremutex bad path", "semaphoremutex", semaphoremutex.ErrInvalidArgument, fpath, func(_ context.Context, p string) error {
			return noErr(semaphoremutex.New(c, p+"/../x"))
		}},
		{"semaphoremutex nil option", "semaphoremutex", semaphoremutex.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(semaphoremutex.New(c, p, nil))
		}},
		{"semaphoremutex nil Mutex", "semaphoremutex", semaphoremutex.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error {
			return noErr((*semaphoremutex.Mutex)(nil).Acquire(ctx))
		}},
		{"semaphoremutex release nil ctx", "semaphoremutex", semaphoremutex.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return must(semaphoremutex.New(c, p)).Release(noCtx)
		}},
		{"semaphoremutex participants nil ctx", "semaphoremutex", semaphoremutex.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(must(semaphoremutex.New(c, p)).Participants(noCtx))
		}},

		// multilock
		{"multilock no locks", "multilock", multilock.ErrInvalidArgument, farg, func(context.Context, string) error { return noErr(multilock.New()) }},
		{"multilock nil lock", "multilock", multilock.ErrInvalidArgument, farg, func(context.Context, string) error { return noErr(multilock.New(nil)) }},
		{"multilock nil client", "multilock", multilock.ErrInvalidArgument, fnil, func(_ context.Context, p string) error {
			return noErr(multilock.NewFromPaths(nil, []string{p}))
		}},
		{"multilock no paths", "multilock", multilock.ErrInvalidArgument, farg, func(context.Context, string) error {
			return noErr(multilock.NewFromPaths(c, nil))
		}},
		{"multilock bad path", "multilock", multilock.ErrInvalidArgument, fpath, func(_ context.Context, p string) error {
			return noErr(multilock.NewFromPaths(c, []string{p + "/a", "b"}))
		}},
		{"multilock path twice", "multilock", multilock.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(multilock.NewFromPaths(c, []string{p, p}))
		}},
		{"multilock nil option", "multilock", multilock.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(multilock.NewFromPaths(c, []string{p}, nil))
		}},
		{"multilock zero MultiLock", "multilock", multilock.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error {
			return noErr((&multilock.MultiLock{}).Acquire(ctx))
		}},
		{"multilock hold release nil ctx", "multilock", multilock.ErrInvalidArgument, farg, func(context.Context, string) error {
			return (&multilock.Hold{}).Release(noCtx)
		}},

		// semaphorev2
		{"semaphorev2 nil client", "semaphorev2", semaphorev2.ErrInvalidArgument, fnil, func(_ context.Context, p string) error {
			return noErr(semaphorev2.New(nil, p, 1))
		}},
		{"semaphorev2 bad path", "semaphorev2", semaphorev2.ErrInvalidArgument, fpath, func(context.Context, string) error {
			return noErr(semaphorev2.New(c, "", 1))
		}},
		{"semaphorev2 maxLeases 0", "semaphorev2", semaphorev2.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(semaphorev2.New(c, p, 0))
		}},
		{"semaphorev2 nil option", "semaphorev2", semaphorev2.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(semaphorev2.New(c, p, 1, nil))
		}},
		{"semaphorev2 nil count", "semaphorev2", semaphorev2.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(semaphorev2.NewWithCount(c, p, nil))
		}},
		{"semaphorev2 qty 0", "semaphorev2", semaphorev2.ErrInvalidArgument, farg, func(ctx context.Context, p string) error {
			return noErr(must(semaphorev2.New(c, p, 2)).AcquireN(ctx, 0))
		}},
		{"semaphorev2 qty above max", "semaphorev2", semaphorev2.ErrInvalidArgument, farg, func(ctx context.Context, p string) error {
			return noErr(must(semaphorev2.New(c, p, 2)).AcquireN(ctx, 3))
		}},
		{"semaphorev2 try N negative wait", "semaphorev2", semaphorev2.ErrInvalidArgument, farg, func(ctx context.Context, p string) error {
			return noErr3(must(semaphorev2.New(c, p, 2)).TryAcquireN(ctx, 1, -time.Second))
		}},
		{"semaphorev2 return nil lease", "semaphorev2", semaphorev2.ErrInvalidArgument, farg, func(ctx context.Context, p string) error {
			return must(semaphorev2.New(c, p, 2)).ReturnLease(ctx, nil)
		}},
		{"semaphorev2 zero Semaphore", "semaphorev2", semaphorev2.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error {
			return noErr((&semaphorev2.Semaphore{}).Acquire(ctx))
		}},
		{"semaphorev2 zero Lease data", "semaphorev2", semaphorev2.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error {
			return noErr((&semaphorev2.Lease{}).Data(ctx))
		}},
		{"semaphorev2 participants nil ctx", "semaphorev2", semaphorev2.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(must(semaphorev2.New(c, p, 2)).Participants(noCtx))
		}},
		{"semaphorev2 lease release nil ctx", "semaphorev2", semaphorev2.ErrInvalidArgument, farg, func(context.Context, string) error {
			return (&semaphorev2.Lease{}).Release(noCtx)
		}},

		// barrier
		{"barrier nil client", "barrier", barrier.ErrInvalidArgument, fnil, func(_ context.Context, p string) error { return noErr(barrier.New(nil, p)) }},
		{"barrier bad path", "barrier", barrier.ErrInvalidArgument, fpath, func(_ context.Context, p string) error { return noErr(barrier.New(c, p+"/\x00")) }},
		{"barrier root", "barrier", barrier.ErrInvalidArgument, fpath, func(context.Context, string) error { return noErr(barrier.New(c, "/")) }},
		{"barrier nil option", "barrier", barrier.ErrInvalidArgument, farg, func(_ context.Context, p string) error { return noErr(barrier.New(c, p, nil)) }},
		{"barrier set nil ctx", "barrier", barrier.ErrInvalidArgument, farg, func(_ context.Context, p string) error { return must(barrier.New(c, p)).Set(noCtx) }},
		{"barrier wait nil ctx", "barrier", barrier.ErrInvalidArgument, farg, func(_ context.Context, p string) error { return must(barrier.New(c, p)).Wait(noCtx) }},
		{"barrier nil Barrier", "barrier", barrier.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error { return (*barrier.Barrier)(nil).Remove(ctx) }},

		// doublebarrier
		{"doublebarrier nil client", "doublebarrier", doublebarrier.ErrInvalidArgument, fnil, func(_ context.Context, p string) error {
			return noErr(doublebarrier.New(nil, p, 2))
		}},
		{"doublebarrier bad path", "doublebarrier", doublebarrier.ErrInvalidArgument, fpath, func(context.Context, string) error {
			return noErr(doublebarrier.New(c, "/", 2))
		}},
		{"doublebarrier memberQty 0", "doublebarrier", doublebarrier.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(doublebarrier.New(c, p, 0))
		}},
		{"doublebarrier nil option", "doublebarrier", doublebarrier.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(doublebarrier.New(c, p, 2, nil))
		}},
		{"doublebarrier enter nil ctx", "doublebarrier", doublebarrier.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return must(doublebarrier.New(c, p, 2)).Enter(noCtx)
		}},
		{"doublebarrier nil DoubleBarrier", "doublebarrier", doublebarrier.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error {
			return (*doublebarrier.DoubleBarrier)(nil).Leave(ctx)
		}},

		// sharedcount
		{"sharedcount nil client", "sharedcount", sharedcount.ErrInvalidArgument, fnil, func(_ context.Context, p string) error {
			return noErr(sharedcount.New(nil, p, 0))
		}},
		{"sharedcount bad path", "sharedcount", sharedcount.ErrInvalidArgument, fpath, func(context.Context, string) error {
			return noErr(sharedcount.New(c, "/", 0))
		}},
		{"sharedcount value nil client", "sharedcount", sharedcount.ErrInvalidArgument, fnil, func(_ context.Context, p string) error {
			return noErr(sharedcount.NewValue(nil, p, nil))
		}},
		{"sharedcount start nil ctx", "sharedcount", sharedcount.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			cnt := must(sharedcount.New(c, p, 0))
			defer cnt.Close()
			return cnt.Start(noCtx)
		}},
		{"sharedcount set nil ctx", "sharedcount", sharedcount.ErrInvalidArgument, farg, func(ctx context.Context, p string) error {
			cnt := must(sharedcount.New(c, p, 0))
			defer cnt.Close()
			if err := cnt.Start(ctx); err != nil {
				return err
			}
			defer c.Delete().Quietly().ForPath(context.WithoutCancel(ctx), p)
			return cnt.SetCount(noCtx, 1)
		}},
		{"sharedcount nil Count", "sharedcount", sharedcount.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error {
			return (*sharedcount.Count)(nil).SetCount(ctx, 1)
		}},

		// atomiclong
		{"atomiclong nil client", "atomiclong", atomiclong.ErrInvalidArgument, fnil, func(_ context.Context, p string) error {
			return noErr(atomiclong.New(nil, p, policy))
		}},
		{"atomiclong bad path", "atomiclong", atomiclong.ErrInvalidArgument, fpath, func(_ context.Context, p string) error {
			return noErr(atomiclong.New(c, p+"/.", policy))
		}},
		{"atomiclong nil policy", "atomiclong", atomiclong.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(atomiclong.New(c, p, nil))
		}},
		{"atomiclong nil option", "atomiclong", atomiclong.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(atomiclong.New(c, p, policy, nil))
		}},
		{"atomiclong promoted lock bad path", "atomiclong", atomiclong.ErrInvalidArgument, fpath, func(_ context.Context, p string) error {
			return noErr(atomiclong.New(c, p, policy, atomiclong.WithPromotedLock("lock", time.Second, policy)))
		}},
		{"atomiclong promoted lock negative wait", "atomiclong", atomiclong.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(atomiclong.New(c, p, policy, atomiclong.WithPromotedLock(p+"_lock", -time.Second, policy)))
		}},
		{"atomiclong get nil ctx", "atomiclong", atomiclong.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(must(atomiclong.New(c, p, policy)).Get(noCtx))
		}},
		{"atomiclong nil Long", "atomiclong", atomiclong.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error {
			return noErr((*atomiclong.Long)(nil).Increment(ctx))
		}},

		// atomicvalue
		{"atomicvalue nil client", "atomicvalue", atomicvalue.ErrInvalidArgument, fnil, func(_ context.Context, p string) error {
			return noErr(atomicvalue.New(nil, p, policy))
		}},
		{"atomicvalue integer bad path", "atomicvalue", atomicvalue.ErrInvalidArgument, fpath, func(_ context.Context, p string) error {
			return noErr(atomicvalue.NewInteger(c, p+"/.", policy))
		}},
		{"atomicvalue nil policy", "atomicvalue", atomicvalue.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(atomicvalue.New(c, p, nil))
		}},
		{"atomicvalue nil option", "atomicvalue", atomicvalue.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(atomicvalue.NewInteger(c, p, policy, nil))
		}},
		{"atomicvalue get nil ctx", "atomicvalue", atomicvalue.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(must(atomicvalue.New(c, p, policy)).Get(noCtx))
		}},
		{"atomicvalue nil Integer", "atomicvalue", atomicvalue.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error {
			return noErr((*atomicvalue.Integer)(nil).Increment(ctx))
		}},

		// queue
		{"queue nil client", "queue", queue.ErrInvalidArgument, fnil, func(_ context.Context, p string) error {
			return noErr(queue.New(nil, p))
		}},
		{"queue bad path", "queue", queue.ErrInvalidArgument, fpath, func(_ context.Context, p string) error {
			return noErr(queue.NewPriority(c, p+"/."))
		}},
		{"queue nil option", "queue", queue.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(queue.NewID(c, p, nil))
		}},
		{"queue put nil ctx", "queue", queue.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return must(queue.New(c, p)).Put(noCtx, []byte("x"))
		}},
		{"queue simple nil ctx", "queue", queue.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return must(queue.NewSimple(c, p)).Offer(noCtx, []byte("x"))
		}},

		// cache
		{"cache node nil client", "cache", cache.ErrInvalidArgument, fnil, func(_ context.Context, p string) error {
			return noErr(cache.NewNode(nil, p))
		}},
		{"cache children bad path", "cache", cache.ErrInvalidArgument, fpath, func(_ context.Context, p string) error {
			return noErr(cache.NewChildren(c, p+"//x"))
		}},
		{"cache tree nil option", "cache", cache.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(cache.NewTree(c, p, nil))
		}},
		{"cache tree negative depth", "cache", cache.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(cache.NewTree(c, p, cache.WithMaxDepth(-1)))
		}},
		{"cache start nil ctx", "cache", cache.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			n := must(cache.NewNode(c, p))
			defer n.Close()
			return n.Start(noCtx)
		}},
		{"cache zero Tree", "cache", cache.ErrInvalidArgument, farg, func(ctx context.Context, _ string) error {
			return (&cache.Tree{}).Start(ctx)
		}},

		// leader election
		{"leaderlatch nil client", "leaderlatch", leaderlatch.ErrInvalidArgument, fnil, func(_ context.Context, p string) error {
			return noErr(leaderlatch.New(nil, p))
		}},
		{"leaderlatch bad path", "leaderlatch", leaderlatch.ErrInvalidArgument, fpath, func(context.Context, string) error {
			return noErr(leaderlatch.New(c, "rel"))
		}},
		{"leaderlatch nil option", "leaderlatch", leaderlatch.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(leaderlatch.New(c, p, nil))
		}},
		{"leaderlatch option bad close mode", "leaderlatch", leaderlatch.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(leaderlatch.New(c, p, leaderlatch.WithCloseMode(leaderlatch.CloseMode(99))))
		}},
		{"leaderlatch option oversized ID", "leaderlatch", leaderlatch.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(leaderlatch.New(c, p, leaderlatch.WithID(strings.Repeat("x", leaderlatch.MaxIDSize+1))))
		}},
		{"leaderselector nil client", "leaderselector", leaderselector.ErrInvalidArgument, fnil, func(_ context.Context, p string) error {
			return noErr(leaderselector.NewElection(nil, p))
		}},
		{"leaderselector bad path", "leaderselector", leaderselector.ErrInvalidArgument, fpath, func(context.Context, string) error {
			return noErr(leaderselector.NewElection(c, "/a/"))
		}},
		{"leaderselector nil option", "leaderselector", leaderselector.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(leaderselector.NewElection(c, p, nil))
		}},
		{"leaderselector option oversized ID", "leaderselector", leaderselector.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(leaderselector.NewElection(c, p, leaderselector.WithID(strings.Repeat("x", leaderselector.MaxIDSize+1))))
		}},
		{"leaderselector nil leader function", "leaderselector", leaderselector.ErrInvalidArgument, farg, func(_ context.Context, p string) error {
			return noErr(leaderselector.New(c, p, nil))
		}},
	}
	cases = append(cases, mutexCases("mutex", mutex.ErrInvalidArgument,
		func(p string) func(ctx context.Context) error {
			return func(ctx context.Context) error { return noErr(must(mutex.New(c, p)).Acquire(ctx)) }
		},
		func(p string) func(ctx context.Context, wait time.Duration) error {
			return func(ctx context.Context, wait time.Duration) error {
				return noErr3(must(mutex.New(c, p)).TryAcquire(ctx, wait))
			}
		})...)
	for _, side := range []func(*rwlock.Lock) *rwlock.Mutex{(*rwlock.Lock).ReadLock, (*rwlock.Lock).WriteLock} {
		cases = append(cases, mutexCases("rwlock", rwlock.ErrInvalidArgument,
			func(p string) func(ctx context.Context) error {
				return func(ctx context.Context) error { return noErr(side(must(rwlock.New(c, p))).Acquire(ctx)) }
			},
			func(p string) func(ctx context.Context, wait time.Duration) error {
				return func(ctx context.Context, wait time.Duration) error {
					return noErr3(side(must(rwlock.New(c, p))).TryAcquire(ctx, wait))
				}
			})...)
	}
	cases = append(cases, mutexCases("semaphoremutex", semaphoremutex.ErrInvalidArgument,
		func(p string) func(ctx context.Context) error {
			return func(ctx context.Context) error { return noErr(must(semaphoremutex.New(c, p)).Acquire(ctx)) }
		},
		func(p string) func(ctx context.Context, wait time.Duration) error {
			return func(ctx context.Context, wait time.Duration) error {
				return noErr3(must(semaphoremutex.New(c, p)).TryAcquire(ctx, wait))
			}
		})...)
	cases = append(cases, mutexCases("multilock", multilock.ErrInvalidArgument,
		func(p string) func(ctx context.Context) error {
			return func(ctx context.Context) error {
				return noErr(must(multilock.NewFromPaths(c, []string{p + "/a", p + "/b"})).Acquire(ctx))
			}
		},
		func(p string) func(ctx context.Context, wait time.Duration) error {
			return func(ctx context.Context, wait time.Duration) error {
				return noErr3(must(multilock.NewFromPaths(c, []string{p + "/a", p + "/b"})).TryAcquire(ctx, wait))
			}
		})...)
	cases = append(cases, mutexCases("semaphorev2", semaphorev2.ErrInvalidArgument,
		func(p string) func(ctx context.Context) error {
			return func(ctx context.Context) error { return noErr(must(semaphorev2.New(c, p, 2)).Acquire(ctx)) }
		},
		func(p string) func(ctx context.Context, wait time.Duration) error {
			return func(ctx context.Context, wait time.Duration) error {
				return noErr3(must(semaphorev2.New(c, p, 2)).TryAcquire(ctx, wait))
			}
		})...)

	base := testPath(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := fmt.Sprintf("%s/case%03d", base, i)
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			err, panicked, hung := guarded(ctx, func() error { return tc.run(ctx, p) })
			switch {
			case panicked != "":
				t.Fatalf("panicked: %s", panicked)
			case hung:
				t.Fatal("did not return within its ctx deadline")
			case err == nil:
				t.Fatal("no error")
			}
			if !errors.Is(err, tc.invalid) {
				t.Errorf("%q does not match the package's %v", err, tc.invalid)
			}
			if !errors.Is(err, tc.fw) {
				t.Errorf("%q does not match the framework's %v", err, tc.fw)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.pkg+": ") {
				t.Errorf("%q does not start with %q", msg, tc.pkg+": ")
			}
			if n := len(contractPrefix.FindAllString(msg, -1)); n != 1 {
				t.Errorf("%q carries %d package prefixes, want 1", msg, n)
			}
		})
	}
	eventually(t, 10*time.Second, func() bool {
		stat, err := c.CheckExists().ForPath(t.Context(), base)
		return err == nil && stat == nil
	}, "the bad arguments leave nothing under "+base)
}
