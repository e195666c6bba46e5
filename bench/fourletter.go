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

// fourLetter sends a four-letter word to the server at addr (host:port)
// and returns the answer. It works for servers the bench started and for
// -zk.
func fourLetter(ctx context.Context, addr, cmd string) (string, error) {
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

// totalWatches reads "Total watches:N" from every server's wchs answer and
// sums them: in an ensemble a watch lives on the server its client is
// connected to.
func totalWatches(ctx context.Context, connect string) (int64, error) {
	var total int64
	for _, addr := range strings.Split(connect, ",") {
		n, err := serverWatches(ctx, addr)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

func serverWatches(ctx context.Context, addr string) (int64, error) {
	answer, err := fourLetter(ctx, addr, "wchs")
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

// mntr returns the servers' monitoring values by name ("zk_watch_count").
// With several servers in connect (an ensemble) the integer values are
// the sums over the servers, which is what the bench reads: requests
// received from clients, the time they spent in their server, watch
// notifications sent. Other values are the first server's.
func mntr(ctx context.Context, connect string) (map[string]string, error) {
	sum := map[string]string{}
	for i, addr := range strings.Split(connect, ",") {
		m, err := serverMntr(ctx, addr)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			sum = m
			continue
		}
		for k, v := range m {
			a, err1 := strconv.ParseInt(sum[k], 10, 64)
			b, err2 := strconv.ParseInt(v, 10, 64)
			if err1 == nil && err2 == nil {
				sum[k] = strconv.FormatInt(a+b, 10)
			}
		}
	}
	return sum, nil
}

func serverMntr(ctx context.Context, addr string) (map[string]string, error) {
	answer, err := fourLetter(ctx, addr, "mntr")
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
