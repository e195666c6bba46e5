//go:build unix && !linux

package zktest

import "syscall"

// sysProcAttr puts a server in its own process group, so that stopping it
// reaches every process it started. Only Linux can also kill it when the Go
// process dies; elsewhere Cluster.Close must run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
