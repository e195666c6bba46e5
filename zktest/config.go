package zktest

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config is what a local server's zoo.cfg says about time. The server
// clamps each session timeout a client asks for to [MinSessionTimeout,
// MaxSessionTimeout] and tells the client the result in the handshake, so a
// Config can make the negotiated timeout differ from the requested one.
//
// The zero Config keeps the harness's defaults. A Config is a value; copy it
// freely.
type Config struct {
	// TickTime is ZooKeeper's unit of time; 500 ms when zero, which lets
	// sessions as short as 1 s be granted. A whole number of milliseconds,
	// as are the others.
	TickTime time.Duration
	// MinSessionTimeout is the shortest session timeout granted; when zero,
	// ZooKeeper's default of 2 × TickTime.
	MinSessionTimeout time.Duration
	// MaxSessionTimeout is the longest session timeout granted; 60 s when
	// zero (ZooKeeper's own default would be 20 × TickTime).
	MaxSessionTimeout time.Duration
	// SyncLimit is how many ticks an ensemble's follower may go without
	// hearing from its leader (and the leader from it) before it drops the
	// link; 5 when zero. A follower keeps serving its clients that long
	// while cut off from the leader or while the leader is paused.
	SyncLimit int
	// ExtraConfig is appended to every server's zoo.cfg: "key=value" lines.
	// A key given here overrides the harness's. clientPort fixes a
	// standalone server's client port, which must then be free (the harness
	// does not move a port it was given; an ensemble's servers cannot share
	// one). The other ports and the data directory must not move.
	ExtraConfig string
	// TLS, when set, makes each server also serve TLS clients, on its
	// secureClientPort: see [TLS].
	TLS *TLS
	// Reconfig makes the servers an ensemble that dynamic reconfiguration
	// can change (reconfigEnabled, standaloneEnabled=false, the members in
	// a dynamic config file), even one server alone, with [SuperUser] as
	// its super user; [Cluster.AddServer] starts servers that can join it.
	// Not with TLS.
	Reconfig bool
}

// clientPort returns the client port that ExtraConfig fixes for a cluster
// of n servers, or 0 when it leaves the port to the harness.
func (c Config) clientPort(n int) (int, error) {
	v, ok := configValue(c.ExtraConfig, "clientPort")
	if !ok {
		return 0, nil
	}
	port, err := strconv.Atoi(v)
	if err != nil || port < 1 || port > 65535 {
		return 0, fmt.Errorf("zktest: Config.ExtraConfig: clientPort=%s is not a port number", v)
	}
	if n > 1 {
		return 0, fmt.Errorf("zktest: Config.ExtraConfig sets clientPort=%d, but the %d servers of an ensemble cannot share a client port: leave clientPort to the harness", port, n)
	}
	return port, nil
}

// configValue returns the last value that cfg, zoo.cfg lines, gives key; the
// last one is the one ZooKeeper uses. It reads "key=value" and "key: value"
// lines and skips comments, as java.util.Properties does (but for line
// continuations).
func configValue(cfg, key string) (string, bool) {
	var value string
	found := false
	for line := range strings.Lines(cfg) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		end := strings.IndexAny(line, "=: \t")
		if end < 0 || line[:end] != key {
			continue
		}
		v := strings.TrimLeft(line[end:], " \t")
		if v != "" && (v[0] == '=' || v[0] == ':') {
			v = v[1:]
		}
		value, found = strings.TrimSpace(v), true
	}
	return value, found
}

// zooCfg returns the part of zoo.cfg that c sets, or an error that names
// what is wrong with c.
func (c Config) zooCfg() (string, error) {
	tick, minSession, maxSession := 500*time.Millisecond, time.Duration(0), 60*time.Second
	for _, f := range []struct {
		name string
		d    time.Duration
		set  *time.Duration
	}{
		{"TickTime", c.TickTime, &tick},
		{"MinSessionTimeout", c.MinSessionTimeout, &minSession},
		{"MaxSessionTimeout", c.MaxSessionTimeout, &maxSession},
	} {
		switch {
		case f.d < 0:
			return "", fmt.Errorf("zktest: Config.%s is negative (%v)", f.name, f.d)
		case f.d%time.Millisecond != 0:
			return "", fmt.Errorf("zktest: Config.%s is not a whole number of milliseconds (%v)", f.name, f.d)
		case f.d > 0:
			*f.set = f.d
		}
	}
	if c.SyncLimit < 0 {
		return "", fmt.Errorf("zktest: Config.SyncLimit is negative (%d)", c.SyncLimit)
	}
	if err := c.TLS.check(); err != nil {
		return "", err
	}
	effectiveMin, what := minSession, "MinSessionTimeout"
	if minSession == 0 {
		effectiveMin, what = 2*tick, "2 × TickTime, the default MinSessionTimeout,"
	}
	if effectiveMin > maxSession {
		return "", fmt.Errorf("zktest: Config: %s (%v) exceeds MaxSessionTimeout (%v)", what, effectiveMin, maxSession)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\nmaxSessionTimeout=%d\n", tick.Milliseconds(), maxSession.Milliseconds())
	if minSession > 0 {
		fmt.Fprintf(&b, "minSessionTimeout=%d\n", minSession.Milliseconds())
	}
	if c.SyncLimit > 0 {
		fmt.Fprintf(&b, "syncLimit=%d\n", c.SyncLimit)
	}
	if c.ExtraConfig != "" {
		b.WriteString(c.ExtraConfig)
		if !strings.HasSuffix(c.ExtraConfig, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}
