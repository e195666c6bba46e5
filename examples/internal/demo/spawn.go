package demo

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
)

// Spawn starts this program again with args, as one of a demo's worker
// processes; ctx's end kills it. Each line the child prints is passed to
// line, and then the child's exit status (cmd.Wait's error) to exited,
// both on a goroutine of Spawn's own, which ends with the child. The
// child's stderr is this process's. The returned writer is the child's
// stdin; closing it tells a child that reads orders there to finish.
func Spawn(ctx context.Context, args []string, line func(string), exited func(error)) (io.WriteCloser, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line(sc.Text())
		}
		exited(cmd.Wait())
	}()
	return stdin, nil
}
