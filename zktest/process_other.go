//go:build !unix

package zktest

import (
	"context"
	"errors"
)

// process is the backend of a local server. Outside Unix it cannot run: the
// harness needs process groups to stop a JVM and all it started.
type process struct {
	java    string
	args    []string
	dir     string
	logPath string

	addr      string
	jarsFrom  string
	fixedPort bool
}

// ownerFile, in a cluster's temporary directory, holds the pid of the Go
// process that made it.
const ownerFile = "owner.pid"

// sweepStale does nothing outside Unix.
func sweepStale() {}

var errNoUnix = errors.New("local ZooKeeper servers need a Unix system")

func (p *process) start(context.Context) (<-chan struct{}, error) { return nil, errNoUnix }
func (p *process) stop(bool) error                                { return nil }
func (p *process) logTail() string                                { return "" }
func (p *process) explain() error                                 { return nil }
func (p *process) pid() int                                       { return 0 }
func (p *process) pause(bool) error                               { return errNoUnix }
func (p *process) close() error                                   { return nil }
