//go:build linux

package zktest

import "syscall"

// sysProcAttr puts a server in its own process group, so that stopping it
// reaches every process it started, and has the kernel kill it if the thread
// that started it dies, so that no JVM outlives the Go process.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
