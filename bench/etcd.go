package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"
)

// etcdSessionTTL is every etcd session's lease TTL, in seconds: the
// ZooKeeper clients' 15 s session timeout.
const etcdSessionTTL = int(sessionTimeout / time.Second)

// newEtcdClient opens one etcd client (its own gRPC connection) to the
// cluster's endpoints.
func newEtcdClient(ctx context.Context, endpoints []string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: sessionTimeout,
		Context:     context.WithoutCancel(ctx),
		Logger:      zap.NewNop(),
	})
}

// etcdSession is one client and one concurrency.Session (a lease kept
// alive): what a ZooKeeper session is to the other implementations.
type etcdSession struct {
	cli  *clientv3.Client
	sess *concurrency.Session
}

func newEtcdSessions(ctx context.Context, endpoints []string, n int) ([]etcdSession, error) {
	var ss []etcdSession
	for range n {
		cli, err := newEtcdClient(ctx, endpoints)
		if err != nil {
			closeEtcdSessions(ss)
			return nil, err
		}
		sess, err := concurrency.NewSession(cli, concurrency.WithTTL(etcdSessionTTL), concurrency.WithContext(context.WithoutCancel(ctx)))
		if err != nil {
			cli.Close()
			closeEtcdSessions(ss)
			return nil, fmt.Errorf("etcd session: %w", err)
		}
		ss = append(ss, etcdSession{cli: cli, sess: sess})
	}
	return ss, nil
}

// closeEtcdSessions revokes every session's lease and closes its client.
func closeEtcdSessions(ss []etcdSession) {
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(func() {
			s.sess.Close()
			s.cli.Close()
		})
	}
	wg.Wait()
}

// etcdMutexRunner runs etcd's concurrency.Mutex against endpoints: one
// client and session per worker, one Mutex each on the spec's path as the
// key prefix. Uncontended, a cycle is one transaction (put the waiter's
// key, read the first one) and one delete.
func etcdMutexRunner(endpoints []string) runner {
	return func(ctx context.Context, s spec) (*Result, error) {
		ss, err := newEtcdSessions(ctx, endpoints, s.clients)
		if err != nil {
			return nil, err
		}
		defer closeEtcdSessions(ss)
		steps := make([]step, len(ss))
		for i, es := range ss {
			m := concurrency.NewMutex(es.sess, s.path+"/")
			steps[i] = lockStep(s.kind, 1, func(ctx context.Context) (func(context.Context) error, error) {
				if err := m.Lock(ctx); err != nil {
					return nil, err
				}
				return m.Unlock, nil
			})
		}
		return measure(ctx, s, steps), nil
	}
}
