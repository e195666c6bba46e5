package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
	"github.com/go-curator/curator/recipes/cache"
	"github.com/go-curator/curator/recipes/discovery"
)

// The worker and client processes print one line per event for the
// coordinator: "REGISTERED <id> <uri> <session>", "LIST <id,id,...|->",
// "CALLED <id>", "FAILED <id>". They stop when their stdin closes.

// stdinClosed returns a channel closed when stdin ends: the coordinator's
// order to finish.
func stdinClosed() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	return done
}

// worker serves "hello from <id>" over HTTP on a loopback port, registers
// itself as an instance of the service, and unregisters when told to
// finish. Killed instead, its instance stays until ZooKeeper expires its
// session.
func worker(ctx context.Context, id string) error {
	env, err := demo.Setup(ctx)
	if err != nil {
		return err
	}
	client, err := demo.Start(ctx, env.Builder().SessionTimeout(workerSession))
	if err != nil {
		return err
	}
	defer client.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "hello from %s\n", id)
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	d, err := discovery.New(client, basePath)
	if err != nil {
		return err
	}
	spec, err := discovery.ParseURISpec("{scheme}://{address}:{port}/hello")
	if err != nil {
		return err
	}
	payload, err := json.Marshal(map[string]any{"pid": os.Getpid()})
	if err != nil {
		return err
	}
	reg, err := d.Register(ctx, discovery.Instance{
		Name: service, ID: id, Address: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port,
		URISpec: spec, Payload: payload,
	})
	if err != nil {
		return err
	}
	fmt.Printf("REGISTERED %s %s %#x\n", id, reg.Instance().URI(nil), client.SessionID())
	select {
	case <-stdinClosed():
	case <-ctx.Done():
	}
	return errors.Join(reg.Unregister(context.WithoutCancel(ctx)), d.Close(context.WithoutCancel(ctx)))
}

// caller finds the workers with a round-robin Provider and calls one
// every callEvery. A failed call is noted, so that an instance that fails
// twice is skipped for a while (Curator's down-instance policy); the list
// of instances is printed whenever the provider's cache changes.
func caller(ctx context.Context) error {
	env, err := demo.Setup(ctx)
	if err != nil {
		return err
	}
	client, err := env.Client(ctx, nil)
	if err != nil {
		return err
	}
	defer client.Close()
	d, err := discovery.New(client, basePath)
	if err != nil {
		return err
	}
	defer d.Close(context.WithoutCancel(ctx))
	p, err := d.NewProvider(service, discovery.WithStrategy(discovery.RoundRobin()),
		discovery.WithDownPolicy(discovery.DownPolicy{Timeout: 2 * time.Second, Threshold: 2}))
	if err != nil {
		return err
	}
	defer p.Close()

	var mu sync.Mutex
	registered := map[string]bool{}
	var out sync.Mutex // one line at a time on stdout
	printf := func(format string, args ...any) {
		out.Lock()
		fmt.Printf(format, args...)
		out.Unlock()
	}
	p.AddListener(func(ev discovery.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch ev.Type {
		case cache.NodeAdded:
			registered[ev.Instance.ID] = true
		case cache.NodeRemoved:
			delete(registered, ev.Instance.ID)
		case cache.Initialized:
		default:
			return
		}
		list := make([]string, 0, len(registered))
		for id := range registered {
			list = append(list, id)
		}
		slices.Sort(list)
		if len(list) == 0 {
			list = []string{"-"}
		}
		printf("LIST %s\n", strings.Join(list, ","))
	})
	if err := p.Start(ctx); err != nil {
		return err
	}

	web := &http.Client{Timeout: time.Second}
	stop := stdinClosed()
	tick := time.NewTicker(callEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		in, err := p.Instance()
		if errors.Is(err, discovery.ErrNoInstance) {
			continue
		}
		if err != nil {
			return err
		}
		resp, err := web.Get(in.URI(nil))
		if err == nil {
			var line string
			line, err = bufio.NewReader(resp.Body).ReadString('\n')
			resp.Body.Close()
			if err == nil && line != "hello from "+in.ID+"\n" {
				err = fmt.Errorf("%s answered %q", in.ID, line)
			}
		}
		if err != nil {
			p.NoteError(in)
			printf("FAILED %s\n", in.ID)
			continue
		}
		printf("CALLED %s\n", in.ID)
	}
}
