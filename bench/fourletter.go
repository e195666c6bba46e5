package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// fourLetter sends a four-letter word to the first server of connect and
// returns the answer. It works for servers the bench started and for -zk.
func fourLetter(ctx context.Context, connect, cmd string) (string, error) {
	addr, _, _ := strings.Cut(connect, ",")
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("%s to %s: %w", cmd, addr, err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	if _, err := io.WriteString(conn, cmd); err != nil {
		return "", fmt.Errorf("%s to %s: %w", cmd, addr, err)
	}
	b, err := io.ReadAll(conn)
	if err != nil && len(b) == 0 {
		return "", fmt.Errorf("%s to %s: %w", cmd, addr, err)
	}
	return string(b), nil
}

// totalWatches reads "Total watches:N" from the server's wchs answer.
func totalWatches(ctx context.Context, connect string) (int64, error) {
	answer, err := fourLetter(ctx, connect, "wchs")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(answer) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Total watches:"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("wchs: no total in %q (is 4lw.commands.whitelist set?)", answer)
}

// mntr returns the server's monitoring values by name ("zk_watch_count").
func mntr(ctx context.Context, connect string) (map[string]string, error) {
	answer, err := fourLetter(ctx, connect, "mntr")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	s := bufio.NewScanner(strings.NewReader(answer))
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), "\t")
		if ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("mntr: empty answer %q", answer)
	}
	return m, nil
}
