package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-curator/curator/examples/internal/demo"
)

// patience is how long the parent waits for a line it expects.
const patience = 30 * time.Second

// proc is one child process, and what the parent has read from it.
type proc struct {
	name   string // "updater", "watcher 2"
	stdin  io.WriteCloser
	exited bool

	replies []string       // updater: what it did, in order
	loaded  bool           // watcher: its cache is loaded
	changes map[string]int // watcher: times each change line was printed
	resyncs int            // watcher: resync lines printed
	view    []string       // watcher: its last view, "view ..." lines
	viewEnd bool           // watcher: view is complete
}

// line is one line a child printed.
type line struct {
	p    *proc
	text string
}

// exit is a child's exit status.
type exit struct {
	p   *proc
	err error
}

// procs runs the children and reads their lines on one goroutine, the
// caller's: every field of every proc is the caller's.
type procs struct {
	ctx     context.Context // ends when the caller returns; kills the children
	lines   chan line
	exits   chan exit
	running int
	closing bool // stdin is closed: the children are expected to exit
}

// spawn starts this program with args as the child named name.
func (ps *procs) spawn(name string, args ...string) (*proc, error) {
	p := &proc{name: name, changes: map[string]int{}}
	stdin, err := demo.Spawn(ps.ctx, args, func(text string) {
		select {
		case ps.lines <- line{p, text}:
		case <-ps.ctx.Done():
		}
	}, func(err error) {
		if err != nil {
			err = fmt.Errorf("%s: %w", name, err)
		}
		ps.exits <- exit{p, err} // buffered for every child
	})
	if err != nil {
		return nil, err
	}
	p.stdin = stdin
	ps.running++
	return p, nil
}

// order writes one order to p's stdin.
func (ps *procs) order(p *proc, order string) error {
	if _, err := io.WriteString(p.stdin, order+"\n"); err != nil {
		return fmt.Errorf("order %q to %s: %w", order, p.name, err)
	}
	return nil
}

// until reads and prints the children's lines until done reports true. It
// fails if a child exits before it is told to, or exits with an error, or
// if nothing new comes for a while: what was awaited did not happen.
func (ps *procs) until(what string, done func() bool) error {
	for !done() {
		select {
		case l := <-ps.lines:
			ps.read(l)
		case e := <-ps.exits:
			ps.running--
			e.p.exited = true
			if e.err != nil {
				return e.err
			}
			if !ps.closing {
				return fmt.Errorf("%s exited while waiting until %s", e.p.name, what)
			}
		case <-time.After(patience):
			return fmt.Errorf("nothing for %v while waiting until %s", patience, what)
		case <-ps.ctx.Done():
			return ps.ctx.Err()
		}
	}
	return nil
}

// read prints a child's line under its name, and keeps what it says.
func (ps *procs) read(l line) {
	p, text := l.p, l.text
	verb, _, _ := strings.Cut(text, " ")
	switch {
	case p.name == "updater":
		if verb == "set" || verb == "created" || verb == "deleted" {
			p.replies = append(p.replies, text)
		}
	case verb == "view":
		if text == "view end" {
			p.viewEnd = true
		} else {
			p.view = append(p.view, text)
		}
		return // the parent prints a summary of the view instead
	case verb == "loaded":
		p.loaded = true
	case verb == "RESYNCED":
		p.resyncs++
	case strings.HasPrefix(verb, "NODE_"):
		p.changes[text]++
	}
	fmt.Printf("  %s: %s\n", p.name, text)
}

// stop ends the children: it closes their stdin and waits until they have
// exited, each with status 0.
func (ps *procs) stop(all []*proc) error {
	ps.closing = true
	var errs []error
	for _, p := range all {
		errs = append(errs, p.stdin.Close())
	}
	return errors.Join(errors.Join(errs...), ps.until("every process exits", func() bool { return ps.running == 0 }))
}

// kill kills the children still running, and waits for them. After an
// error, the caller defers it; after stop it does nothing.
func (ps *procs) kill(cancel context.CancelFunc) {
	cancel()
	for ; ps.running > 0; ps.running-- {
		<-ps.exits
	}
}
