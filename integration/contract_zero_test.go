package integration

import (
	"context"
	"fmt"
	"reflect"
	"runtime/debug"
	"testing"
	"time"

	"github.com/go-curator/curator/recipes/atomiclong"
	"github.com/go-curator/curator/recipes/barrier"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/recipes/doublebarrier"
	"github.com/go-curator/curator/recipes/leaderlatch"
	"github.com/go-curator/curator/recipes/leaderselector"
	"github.com/go-curator/curator/recipes/multilock"
	"github.com/go-curator/curator/recipes/mutex"
	"github.com/go-curator/curator/recipes/rwlock"
	"github.com/go-curator/curator/recipes/semaphoremutex"
	"github.com/go-curator/curator/recipes/semaphorev2"
	"github.com/go-curator/curator/recipes/sharedcount"
)

// zeroValues lists, for every exported type of the recipes with methods, a
// nil pointer and a pointer to the zero value.
func zeroValues() map[string]any {
	vals := map[string]any{}
	add := func(name string, nilPtr, zero any) {
		vals["nil "+name] = nilPtr
		vals["zero "+name] = zero
	}
	add("mutex.Mutex", (*mutex.Mutex)(nil), &mutex.Mutex{})
	add("mutex.Hold", (*mutex.Hold)(nil), &mutex.Hold{})
	add("rwlock.Lock", (*rwlock.Lock)(nil), &rwlock.Lock{})
	add("rwlock.Mutex", (*rwlock.Mutex)(nil), &rwlock.Mutex{})
	add("rwlock.Hold", (*rwlock.Hold)(nil), &rwlock.Hold{})
	add("semaphoremutex.Mutex", (*semaphoremutex.Mutex)(nil), &semaphoremutex.Mutex{})
	add("semaphoremutex.Hold", (*semaphoremutex.Hold)(nil), &semaphoremutex.Hold{})
	add("multilock.MultiLock", (*multilock.MultiLock)(nil), &multilock.MultiLock{})
	add("multilock.Hold", (*multilock.Hold)(nil), &multilock.Hold{})
	add("semaphorev2.Semaphore", (*semaphorev2.Semaphore)(nil), &semaphorev2.Semaphore{})
	add("semaphorev2.Lease", (*semaphorev2.Lease)(nil), &semaphorev2.Lease{})
	add("barrier.Barrier", (*barrier.Barrier)(nil), &barrier.Barrier{})
	add("doublebarrier.DoubleBarrier", (*doublebarrier.DoubleBarrier)(nil), &doublebarrier.DoubleBarrier{})
	add("sharedcount.Count", (*sharedcount.Count)(nil), &sharedcount.Count{})
	add("sharedcount.Value", (*sharedcount.Value)(nil), &sharedcount.Value{})
	add("atomiclong.Long", (*atomiclong.Long)(nil), &atomiclong.Long{})
	add("cache.Node", (*cache.Node)(nil), &cache.Node{})
	add("cache.Children", (*cache.Children)(nil), &cache.Children{})
	add("cache.Tree", (*cache.Tree)(nil), &cache.Tree{})
	add("leaderlatch.Latch", (*leaderlatch.Latch)(nil), &leaderlatch.Latch{})
	add("leaderlatch.Leadership", (*leaderlatch.Leadership)(nil), &leaderlatch.Leadership{})
	add("leaderselector.Selector", (*leaderselector.Selector)(nil), &leaderselector.Selector{})
	add("leaderselector.Election", (*leaderselector.Election)(nil), &leaderselector.Election{})
	add("leaderselector.Leadership", (*leaderselector.Leadership)(nil), &leaderselector.Leadership{})
	return vals
}

var ctxType = reflect.TypeFor[context.Context]()

// zeroArgs returns arguments for a call of m: a live ctx, a short wait, a
// valid-looking path, small numbers, and zero values for the rest.
func zeroArgs(ctx context.Context, m reflect.Type) []reflect.Value {
	args := make([]reflect.Value, m.NumIn())
	for i := range args {
		in := m.In(i)
		switch {
		case in == ctxType:
			args[i] = reflect.ValueOf(ctx)
		case in == reflect.TypeFor[time.Duration]():
			args[i] = reflect.ValueOf(10 * time.Millisecond)
		case in.Kind() == reflect.String:
			args[i] = reflect.ValueOf("/zero").Convert(in)
		case in.Kind() >= reflect.Int && in.Kind() <= reflect.Int64:
			args[i] = reflect.ValueOf(1).Convert(in)
		default:
			args[i] = reflect.Zero(in)
		}
	}
	return args
}

// TestContract_ZeroValuesAndNilReceiversNeverPanic calls every exported
// method of every recipe type on a nil pointer and on a zero value: none
// may panic or block, and every Lost channel must be closed.
func TestContract_ZeroValuesAndNilReceiversNeverPanic(t *testing.T) {
	methods := 0
	for name, v := range zeroValues() {
		rv := reflect.ValueOf(v)
		for i := 0; i < rv.NumMethod(); i++ {
			m := rv.Type().Method(i)
			methods++
			t.Run(name+"."+m.Name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				defer cancel()
				done := make(chan string, 1)
				var out []reflect.Value
				go func() {
					defer func() {
						if r := recover(); r != nil {
							done <- fmt.Sprintf("%v\n%s", r, debug.Stack())
						}
					}()
					out = rv.Method(i).Call(zeroArgs(ctx, rv.Method(i).Type()))
					done <- ""
				}()
				select {
				case p := <-done:
					if p != "" {
						t.Fatalf("panicked: %s", p)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("did not return")
				}
				if m.Name == "Lost" {
					lost := out[0].Interface().(<-chan struct{})
					select {
					case <-lost:
					default:
						t.Error("Lost() of a hold that holds nothing is not closed")
					}
				}
			})
		}
	}
	if methods < 80 {
		t.Fatalf("only %d methods called; the list of types is missing some", methods)
	}
}
