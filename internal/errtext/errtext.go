// Package errtext builds go-curator's error messages so that each carries
// one package prefix: the prefix of the package the caller imported. A
// recipe that wraps the error of a lower layer (the framework, the lock
// core, another recipe) keeps every match of that error for errors.Is and
// errors.As, and drops the lower layer's prefix from the text, so a
// message reads "semaphoremutex: acquire /x: client is not started"
// rather than "semaphoremutex: semaphorev2: acquire /x: framework: ...".
package errtext

import (
	"fmt"
	"strings"
)

// prefixes are the package names that go-curator's messages start with.
// go-zookeeper's "zk: " is not among them: it names the server's answer.
var prefixes = []string{
	"framework", "transport", "retry", "lockcore",
	"mutex", "rwlock", "semaphoremutex", "multilock", "semaphorev2",
	"barrier", "doublebarrier", "sharedcount", "atomiclong",
	"leaderlatch", "leaderselector", "cache",
}

// Errorf is fmt.Errorf, except that the text of each error operand loses
// the go-curator package prefixes it carries, wherever they stand in it,
// unless the operand opens the message (as in Errorf("%w: ...",
// ErrInvalidArgument)): that one keeps the first. Use it with a format
// that starts with the package's own prefix or with its own sentinel.
// The result wraps and matches exactly what fmt.Errorf's would.
func Errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	plain := make([]any, len(args))
	changed := false
	for i, a := range args {
		e, ok := a.(error)
		if !ok || e == nil || (i == 0 && strings.HasPrefix(format, "%")) {
			plain[i] = a
			continue
		}
		t := Trim(e.Error())
		changed = changed || t != e.Error()
		plain[i] = text(t)
	}
	if !changed {
		return err
	}
	msg := fmt.Sprintf(strings.ReplaceAll(format, "%w", "%v"), plain...)
	return &wrapped{msg: msg, err: err}
}

// Trim removes every go-curator package prefix from msg: at its start, and
// after each ": " or "(" within it.
func Trim(msg string) string {
	for _, p := range prefixes {
		p += ": "
		for strings.HasPrefix(msg, p) {
			msg = msg[len(p):]
		}
		msg = strings.ReplaceAll(msg, ": "+p, ": ")
		msg = strings.ReplaceAll(msg, "("+p, "(")
	}
	return msg
}

// Also returns err so that errors.Is and errors.As also match each of
// also, with err's message unchanged. A nil err stays nil.
func Also(err error, also ...error) error {
	if err == nil || len(also) == 0 {
		return err
	}
	return &wrapped{msg: err.Error(), err: err, also: also}
}

type text string

func (t text) Error() string { return string(t) }

// wrapped is an error with its own message over the errors it matches.
type wrapped struct {
	msg  string
	err  error
	also []error
}

func (e *wrapped) Error() string { return e.msg }

func (e *wrapped) Unwrap() []error {
	return append([]error{e.err}, e.also...)
}

// Sentinel returns a sentinel error whose text is msg and which also
// matches parent with errors.Is: a package's own name for a condition that
// a lower package names too (every package's ErrSessionLost matches
// framework.ErrSessionLost), without the lower package's text.
func Sentinel(msg string, parent error) error { return &sentinel{msg, parent} }

type sentinel struct {
	msg    string
	parent error
}

func (s *sentinel) Error() string { return s.msg }
func (s *sentinel) Unwrap() error { return s.parent }
