package framework

import (
	"errors"

	"github.com/go-zookeeper/zk"
)

// The server's answers that callers branch on. Every error the client
// returns for such an answer matches both the framework's sentinel and
// go-zookeeper's (errors.Is(err, ErrNoNode) and errors.Is(err,
// zk.ErrNoNode) alike), as do the errors of the recipes that wrap it, so a
// caller need not import go-zookeeper to tell them apart.
var (
	ErrNoNode     = errors.New("framework: no node")
	ErrNodeExists = errors.New("framework: node exists")
	ErrBadVersion = errors.New("framework: bad version")
	ErrNotEmpty   = errors.New("framework: node has children")
	ErrNoAuth     = errors.New("framework: not authorized")
)

// zkSentinels pairs each framework sentinel with go-zookeeper's.
var zkSentinels = map[error]error{
	ErrNoNode:     zk.ErrNoNode,
	ErrNodeExists: zk.ErrNodeExists,
	ErrBadVersion: zk.ErrBadVersion,
	ErrNotEmpty:   zk.ErrNotEmpty,
	ErrNoAuth:     zk.ErrNoAuth,
}

// answerError is an error of the client's whose chain holds one of
// go-zookeeper's answers: it matches the framework's sentinel for that
// answer too. Its text is err's.
type answerError struct{ err error }

func (e answerError) Error() string { return e.err.Error() }
func (e answerError) Unwrap() error { return e.err }

func (e answerError) Is(target error) bool {
	z, ok := zkSentinels[target]
	return ok && errors.Is(e.err, z)
}

// withSentinels returns err so that it matches the framework's sentinel
// of any of go-zookeeper's answers in its chain; other errors (and nil)
// are returned as they are.
func withSentinels(err error) error {
	if err == nil {
		return nil
	}
	var already answerError
	if errors.As(err, &already) {
		return err
	}
	for _, z := range zkSentinels {
		if errors.Is(err, z) {
			return answerError{err}
		}
	}
	return err
}
