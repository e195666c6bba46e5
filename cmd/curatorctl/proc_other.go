//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package main

import (
	"os/exec"
	"syscall"
	"time"
)

// prepareGroup does nothing here: only the command itself is signalled.
func prepareGroup(*exec.Cmd) bool { return false }

func signalGroup(int, syscall.Signal) bool { return false }

func awaitGroup(int, time.Time) bool { return true }
