//go:build linux || darwin || freebsd || netbsd || openbsd

package main

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
	"unsafe"
)

// prepareGroup makes cmd, once started, the leader of a process group of
// its own, so that stopping it stops what it started too (the job a
// script runs), as timeout(1) does; it reports whether it did. When
// curatorctl runs in the foreground of a terminal, cmd stays in its job's
// group instead, so that it can read the terminal and gets the terminal's
// Ctrl-C with the rest of the job; then only cmd itself is signalled (as
// timeout --foreground).
func prepareGroup(cmd *exec.Cmd) bool {
	if fg, err := foregroundGroup(0); err == nil && fg == syscall.Getpgrp() {
		return false
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return true
}

// foregroundGroup returns the foreground process group of the terminal
// open on fd, or an error if fd is not a terminal.
func foregroundGroup(fd int) (int, error) {
	var pgid int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), uintptr(syscall.TIOCGPGRP), uintptr(unsafe.Pointer(&pgid))); errno != 0 {
		return 0, errno
	}
	return int(pgid), nil
}

// signalGroup sends sig to the process group that pid leads, and reports
// whether any process of it was there to get it.
func signalGroup(pid int, sig syscall.Signal) bool {
	return !errors.Is(syscall.Kill(-pid, sig), syscall.ESRCH)
}

// awaitGroup waits until no process of the group pid leads is left, or
// until deadline, and reports whether the group is gone.
func awaitGroup(pid int, deadline time.Time) bool {
	for signalGroup(pid, 0) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
